import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { startEmbeddedPostgres, type EmbeddedHandle } from '../../src/db/embedded.js';
import { findAdminUrl, withDatabase } from './pg-server.js';
import { startPgBouncer, type PgBouncerHandle } from './pgbouncer.js';

let embedded: EmbeddedHandle | null = null;
let pgbouncer: PgBouncerHandle | null = null;

function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}

/**
 * Builds one migrated template database per set of migrations; every test file clones it
 * (CREATE DATABASE ... TEMPLATE), which takes milliseconds.
 */
export async function setup({ provide }: { provide: (k: string, v: string) => void }) {
  let adminUrl = await findAdminUrl();
  if (!adminUrl) {
    mkdirSync('.data', { recursive: true });
    embedded = await startEmbeddedPostgres({ dir: '.data/test-pg', port: 54329 });
    adminUrl = embedded.adminUrl;
  }
  const hash = createHash('sha256').update(listMigrations().map((m) => m.checksum).join()).digest('hex').slice(0, 12);
  const template = `pay_tpl_${hash}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock(727272002)');
    // Leftovers of interrupted runs: test databases whose creating process is gone
    // (names carry the pid; other test runs on this machine may be in flight).
    const stale = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'pay\\_t\\_%'`);
    for (const r of stale.rows) {
      const pid = Number(/^pay_t_(\d+)_/.exec(r.datname)?.[1]);
      if (pid && isAlive(pid)) continue;
      await admin.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
    }
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${template}_building"`).catch(async () => {
        await admin.query(`DROP DATABASE "${template}_building" WITH (FORCE)`);
        await admin.query(`CREATE DATABASE "${template}_building"`);
      });
      await migrate(withDatabase(adminUrl, `${template}_building`));
      await admin.query(`ALTER DATABASE "${template}_building" RENAME TO "${template}"`);
    }
    await admin.query('SELECT pg_advisory_unlock(727272002)');
  } finally {
    await admin.end();
  }
  provide('adminUrl', adminUrl);
  provide('templateDb', template);
  // TEST_PGBOUNCER=1: every test database is reached through PgBouncer in transaction pooling
  // mode (databases are still created and dropped directly).
  if (process.env.TEST_PGBOUNCER === '1') {
    pgbouncer = await startPgBouncer(adminUrl);
    provide('appServerUrl', pgbouncer.via(adminUrl));
  } else {
    provide('appServerUrl', adminUrl);
  }
}

export async function teardown() {
  if (pgbouncer) await pgbouncer.stop();
  if (embedded) await embedded.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    templateDb: string;
    /** The server URL the service under test connects to: the admin URL, or PgBouncer's. */
    appServerUrl: string;
  }
}
