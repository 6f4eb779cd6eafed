import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

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
 * Applies pending migrations, each in its own transaction, under a session advisory lock so
 * that two processes starting at once apply each migration exactly once.
 * Returns the names applied. Refuses to run when an applied migration's file changed.
 */
export async function migrate(url: string, dir = MIGRATIONS_DIR): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('SET client_min_messages = warning');
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(CREATE_TABLE);
    const done = await client.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const byName = new Map(done.rows.map((r) => [r.migration_name, r.checksum]));
    for (const m of listMigrations(dir)) {
      const prev = byName.get(m.name);
      if (prev !== undefined) {
        if (prev !== m.checksum) throw new Error(`migration ${m.name} was changed after it was applied`);
        continue;
      }
      const id = randomUUID();
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [id, m.checksum, m.name],
        );
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`migration ${m.name} failed: ${(e as Error).message}`);
      }
      applied.push(m.name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
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
