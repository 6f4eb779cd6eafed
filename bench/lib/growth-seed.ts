/**
 * The growth bench's history: N bills, N payments (each credited through the ledger: a transfer
 * and its entry), N payout requests and N payouts, spread over MERCHANTS merchants and the last
 * 365 days, so the ledger entries and payments fill the 13 monthly partitions of a year-old
 * service (12 full months and this one).
 *
 * Seeded with INSERT ... SELECT FROM generate_series in batches of SEED_BATCH rows, one
 * transaction per batch, into the migrated schema as it is: no index or constraint is dropped, so
 * every index is maintained row by row as the service's own writes maintain it (not rebuilt and
 * freshly packed, which would flatter the reads), and every CHECK holds. Like pg_restore
 * --disable-triggers, the seeding session runs with session_replication_role = replica, which
 * skips row triggers and so the per-row foreign-key checks: the rows are consistent by
 * construction, the one trigger with an effect on insert (payments -> payment_keys) is done by
 * an INSERT of its own, and verifySeed() checks every skipped reference afterwards with
 * anti-joins. synchronous_commit is off for the session: it changes no stored byte.
 */
import { statfsSync } from 'node:fs';
import { seededBillId, withClient } from './pg.js';

/** Rows per transaction: big enough that per-statement overhead vanishes, small enough for the WAL. */
export const SEED_BATCH = 500_000;
/**
 * Row n is (n * STRIDE) mod 525,600 minutes old (525,600 minutes = 365 days): STRIDE is prime to
 * 525,600, so consecutive rows land ~5.5 days apart and any size, 1,000 rows included, fills the
 * whole year (and each monthly partition) evenly, as a year of traffic would.
 */
const YEAR_MIN = 525_600;
const STRIDE = 7919;

export interface SeedTenant { merchantId: string; shopId: string }

/** The month partitions of the last year and this month, as a service running that long has them. */
export async function createPastMonths(url: string): Promise<void> {
  await withClient(url, async (c) => {
    await c.query(`SELECT create_month_partition(t, (date_trunc('month', now() AT TIME ZONE 'UTC') - k * interval '1 month')::date)
                     FROM unnest(ARRAY['payments', 'ledger_entries', 'outbox_events', 'delivery_attempts']) t, generate_series(0, 12) k`);
  });
}

/** Rows n in [from, to] of every seeded table, batch by batch; `progress` after each batch. */
export async function seedHistory(url: string, ts: SeedTenant[], from: number, to: number, progress: (done: number, rowsPerS: number) => void): Promise<void> {
  await withClient(url, async (c) => {
    await c.query(`SET synchronous_commit = off`);
    await c.query(`SET session_replication_role = replica`);
    // One instant for the whole seeding, so a transfer and its entry get the same created_at.
    const at = (await c.query<{ at: string }>(`SELECT now()::text AS at`)).rows[0]!.at;
    const m = ts.map((t) => t.merchantId);
    const s = ts.map((t) => t.shopId);
    for (let lo = from; lo <= to; lo += SEED_BATCH) {
      const hi = Math.min(to, lo + SEED_BATCH - 1);
      const t0 = Date.now();
      await c.query('BEGIN');
      await seedBatch(c, m, s, lo, hi, at);
      await c.query('COMMIT');
      progress(hi - from + 1, Math.round((hi - lo + 1) / ((Date.now() - t0) / 1000)));
    }
    await c.query(`SET session_replication_role = origin`);
    await verifySeed(c);
    await c.query('ANALYZE');
  });
}

/** Every reference whose per-row check the seeding skipped, checked at once; throws on the first gap. */
async function verifySeed(c: Q): Promise<void> {
  const checks: Array<[string, string]> = [
    ['payments without their bill', `SELECT count(*) FROM payments p WHERE NOT EXISTS (SELECT 1 FROM bills b WHERE b.id = p.bill_id)`],
    ['payments without their payment_keys row', `SELECT count(*) FROM payments p WHERE NOT EXISTS (SELECT 1 FROM payment_keys k WHERE k.id = p.id AND k.created_at = p.created_at)`],
    ['payment_keys without a payment', `SELECT (SELECT count(*) FROM payment_keys) - (SELECT count(*) FROM payments)`],
    ['ledger entries without their transfer', `SELECT count(*) FROM ledger_entries e WHERE NOT EXISTS (SELECT 1 FROM ledger_transfers t WHERE t.id = e.transfer_id AND t.created_at = e.created_at)`],
    ['ledger entries on an account that does not exist', `SELECT count(*) FROM ledger_entries e WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = e.debit_account)
                                                              OR NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = e.credit_account)`],
    ['payouts without their request', `SELECT count(*) FROM payouts p WHERE NOT EXISTS (SELECT 1 FROM payout_requests r WHERE r.id = p.request_id)`],
    ['rows of an unknown merchant or shop', `SELECT (SELECT count(*) FROM bills b WHERE NOT EXISTS (SELECT 1 FROM shops s WHERE s.id = b.shop_id AND s.merchant_id = b.merchant_id))
                                                  + (SELECT count(*) FROM payouts p WHERE NOT EXISTS (SELECT 1 FROM merchants m WHERE m.id = p.merchant_id))`],
  ];
  for (const [what, sql] of checks) {
    const n = Number((await c.query(`SELECT (${sql})::bigint AS n`)).rows[0]!.n);
    if (n !== 0) throw new Error(`seeding broke a reference: ${n} ${what}`);
  }
}

