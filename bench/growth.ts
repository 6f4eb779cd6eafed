/**
 * npm run bench:growth: bill/status, bill/search and payout creation timed with 1k, 100k and
 * (GROWTH_1M=1, or --1m) 1M existing bills and payouts, seeded with generate_series. Each size:
 * a short autocannon run per endpoint through the real service, and EXPLAIN (ANALYZE, BUFFERS)
 * of the query shape that carries it, to show the cost is held by an index, not by table size.
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
const sizes = with1m ? [1_000, 100_000, 1_000_000] : [1_000, 100_000];
const durationS = Number(process.env.GROWTH_DURATION ?? 3);
const connections = 8;
/** Merchants the seeded rows spread over; the measured merchant owns 1/MERCHANTS of them. */
const MERCHANTS = 10;

const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const dbName = `bench_growth_${stamp.replace(/\D/g, '').slice(0, 14)}`;
const log = (s: string) => process.stdout.write(`${s}\n`);

interface Explain { query: string; execution_ms: number; plan_top: string; index_used: string[]; shared_buffers_hit_read: string }
interface SizeResult { rows: number; seed_s: number; bill_status: LoadResult; bill_search: LoadResult; payout_create: LoadResult; explain: Explain[] }

async function seed(url: string, ts: Tenant[], from: number, to: number): Promise<void> {
  await withClient(url, async (c) => {
    const m = ts.map((t) => t.merchantId);
    const s = ts.map((t) => t.shopId);
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
    await c.query('ANALYZE');
  });
}

async function explain(url: string, t: Tenant): Promise<Explain[]> {
  const shapes: Array<[string, string, unknown[]]> = [
    ['bill by id and merchant (bill/status)', `SELECT * FROM bills WHERE id = $1 AND merchant_id = $2`, [`G${(7).toString(16).padStart(9, '0')}`, t.merchantId]],
    ['bills of a merchant in a window, one page (bill/search)',
      `SELECT * FROM bills WHERE merchant_id = $1 AND created_at >= now() - interval '30 days' AND created_at < now() ORDER BY created_at DESC, id DESC LIMIT 16`, [t.merchantId]],
    ['payout order_id replay lookup (payout create)', `SELECT id, request_hash FROM payout_requests WHERE merchant_id = $1 AND order_id = $2`, [t.merchantId, 'seed-7']],
    ['payout limits: sums since the start of the month (payout create)',
      `SELECT coalesce(sum(amount), 0) FROM payouts WHERE merchant_id = $1 AND created_at >= date_trunc('month', now()) AND status <> ALL(ARRAY['FAIL','ERROR','DECLINED']::"PayoutStatus"[])`, [t.merchantId]],
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
    const t0 = Date.now();
    await seed(url, tenants, seeded + 1, size);
    seeded = size;
    const seedS = Math.round((Date.now() - t0) / 100) / 10;
    log(`${size} rows (seeded in ${seedS} s)`);
    // Bills of the measured merchant: n % MERCHANTS === 0.
    let k = 0;
    const ownBill = () => `G${((k++ % Math.floor(size / MERCHANTS)) * MERCHANTS + MERCHANTS).toString(16).padStart(9, '0')}`;
    let n = 0;
    const specs: Record<'bill_status' | 'bill_search' | 'payout_create', LoadSpec> = {
      bill_status: { url: `${base}/api/v1/bill/status?id=x`, headers: auth, setup: () => ({ path: `/api/v1/bill/status?id=${ownBill()}` }) },
      bill_search: { url: `${base}/api/v1/bill/search`, headers: auth },
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
    results.push({ rows: size, seed_s: seedS, ...res, explain: ex });
  }
} finally {
  await child.stop();
  if (process.env.BENCH_KEEP_DB !== '1') await dropBenchDatabase(dbName);
}

const L: string[] = [];
L.push(`### Growth ${started.toISOString()}`, '');
L.push(`Existing rows: bills and payouts (and payout requests) each, spread over ${MERCHANTS} merchants and the last 365 days; ` +
  `the measured merchant owns 1/${MERCHANTS}. autocannon, ${connections} connections, ${durationS} s per figure.`, '');
L.push('| existing rows | bill/status req/s | p50 / p99 ms | bill/search req/s | p50 / p99 ms | payout create req/s | p50 / p99 ms |');
L.push('|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  L.push(`| ${r.rows.toLocaleString('en')} | ${r.bill_status.rps} | ${r.bill_status.p50_ms} / ${r.bill_status.p99_ms} | ${r.bill_search.rps} | ${r.bill_search.p50_ms} / ${r.bill_search.p99_ms} | ${r.payout_create.rps} | ${r.payout_create.p50_ms} / ${r.payout_create.p99_ms} |`);
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
