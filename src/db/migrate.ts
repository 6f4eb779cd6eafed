import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { connectClient } from './connect.js';

export const MIGRATIONS_DIR = join(import.meta.dirname, '..', '..', 'prisma', 'migrations');
/** Any constant; every process that migrates takes this advisory lock first. */
const LOCK_KEY = 727_272_001;

export interface Migration { name: string; sql: string; checksum: string }

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^\d{14}_/.test(d.name))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

// The same table `prisma migrate deploy` keeps, so `prisma migrate status` agrees with us.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Applies pending migrations, each in its own transaction that first takes a transaction-level
 * advisory lock and re-reads what is applied, so two processes starting at once apply each
 * migration exactly once. Nothing is kept in the session (no session lock, no SET), so it works
 * through PgBouncer in transaction pooling mode as well as directly.
 * Returns the names applied. Refuses to run when an applied migration's file changed.
 */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<string[]> {
  const client = connectClient(databaseUrl);
  await client.connect();
  const applied: string[] = [];
  const inLockedTx = async <T>(fn: () => Promise<T>): Promise<T> => {
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL client_min_messages = warning');
      await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
      const out = await fn();
      await client.query('COMMIT');
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    }
  };
  const appliedChecksums = async () => {
    const done = await client.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    return new Map(done.rows.map((r) => [r.migration_name, r.checksum]));
  };
  try {
    const initial = await inLockedTx(async () => {
      await client.query(CREATE_TABLE);
      return appliedChecksums();
    });
    for (const m of listMigrations(dir)) {
      const prev = initial.get(m.name);
      if (prev !== undefined) {
        if (prev !== m.checksum) throw new Error(`migration ${m.name} was changed after it was applied`);
        continue;
      }
      const didApply = await inLockedTx(async () => {
        // Another process may have applied it while this one waited for the lock.
        if ((await appliedChecksums()).has(m.name)) return false;
        try {
          await client.query(m.sql);
        } catch (e) {
          throw new Error(`migration ${m.name} failed: ${(e as Error).message}`);
        }
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        return true;
      });
      if (didApply) applied.push(m.name);
    }
  } finally {
    await client.end().catch(() => {});
  }
  return applied;
}

/** True when every migration on disk is applied (the /ready check). */
export async function migrationsCurrent(q: { query: pg.Pool['query'] }, names = listMigrations().map((m) => m.name)): Promise<boolean> {
  try {
    const r = await q.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL AND migration_name = ANY($1)',
      [names],
    );
    return Number(r.rows[0]?.n) === names.length;
  } catch {
    return false;
  }
}
