import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runningPort } from './embedded.js';

/**
 * Embedded profile with `npm start` already running: a second embedded PostgreSQL cannot start
 * on the same data directory, so a command of the same checkout (the operator CLI, db:migrate,
 * a worker) joins the running one, on whichever port it took, with the profile's generated
 * secrets and its private-URL default. Nothing changes when DATABASE_URL is set.
 */
export async function joinRunningEmbedded(): Promise<void> {
  const { readDotEnv } = await import('../config.js');
  const env = { ...readDotEnv(), ...process.env };
  if (env.DATABASE_URL) return;
  const dataDir = env.DATA_DIR || './.data';
  const secretsFile = join(dataDir, 'secrets.json');
  if (!existsSync(join(dataDir, 'pg', 'postmaster.pid')) || !existsSync(secretsFile)) return;
  // The port the running server took (a fallback one when the usual was busy), from its
  // postmaster.pid; EMBEDDED_PG_PORT when that cannot be read.
  const port = runningPort(join(dataDir, 'pg')) ?? Number(env.EMBEDDED_PG_PORT || 54320);
  // The embedded server's fixed password (src/db/embedded.ts); it listens on loopback only.
  const url = `postgresql://postgres:embedded@127.0.0.1:${port}/payments`;
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
  } catch {
    return; // not running: boot() starts it
  } finally {
    await c.end().catch(() => {});
  }
  const secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>;
  process.env.DATABASE_URL = url;
  process.env.ADMIN_API_TOKEN = env.ADMIN_API_TOKEN || secrets.ADMIN_API_TOKEN;
  process.env.TOKEN_ENCRYPTION_KEY = env.TOKEN_ENCRYPTION_KEY || secrets.TOKEN_ENCRYPTION_KEY;
  process.env.ALLOW_PRIVATE_WEBHOOK_URLS = env.ALLOW_PRIVATE_WEBHOOK_URLS || 'true';
  process.env.ALLOW_PRIVATE_PROVIDER_URLS = env.ALLOW_PRIVATE_PROVIDER_URLS || 'true';
}

