// A test-only process: the service's pool (src/db/client.ts) on DATABASE_URL takes one
// connection and runs one query on it, then prints what it saw as one JSON line and stays up
// a moment, so a test sees whether anything that reached the connection meanwhile ended it.
import { createDb } from '../../src/db/client.js';
import { isDatabaseUnavailable } from '../../src/db/database-error.js';

const db = createDb(process.env.DATABASE_URL!, { max: 1 });
const seen: { connected: boolean; query: 'ok' | 'unavailable' | string } = { connected: false, query: 'not run' };
try {
  const c = await db.pool.connect();
  seen.connected = true;
  try {
    await c.query('SELECT 1');
    seen.query = 'ok';
  } catch (e) {
    seen.query = isDatabaseUnavailable(e) ? 'unavailable' : `failed: ${(e as Error).message}`;
  } finally {
    c.release();
  }
} catch (e) {
  seen.query = `connect failed: ${(e as Error).message}`;
}
// Time is the subject: the moment in which a late 'error' event would end the process.
await new Promise((r) => setTimeout(r, 300));
process.stdout.write(`${JSON.stringify(seen)}\n`);
await db.close();
