/**
 * npm run bench:growth: bill/status, bill/search, the payment (the page's POST /pay) and payout
 * creation timed with a growing history: at each size N, N bills, N payments (each credited
 * through the ledger: N transfers, N ledger entries), N payouts (and payout requests), seeded
 * with generate_series over the last 365 days into the monthly partitions (the service's own
 * months, created for the year before seeding, as a service running that long would have).
 * Sizes: GROWTH_SIZES (comma-separated, default 1000,100000); GROWTH_1M=1 or --1m adds 1M;
 * the full run is GROWTH_SIZES=1000,100000,1000000,10000000 (docs/performance.md "Growth").
 * Each size: a short autocannon run per endpoint through the real service, and EXPLAIN
 * (ANALYZE, BUFFERS) of the query shapes that carry them, to show the cost is held by an index
 * (and by partition pruning), not by table size.
 * Writes bench/results/growth-<timestamp>.json/.md and growth-latest.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBenchDatabase, dropBenchDatabase, seededBillId, withClient } from './lib/pg.js';
import { load, type LoadResult, type LoadSpec } from './lib/load.js';
import { ROOT, startChild } from './lib/proc.js';
import { serviceEnv, setupTenant, type Tenant } from './scenarios/service.js';

const with1m = process.env.GROWTH_1M === '1' || process.argv.includes('--1m');
const sizes = (process.env.GROWTH_SIZES ?? '1000,100000').split(',').map((x) => Number(x.trim())).filter((x) => x > 0);
if (with1m && !sizes.includes(1_000_000)) sizes.push(1_000_000);
sizes.sort((a, b) => a - b);
const durationS = Number(process.env.GROWTH_DURATION ?? 3);
const connections = 8;
/** Merchants the seeded rows spread over; the measured merchant owns 1/MERCHANTS of them. */
const MERCHANTS = 10;

const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const dbName = `bench_growth_${stamp.replace(/\D/g, '').slice(0, 14)}`;
const log = (s: string) => process.stdout.write(`${s}\n`);

interface Explain { query: string; execution_ms: number; plan_top: string; index_used: string[]; shared_buffers_hit_read: string }
interface SizeResult {
  rows: number; ledger_entries: number; seed_s: number;
  bill_status: LoadResult; bill_search: LoadResult; payment: LoadResult; payout_create: LoadResult; explain: Explain[];
}

/** The month partitions of the last year and this month, as a service running that long has them. */
async function createPastMonths(url: string): Promise<void> {
  await withClient(url, async (c) => {
    await c.query(`SELECT create_month_partition(t, (date_trunc('month', now() AT TIME ZONE 'UTC') - k * interval '1 month')::date)
                     FROM unnest(ARRAY['payments', 'ledger_entries', 'outbox_events', 'delivery_attempts']) t, generate_series(0, 12) k`);
  });
}

