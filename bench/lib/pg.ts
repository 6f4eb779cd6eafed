import pg from 'pg';
import { migrate } from '../../src/db/migrate.js';

/** The PostgreSQL server the bench uses: DATABASE_URL's server, else the local one (trust auth). */
export function adminUrl(): string {
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const u = new URL(base);
  u.pathname = '/postgres';
  return u.toString();
}

export function urlFor(db: string): string {
  const u = new URL(adminUrl());
  u.pathname = `/${db}`;
  return u.toString();
}

export async function adminQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<T>> {
  const c = new pg.Client({ connectionString: adminUrl() });
  await c.connect();
  try { return await c.query<T>(sql, params); } finally { await c.end(); }
}

/** A database created from scratch and migrated with the project's own migrations. */
export async function createBenchDatabase(name: string): Promise<string> {
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${name}"`);
  const url = urlFor(name);
  await migrate(url);
  return url;
}

export async function dropBenchDatabase(name: string): Promise<void> {
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
}

/** Runs `fn` with one short-lived client on `url`. */
export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try { return await fn(c); } finally { await c.end(); }
}

/**
 * SQL text of `n` base62-shaped 10-character bill ids with a prefix letter (hex digits are a
 * subset of base62), so seeded bills look like the service's own to any id check.
 */
export const seededBillId = (prefix: string, expr: string): string => `'${prefix}' || lpad(to_hex(${expr}), 9, '0')`;

/**
 * A checkpoint before each measured figure, so every figure (bare or service) starts in the same
 * phase of PostgreSQL's checkpoint cycle. Right after a checkpoint, the first change of each page
 * writes the whole page to the WAL (full-page writes): a figure that ran into the timed checkpoint
 * (every 5 minutes by default) paid for several times the WAL of one that did not. A timed
 * checkpoint can still start during a figure; this only keeps the bench from lining them up.
 * `BENCH_CHECKPOINT=0` leaves it out; a role without the right to CHECKPOINT goes on without it.
 */
let checkpoints = process.env.BENCH_CHECKPOINT !== '0';
export async function checkpoint(): Promise<void> {
  if (!checkpoints) return;
  try {
    await adminQuery('CHECKPOINT');
  } catch (e) {
    // A role without superuser or pg_checkpoint: the run goes on without them, and says so once.
    checkpoints = false;
    process.stdout.write(`  (no checkpoint before each figure: ${(e as Error).message})\n`);
  }
}