type Q = { query: (sql: string, params?: unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }> };

async function seedBatch(c: Q, m: string[], s: string[], from: number, to: number, at: string): Promise<void> {
  const ago = (extra: string) => `$4::timestamptz - ((n::bigint * ${STRIDE}) % ${YEAR_MIN}) * interval '1 minute' - interval '${extra}'`;
  const merchant = `($1::text[])[1 + n % array_length($1::text[], 1)]`;
  const shop = `($5::text[])[1 + n % array_length($5::text[], 1)]`;
  // $1 merchants, $2..$3 the rows, $4 the seeding instant, $5 shops (only where used: an unused
  // parameter has no type).
  const p = [m, from, to, at];
  const ps = [...p, s];
  const series = `FROM generate_series($2::int, $3::int) n`;
  await c.query(
    `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type, status, created_at, updated_at)
     SELECT ${seededBillId('G', 'n')}, ${merchant}, ${shop}, 100.00, 'RUB', 'NORMAL', 'SUCCESS', ${ago('1 second')}, $4::timestamptz ${series}`, ps);
  await c.query(
    `INSERT INTO payout_requests (id, merchant_id, order_id, request_hash, created_at)
     SELECT 'GR' || n, ${merchant}, 'seed-' || n, 'seed', ${ago('1 day')} ${series}`, p);
  await c.query(
    `INSERT INTO payouts (id, merchant_id, request_id, order_id, kind, status, account_type, account_masked, amount, commission, created_at, updated_at, finished_at)
     SELECT 'GP' || n, ${merchant}, 'GR' || n, 'seed-' || n, 'PERSONAL', 'SUCCESS', 'CARD', '411111******1111', 1, 0,
            ${ago('1 day')}, $4::timestamptz, $4::timestamptz ${series}`, p);
  // Each bill paid once; each payment credited through the ledger (a transfer and its entry at
  // the payment's creation time, acquirer clearing -> the merchant's available), and the
  // balances moved by the same sums, so GET /admin/v1/ledger/verify still holds afterwards.
  await c.query(
    `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, amount_received, bill_currency, account_currency,
                           account_amount, created_at, updated_at, finished_at)
     SELECT 'GY' || n, ${seededBillId('G', 'n')}, ${merchant}, ${shop}, 'SUCCESS', 'BANK_CARD', 100.00, 100.00,
            'RUB', 'RUB', 100.00, ${ago('1 second')}, $4::timestamptz, $4::timestamptz ${series}`, ps);
  // What payments' payments_keys_insert trigger writes (row triggers are off in this session).
  await c.query(`INSERT INTO payment_keys (id, created_at) SELECT 'GY' || n, ${ago('1 second')} ${series} WHERE $1::text[] IS NOT NULL`, p);
  await c.query(
    `INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id, created_at)
     SELECT 'PAYMENT_CREDIT:GY' || n, 'PAYMENT_CREDIT', 'payment', 'GY' || n, ${merchant}, ${ago('1 second')} ${series}`, p);
  await c.query(
    `INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount, created_at)
     SELECT 'PAYMENT_CREDIT:GY' || n, 1, 'RUB', 'RUB:acquirer_clearing:sandbox', 'RUB:merchant:' || ${merchant} || ':available', 100.00,
            ${ago('1 second')} ${series}`, p);
  await c.query(
    `UPDATE balances b SET available = b.available + x.v, updated_at = now()
       FROM (SELECT ${merchant} AS merchant_id, sum(100.00) AS v ${series} GROUP BY 1) x
      WHERE b.merchant_id = x.merchant_id AND b.currency = 'RUB'`, [m, from, to]);
}

/** Bytes free on the file system of PostgreSQL's data directory. */
export async function freeBytes(url: string): Promise<number | null> {
  const dir = await withClient(url, async (c) => (await c.query<{ d: string }>(`SELECT current_setting('data_directory') AS d`)).rows[0]!.d);
  try {
    const st = statfsSync(dir);
    return st.bavail * st.bsize;
  } catch {
    return null; // another machine's PostgreSQL: its disk is not ours to see
  }
}

export async function databaseBytes(url: string): Promise<number> {
  return withClient(url, async (c) => Number((await c.query<{ b: string }>(`SELECT pg_database_size(current_database())::text AS b`)).rows[0]!.b));
}
