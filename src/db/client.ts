import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { clientClassFor, parseDatabaseUrl } from './connect.js';

// NUMERIC comes back as a string (never a float); BIGINT too.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export type Prisma = PrismaClient;
export type Tx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

/** One pool shared by Prisma (through the pg adapter) and the hot paths' plain SQL. */
export interface Db {
  pool: pg.Pool;
  /**
   * Prisma Client, created at the first read of this property and kept for the life of the
   * process. Only cold paths read it (operator API, cabinet, console, workers' rare steps, the
   * CLI): creating it costs about 15 MB of heap (the query parameterization graph it decodes)
   * and its first query loads the WebAssembly query compiler (about 20 MB more), which a
   * process that serves only the hot paths never pays (docs/adr/0142-prisma-created-at-first-use.md).
   */
  readonly prisma: PrismaClient;
  /** Whether `prisma` has been read yet (the client exists). */
  prismaCreated(): boolean;
  close(): Promise<void>;
}

export function createDb(databaseUrl: string, opts: { max?: number } = {}): Db {
  const target = parseDatabaseUrl(databaseUrl);
  const pool = new pg.Pool({
    connectionString: target.url, max: opts.max ?? 20, Client: clientClassFor(target),
    // TCP keepalives find a connection whose server vanished without closing it (a lost machine).
    // No connect timeout here: with one (pg-pool's connectionTimeoutMillis, or each client's), a
    // worker stopped delivering for good after a PostgreSQL restart
    // (test/reliability/postgres-restart.test.ts). With a host list, the probe's own 3 s
    // timeouts bound the choice of a host (src/db/connect.ts).
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // A dropped server connection must not crash the process: idle clients report through the
  // pool, checked-out ones through their own 'error' event (unhandled, it would kill the
  // process when PostgreSQL restarts mid-request). The query in flight fails, the pool
  // discards the client, and the next request gets a fresh connection.
  pool.on('error', () => {});
  pool.on('connect', (client) => { client.on('error', () => {}); });
  let prisma: PrismaClient | undefined;
  return {
    pool,
    get prisma() {
      return prisma ??= new PrismaClient({ adapter: new PrismaPg(pool) });
    },
    prismaCreated: () => prisma !== undefined,
    async close() {
      await prisma?.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
    },
  };
}

/** Anything that runs SQL, inside a transaction or not (a pg PoolClient or the pool). */
export type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * A step a caller hands a service to run inside the service's transaction, after the change and
 * before the commit (e.g. the Idempotency-Key answer, so it commits with what it answers).
 */
export type InTx<T> = (c: Queryable, result: T) => Promise<void>;

/** Runs `fn` in one transaction on a pooled client (plain SQL path). */
/** `fn` in the caller's transaction when one is given, else in a transaction of its own. */
export function inTxOr<T>(pool: pg.Pool, tx: Queryable | undefined, fn: (c: Queryable) => Promise<T>): Promise<T> {
  return tx ? fn(tx) : withPgTx(pool, fn);
}

export async function withPgTx<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const out = await fn(c);
    await c.query('COMMIT');
    return out;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}

/**
 * A Prisma interactive transaction seen as a `Queryable`, so an `InTx` step written in plain
 * SQL (the audit entry) runs inside a service's Prisma transaction. Statements only: the
 * rows of a SELECT are not returned.
 */
export function prismaTxQueryable(tx: Tx): Queryable {
  return {
    query: async (text: string, values: unknown[] = []) => {
      const n = await tx.$executeRawUnsafe(text, ...values);
      return { rows: [], rowCount: n };
    },
  } as unknown as Queryable;
}