async function seed(url: string, ts: Tenant[], from: number, to: number): Promise<void> {
  await withClient(url, async (c) => {
    const m = ts.map((t) => t.merchantId);
    const s = ts.map((t) => t.shopId);
    // One instant for the whole seeding, so a transfer and its entry get the same created_at.
    const at = (await c.query<{ at: string }>(`SELECT now()::text AS at`)).rows[0]!.at;
    // Spread over the last 365 days, so a default search window (30 days) holds ~1/12 of them.
    await c.query(
      `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type, status, created_at, updated_at)
       SELECT ${seededBillId('G', 'n')}, ($1::text[])[1 + n % $5], ($2::text[])[1 + n % $5], 100.00, 'RUB', 'NORMAL', 'SUCCESS',
              now() - (n % 525600) * interval '1 minute' - interval '1 second', now()
         FROM generate_series($3::int, $4::int) n`,
      [m, s, from, to, ts.length],
    );
    await c.query(
      `INSERT INTO payout_requests (id, merchant_id, order_id, request_hash, created_at)
       SELECT 'GR' || n, ($1::text[])[1 + n % $4], 'seed-' || n, 'seed', now() - (n % 525600) * interval '1 minute' - interval '1 day'
         FROM generate_series($2::int, $3::int) n`,
      [m, from, to, ts.length],
    );
    await c.query(
      `INSERT INTO payouts (id, merchant_id, request_id, order_id, kind, status, account_type, account_masked, amount, commission, created_at, updated_at, finished_at)
       SELECT 'GP' || n, ($1::text[])[1 + n % $4], 'GR' || n, 'seed-' || n, 'PERSONAL', 'SUCCESS', 'CARD', '411111******1111', 1, 0,
              now() - (n % 525600) * interval '1 minute' - interval '1 day', now(), now()
         FROM generate_series($2::int, $3::int) n`,
      [m, from, to, ts.length],
    );
    // Each bill paid once; each payment credited through the ledger (a transfer and its entry
    // at the payment's creation time, acquirer clearing -> the merchant's available), and the
    // balances moved by the same sums, so GET /admin/v1/ledger/verify still holds afterwards.
    await c.query(
      `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, amount_received, bill_currency, account_currency,
                             account_amount, created_at, updated_at, finished_at)
       SELECT 'GY' || n, ${seededBillId('G', 'n')}, ($1::text[])[1 + n % $5], ($2::text[])[1 + n % $5], 'SUCCESS', 'BANK_CARD', 100.00, 100.00,
              'RUB', 'RUB', 100.00, $6::timestamptz - (n % 525600) * interval '1 minute' - interval '1 second', $6::timestamptz, $6::timestamptz
         FROM generate_series($3::int, $4::int) n`,
      [m, s, from, to, ts.length, at],
    );
    await c.query(
      `INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id, created_at)
       SELECT 'PAYMENT_CREDIT:GY' || n, 'PAYMENT_CREDIT', 'payment', 'GY' || n, ($1::text[])[1 + n % $4],
              $5::timestamptz - (n % 525600) * interval '1 minute' - interval '1 second'
         FROM generate_series($2::int, $3::int) n`,
      [m, from, to, ts.length, at],
    );
    await c.query(
      `INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount, created_at)
       SELECT 'PAYMENT_CREDIT:GY' || n, 1, 'RUB', 'RUB:acquirer_clearing:sandbox', 'RUB:merchant:' || ($1::text[])[1 + n % $4] || ':available', 100.00,
              $5::timestamptz - (n % 525600) * interval '1 minute' - interval '1 second'
         FROM generate_series($2::int, $3::int) n`,
      [m, from, to, ts.length, at],
    );
    await c.query(
      `UPDATE balances b SET available = b.available + x.v, updated_at = now()
         FROM (SELECT ($1::text[])[1 + n % $4] AS merchant_id, sum(100.00) AS v FROM generate_series($2::int, $3::int) n GROUP BY 1) x
        WHERE b.merchant_id = x.merchant_id AND b.currency = 'RUB'`,
      [m, from, to, ts.length],
    );
    await c.query('ANALYZE');
  });
}

/** Fresh NORMAL bills of the measured merchant, one per payment the run may make. */
async function payableBills(url: string, t: Tenant, prefix: string, n: number): Promise<string[]> {
  return withClient(url, async (c) => {
    const r = await c.query<{ id: string }>(
      `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type)
       SELECT ${seededBillId(prefix, 'n')}, $1, $2, 100.00, 'RUB', 'NORMAL' FROM generate_series(1, $3::int) n RETURNING id`,
      [t.merchantId, t.shopId, n],
    );
    return r.rows.map((x) => x.id);
  });
}

