import type pg from 'pg';
import { withPgTx } from './client.js';

/**
 * Monthly partitions (docs/adr/0047-monthly-partitions-and-retention.md): payments, ledger entries,
 * outbox events and delivery attempts are RANGE partitioned by their creation time in UTC
 * calendar months (migration 20261124090000_monthly_partitions). The service keeps the current
 * month and `monthsAhead` more created (at boot and every hour); a row of a month that has no
 * partition lands in the table's DEFAULT partition and is moved into its month when that month
 * is created. Retention drops whole months of outbox events (and of delivery attempts) once
 * every event in them is delivered or dead for longer than the retention period.
 *
 * Every call runs in one transaction under a transaction-level advisory lock (nothing kept in
 * the session, so it works through PgBouncer), so any number of processes may call it at once.
 */
export const PARTITIONED_TABLES = ['payments', 'ledger_entries', 'outbox_events', 'delivery_attempts'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** Any constant; the migrator uses 727_272_001. */
const LOCK_KEY = 727_272_003;
/** DDL waits at most this long for a lock (a long transaction on a table): the next tick retries. */
const LOCK_TIMEOUT = '5s';

/** The first day (UTC) of the month `offset` months after the one holding `at`, as YYYY-MM-DD. */
export function monthStart(at: Date, offset = 0): string {
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
  return d.toISOString().slice(0, 10);
}

/** The partition holding `month` (YYYY-MM-DD, the first of a month) of `table`. */
export function partitionName(table: PartitionedTable, month: string): string {
  return `${table}_p${month.slice(0, 4)}_${month.slice(5, 7)}`;
}

function inLockedTx<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  return withPgTx(pool, async (c) => {
    await c.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    await c.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    return fn(c);
  });
}

/**
 * Creates the missing month partitions of every partitioned table from the month of `now`
 * through `monthsAhead` months later; returns the names created (none when all exist, and then
 * no DDL runs and no table lock is taken).
 */
export async function ensurePartitions(pool: pg.Pool, monthsAhead: number, now = new Date()): Promise<string[]> {
  const wanted: Array<[PartitionedTable, string]> = [];
  for (const t of PARTITIONED_TABLES) for (let i = 0; i <= monthsAhead; i++) wanted.push([t, monthStart(now, i)]);
  const missing = async (q: pg.Pool | pg.PoolClient) => {
    const r = await q.query<{ name: string }>(
      `SELECT n AS name FROM unnest($1::text[]) n WHERE to_regclass(format('public.%I', n)) IS NULL`,
      [wanted.map(([t, m]) => partitionName(t, m))],
    );
    const names = new Set(r.rows.map((x) => x.name));
    return wanted.filter(([t, m]) => names.has(partitionName(t, m)));
  };
  if ((await missing(pool)).length === 0) return [];
  return inLockedTx(pool, async (c) => {
    const created: string[] = [];
    for (const [t, m] of await missing(c)) {
      const r = await c.query<{ created: boolean }>('SELECT create_month_partition($1, $2::date) AS created', [t, m]);
      if (r.rows[0]?.created) created.push(partitionName(t, m));
    }
    return created;
  });
}

interface MonthPartition { name: string; month: string; upper: Date }

/** The month partitions of `table`, oldest first (the DEFAULT partition is not one). */
async function monthPartitions(q: pg.Pool | pg.PoolClient, table: PartitionedTable): Promise<MonthPartition[]> {
  const r = await q.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = format('public.%I', $1::text)::regclass AND c.relname ~ '_p[0-9]{4}_[0-9]{2}$' ORDER BY 1`,
    [table],
  );
  return r.rows.map(({ name }) => {
    const [, y, m] = /_p(\d{4})_(\d{2})$/.exec(name)!;
    return { name, month: `${y}-${m}-01`, upper: new Date(Date.UTC(Number(y), Number(m), 1)) };
  });
}

// A month of events may go when none of its events is PENDING and none was active (created,
// delivered, or due for an attempt) after the cutoff.
const EVENTS_EXPIRED = (p: string) => `SELECT NOT EXISTS (
  SELECT 1 FROM "${p}" WHERE status = 'PENDING' OR greatest(created_at, delivered_at, next_attempt_at) >= $1)`;
// A month of delivery attempts may go when it is older than the cutoff and none of its attempts
// belongs to an event still stored (an event's attempts outlive it, never the other way).
const ATTEMPTS_EXPIRED = (p: string) => `SELECT NOT EXISTS (
  SELECT 1 FROM "${p}" a WHERE a.attempted_at >= $1 OR EXISTS (SELECT 1 FROM outbox_events e WHERE e.id = a.event_id))`;

/**
 * Retention: drops each month partition of outbox_events whose month ended before the cutoff
 * (`now` - `retentionDays`) and in which every event is DELIVERED or DEAD with nothing done after
 * the cutoff; then each such month of delivery_attempts none of whose attempts belongs to an
 * event still stored. A month holding one PENDING event (or one redelivered meanwhile) stays.
 * The check is repeated under an exclusive lock of the partition, so an operator's redelivery
 * racing with it either happens before (and the month stays) or waits for the drop.
 * The dedupe keys (outbox_event_keys) stay: an aggregate never gets a second event of a kind.
 * Returns the partitions dropped.
 */
export async function dropExpiredOutbox(pool: pg.Pool, retentionDays: number, now = new Date()): Promise<string[]> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  const dropped: string[] = [];
  for (const [table, expired] of [['outbox_events', EVENTS_EXPIRED], ['delivery_attempts', ATTEMPTS_EXPIRED]] as const) {
    for (const p of await monthPartitions(pool, table)) {
      if (p.upper > cutoff) break;
      // A cheap look first, without a lock; then again under the lock before dropping.
      if (!(await pool.query<{ ok: boolean }>(`${expired(p.name)} AS ok`, [cutoff])).rows[0]!.ok) continue;
      const done = await inLockedTx(pool, async (c) => {
        await c.query(`LOCK TABLE "${p.name}" IN ACCESS EXCLUSIVE MODE`);
        if (!(await c.query<{ ok: boolean }>(`${expired(p.name)} AS ok`, [cutoff])).rows[0]!.ok) return false;
        await c.query(`ALTER TABLE "${table}" DETACH PARTITION "${p.name}"`);
        await c.query(`DROP TABLE "${p.name}"`);
        return true;
      });
      if (done) dropped.push(p.name);
    }
  }
  return dropped;
}