async function explain(url: string, t: Tenant): Promise<Explain[]> {
  const shapes: Array<[string, string, unknown[]]> = [
    ['bill by id and merchant (bill/status)', `SELECT * FROM bills WHERE id = $1 AND merchant_id = $2`, [`G${(7).toString(16).padStart(9, '0')}`, t.merchantId]],
    ['bills of a merchant in a window, one page (bill/search)',
      `SELECT * FROM bills WHERE merchant_id = $1 AND created_at >= now() - interval '30 days' AND created_at < now() ORDER BY created_at DESC, id DESC LIMIT 16`, [t.merchantId]],
    ['payout order_id replay lookup (payout create)', `SELECT id, request_hash FROM payout_requests WHERE merchant_id = $1 AND order_id = $2`, [t.merchantId, 'seed-7']],
    ['payout limits: the running totals (payout create)',
      `SELECT period, amount FROM payout_usage WHERE merchant_id = $1 AND ((period = 'D' AND period_start = current_date) OR (period = 'M' AND period_start = date_trunc('month', current_date)::date))`, [t.merchantId]],
    ['the latest payment of a bill (payment)',
      `SELECT id, status FROM payments WHERE bill_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, [`G${(MERCHANTS * 7).toString(16).padStart(9, '0')}`]],
    ['a payment by id and merchant (payment/status)', `SELECT * FROM payments WHERE id = $1 AND merchant_id = $2`, [`GY${MERCHANTS * 7}`, t.merchantId]],
    ['a transfer applied once (ledger post)', `SELECT 1 FROM ledger_transfers WHERE id = $1`, [`PAYMENT_CREDIT:GY${MERCHANTS * 7}`]],
    ['the entries of a transfer (ledger)', `SELECT * FROM ledger_entries WHERE transfer_id = $1`, [`PAYMENT_CREDIT:GY${MERCHANTS * 7}`]],
  ];
  return withClient(url, async (c) => {
    const out: Explain[] = [];
    for (const [name, sql, params] of shapes) {
      const r = await c.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
      const plan = (r.rows[0]!['QUERY PLAN'] as Array<{ Plan: any; 'Execution Time': number }>)[0]!;
      const idx: string[] = [];
      const walk = (p: any) => { if (p['Index Name']) idx.push(`${p['Node Type']} on ${p['Index Name']}`); for (const k of p.Plans ?? []) walk(k); };
      walk(plan.Plan);
      out.push({
        query: name, execution_ms: Math.round(plan['Execution Time'] * 1000) / 1000, plan_top: plan.Plan['Node Type'], index_used: idx,
        shared_buffers_hit_read: `${plan.Plan['Shared Hit Blocks'] ?? 0}/${plan.Plan['Shared Read Blocks'] ?? 0}`,
      });
    }
    return out;
  });
}

const url = await createBenchDatabase(dbName);
const env = serviceEnv(url);
const child = await startChild('service', 'src/main.ts', env);
const base = `http://127.0.0.1:${child.port}`;
const results: SizeResult[] = [];
await createPastMonths(url);
try {
  const tenants: Tenant[] = [];
  for (let i = 0; i < MERCHANTS; i++) tenants.push(await setupTenant(base, env.ADMIN_API_TOKEN!, 'http://127.0.0.1:9'));
  const t = tenants[0]!;
  // A limit makes payout creation run its limit query (the part that reads existing payouts).
  await fetch(`${base}/admin/v1/merchants/${t.merchantId}`, {
    method: 'PATCH', headers: { authorization: `Bearer ${env.ADMIN_API_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ payout_daily_limit: '90000000', payout_monthly_limit: '90000000' }),
  });
  const auth = { authorization: `Bearer ${t.token}` };
  const run = randomBytes(3).toString('hex');
  let seeded = 0;
  for (const size of sizes) {
    if (results.length > 8) throw new Error('at most 9 sizes (bill id prefixes Q..Y)');
    const t0 = Date.now();
    await seed(url, tenants, seeded + 1, size);
    seeded = size;
    const seedS = Math.round((Date.now() - t0) / 100) / 10;
    const entries = await withClient(url, async (c) => Number((await c.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_entries`)).rows[0]!.n));
    log(`${size} rows, ${entries} ledger entries (seeded in ${seedS} s)`);
    // Enough fresh bills for every payment the measured runs can make (far above the rate here).
    const pay = await payableBills(url, t, String.fromCharCode(81 + results.length), 3000 * (durationS + 1));
    let pi = 0;
    const payBody = JSON.stringify({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/30', card_cvc: '123' });
    // Bills of the measured merchant: n % MERCHANTS === 0.
    let k = 0;
    const ownBill = () => `G${((k++ % Math.floor(size / MERCHANTS)) * MERCHANTS + MERCHANTS).toString(16).padStart(9, '0')}`;
    let n = 0;
    const specs: Record<'bill_status' | 'bill_search' | 'payment' | 'payout_create', LoadSpec> = {
      bill_status: { url: `${base}/api/v1/bill/status?id=x`, headers: auth, setup: () => ({ path: `/api/v1/bill/status?id=${ownBill()}` }) },
      bill_search: { url: `${base}/api/v1/bill/search`, headers: auth },
      payment: {
        url: `${base}/pay/x`, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: payBody,
        setup: () => ({ path: `/pay/${pay[pi++ % pay.length]}` }),
      },
      payout_create: {
        url: `${base}/api/v1/payout/personal/create`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
        setup: () => ({ path: '/api/v1/payout/personal/create', body: JSON.stringify({ amount: '1.00', payout_account_id: t.payoutAccountId, order_id: `g-${run}-${n++}` }) }),
      },
    };
    const res = {} as Record<keyof typeof specs, LoadResult>;
    for (const [name, spec] of Object.entries(specs) as Array<[keyof typeof specs, LoadSpec]>) {
      await load(spec, connections, 1);
      res[name] = await load(spec, connections, durationS);
      log(`  ${name}: ${res[name].rps} req/s, p50 ${res[name].p50_ms} ms, p99 ${res[name].p99_ms} ms${res[name].non_2xx ? `, ${res[name].non_2xx} non-2xx` : ''}`);
    }
    const ex = await explain(url, t);
    for (const e of ex) log(`  EXPLAIN ${e.query}: ${e.execution_ms} ms, ${e.index_used.join(', ') || e.plan_top}`);
    results.push({ rows: size, ledger_entries: entries, seed_s: seedS, ...res, explain: ex });
  }
} finally {
  await child.stop();
  if (process.env.BENCH_KEEP_DB !== '1') await dropBenchDatabase(dbName);
}

const L: string[] = [];
L.push(`### Growth ${started.toISOString()}`, '');
L.push(`Existing rows: bills, payments (each with its ledger transfer and entry) and payouts (and payout requests), N each, spread over ` +
  `${MERCHANTS} merchants and the last 365 days in monthly partitions; the measured merchant owns 1/${MERCHANTS}. ` +
  `autocannon, ${connections} connections, ${durationS} s per figure.`, '');
L.push('| existing rows | ledger entries | bill/status req/s | p50 / p99 ms | bill/search req/s | p50 / p99 ms | payment req/s | p50 / p99 ms | payout create req/s | p50 / p99 ms |');
L.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const f = (x: LoadResult) => `${x.rps} | ${x.p50_ms} / ${x.p99_ms}${x.non_2xx ? ` (${x.non_2xx} non-2xx)` : ''}`;
  L.push(`| ${r.rows.toLocaleString('en')} | ${r.ledger_entries.toLocaleString('en')} | ${f(r.bill_status)} | ${f(r.bill_search)} | ${f(r.payment)} | ${f(r.payout_create)} |`);
}
L.push('', '| query shape | ' + results.map((r) => `${r.rows.toLocaleString('en')} rows`).join(' | ') + ' | plan |');
L.push('|---|' + results.map(() => '---:|').join('') + '---|');
for (let i = 0; i < (results[0]?.explain.length ?? 0); i++) {
  L.push(`| ${results[0]!.explain[i]!.query} | ${results.map((r) => `${r.explain[i]!.execution_ms} ms`).join(' | ')} | ${results.at(-1)!.explain[i]!.index_used.join(', ') || results.at(-1)!.explain[i]!.plan_top} |`);
}
L.push('');
const md = L.join('\n');
const dir = join(ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, `growth-${stamp}.json`), `${JSON.stringify({ started_at: started.toISOString(), sizes, connections, duration_s: durationS, results }, null, 2)}\n`);
writeFileSync(join(dir, `growth-${stamp}.md`), md);
writeFileSync(join(dir, 'growth-latest.md'), md);
log(`\n${md}`);
process.exit(0);
