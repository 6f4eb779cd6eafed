/**
 * npm run bench:growth: what bill/status, bill/search, the payment (the page's POST /pay) and
 * payout creation cost with a growing history. At each size N: N bills, N payments (each
 * credited through the ledger: N transfers, N ledger entries), N payouts (and payout requests),
 * over 10 merchants and the last 365 days, in the monthly partitions (bench/lib/growth-seed.ts).
 * Sizes: GROWTH_SIZES (comma-separated, default 1000,100000); GROWTH_1M=1 or --1m adds 1M;
 * the full run is GROWTH_SIZES=1000,100000,1000000,10000000 (docs/performance.md "Growth").
 *
 * Each size gives, per endpoint:
 *   - the shared buffers (hit + read) and the plans of the statements the service really ran
 *     for one request (auto_explain in a probe process, bench/lib/statement-probe.ts): the
 *     verdict, since they do not depend on the machine's load;
 *   - EXPLAIN (ANALYZE, BUFFERS) of fixed query shapes (bench/lib/growth-shapes.ts);
 *   - req/s and latency of a short autocannon run, with the load average beside it (noisy).
 * A size that would not fit on PostgreSQL's disk (bytes per row of the previous size's step, with a margin), or
 * whose seeding would outlast GROWTH_SEED_BUDGET_S (seconds, at the rate measured so far), is
 * skipped and the reason written in the report. BENCH_KEEP_DB=1 keeps the database.
 * Writes bench/results/growth.json and .md (the latest run).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { createBenchDatabase, dropBenchDatabase, seededBillId, withClient } from './lib/pg.js';
import { load, type LoadSpec } from './lib/load.js';
import { startService } from './lib/proc.js';
import { createPastMonths, databaseBytes, freeBytes, seedHistory } from './lib/growth-seed.js';
import { explainShapes } from './lib/growth-shapes.js';
import { probe, startProbeService, type RequestCost } from './lib/statement-probe.js';
import { growthMarkdown, type Endpoint, type GrowthRun, type SizeResult } from './lib/growth-report.js';
import { serviceEnv, setupTenant, type Tenant } from './scenarios/service.js';
import { writeResult } from './lib/results.js';

const with1m = process.env.GROWTH_1M === '1' || process.argv.includes('--1m');
const sizes = (process.env.GROWTH_SIZES ?? '1000,100000').split(',').map((x) => Number(x.trim())).filter((x) => x > 0);
if (with1m && !sizes.includes(1_000_000)) sizes.push(1_000_000);
sizes.sort((a, b) => a - b);
const durationS = Number(process.env.GROWTH_DURATION ?? 3);
const connections = 8;
/** Merchants the seeded rows spread over; the measured merchant owns 1/MERCHANTS of them. */
const MERCHANTS = 10;
/** Requests per endpoint whose statements are explained (sequential, through the probe process). */
const PROBES = 10;
/** Disk kept free beyond the estimate: WAL, the other sessions on this machine. */
const DISK_MARGIN = 5 * 2 ** 30;
/** GROWTH_SEED_BUDGET_S: a size whose seeding would take longer (at the rate measured so far) is skipped. */
const seedBudgetS = Number(process.env.GROWTH_SEED_BUDGET_S ?? Infinity);

const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const dbName = `bench_growth_${stamp.replace(/\D/g, '').slice(0, 14)}`;
const log = (s: string) => process.stdout.write(`${s}\n`);
const gb = (b: number) => Math.round(b / 2 ** 30 * 10) / 10;
const load1 = () => Math.round(loadavg()[0]! * 10) / 10;
const results: SizeResult[] = [];
const skipped: string[] = [];

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

const report = (): GrowthRun => ({ started_at: started.toISOString(), sizes, merchants: MERCHANTS, connections, duration_s: durationS, probes: PROBES, skipped, results });
function writeReport(): void {
  writeResult('growth', report(), growthMarkdown(report()));
}

const url = await createBenchDatabase(dbName);
const env = serviceEnv(url);
const child = await startService('service', 'main', env);
const prober = await startProbeService(env);
const base = `http://127.0.0.1:${child.port}`;
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
  const emptyBytes = await databaseBytes(url);
  // Payout order ids stay unique across sizes: a reused one is a replay, not a payout.
  let n = 0;
  let seeded = 0;
  // The database's bytes before the last size's seeding: bytes per row are read off that step
  // alone, since the first rows also pay for every index's and partition's first pages (seen: ~14 kB
  // per row after 1,000 rows over 13 months, ~1.9 kB after a million: 10M was estimated at 140 GB).
  let before = { rows: 0, bytes: emptyBytes };
  for (const size of sizes) {
    if (results.length > 8) throw new Error('at most 9 sizes (bill id prefixes Q..Y)');
    if (seeded > 0) {
      const perRow = (await databaseBytes(url) - before.bytes) / (seeded - before.rows);
      const need = perRow * (size - seeded) + DISK_MARGIN;
      const free = await freeBytes(url);
      if (free !== null && free < need) {
        skipped.push(`${size.toLocaleString('en')} rows: needs ~${gb(need)} GB (${Math.round(perRow)} bytes per row in the last step, with a ${gb(DISK_MARGIN)} GB margin), ${gb(free)} GB free`);
        log(`skipping ${skipped.at(-1)}`);
        break;
      }
      const last = results.at(-1)!;
      const etaS = Math.round(((size - seeded) / ((last.rows - (results.at(-2)?.rows ?? 0)) / last.seed_s)) * 1.2);
      if (etaS > seedBudgetS) {
        skipped.push(`${size.toLocaleString('en')} rows: seeding would take ~${Math.round(etaS / 60)} min at the ${Math.round((last.rows - (results.at(-2)?.rows ?? 0)) / last.seed_s)} rows/s ` +
          `of the previous size (per table, load average ${load1()}), over the GROWTH_SEED_BUDGET_S of ${Math.round(seedBudgetS / 60)} min`);
        log(`skipping ${skipped.at(-1)}`);
        break;
      }
    }
    before = { rows: seeded, bytes: await databaseBytes(url) };
    const t0 = Date.now();
    await seedHistory(url, tenants, seeded + 1, size, (done, rps) => log(`  seeded ${done.toLocaleString('en')} of ${(size - seeded).toLocaleString('en')} (${rps} rows/s per table)`));
    seeded = size;
    const seedS = Math.round((Date.now() - t0) / 100) / 10;
    const stats = await withClient(url, async (c) => (await c.query<{ n: string; parts: string }>(
      `SELECT count(*)::text AS n, count(DISTINCT tableoid)::text AS parts FROM ledger_entries`)).rows[0]!);
    const dbBytes = await databaseBytes(url);
    log(`${size} rows, ${stats.n} ledger entries in ${stats.parts} partitions (seeded in ${seedS} s), database ${gb(dbBytes)} GB`);
    // Enough fresh bills for every payment the measured runs can make (far above the rate here).
    const pay = await payableBills(url, t, String.fromCharCode(81 + results.length), 3000 * (durationS + 1) + PROBES);
    let pi = 0;
    const payBody = JSON.stringify({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/30', card_cvc: '123' });
    // Bills of the measured merchant: n % MERCHANTS === 0.
    let k = 0;
    const ownBill = () => `G${((k++ % Math.floor(size / MERCHANTS)) * MERCHANTS + MERCHANTS).toString(16).padStart(9, '0')}`;
    const specs: Record<Endpoint, LoadSpec> = {
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
    const cost = {} as Record<Endpoint, RequestCost>;
    for (const [name, spec] of Object.entries(specs) as Array<[Endpoint, LoadSpec]>) {
      cost[name] = await probe(dbName, PROBES, async () => {
        const r = spec.setup?.();
        const res = await fetch(`http://127.0.0.1:${prober.port}${r?.path ?? new URL(spec.url).pathname}`, {
          method: spec.method ?? 'GET', headers: spec.headers, body: r?.body ?? spec.body,
        });
        if (!res.ok) throw new Error(`probe ${name}: ${res.status} ${(await res.text()).slice(0, 200)}`);
        await res.arrayBuffer();
      });
      log(`  ${name}: ${cost[name].buffers_per_request} buffers per request; ${cost[name].statements.map((s) => `${s.buffers} ${s.nodes.join(' + ') || '-'}`).join('; ')}`);
    }
    const latency = {} as SizeResult['latency'];
    for (const [name, spec] of Object.entries(specs) as Array<[Endpoint, LoadSpec]>) {
      await load(spec, connections, 1);
      const la = load1();
      latency[name] = { ...(await load(spec, connections, durationS)), load_avg: la };
      const r = latency[name];
      log(`  ${name}: ${r.rps} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms (load average ${la})${r.non_2xx ? `, ${r.non_2xx} non-2xx` : ''}`);
    }
    const shapes = await explainShapes(url, t.merchantId, MERCHANTS);
    for (const e of shapes) log(`  EXPLAIN ${e.query}: ${e.buffers} buffers, ${e.execution_ms} ms, ${e.nodes.join(', ')}`);
    results.push({ rows: size, ledger_entries: Number(stats.n), ledger_partitions: Number(stats.parts), seed_s: seedS, db_gb: gb(dbBytes), cost, latency, shapes });
    writeReport(); // after every size, so a long run stopped later keeps what it measured
  }
} finally {
  await prober.stop();
  await child.stop();
  if (process.env.BENCH_KEEP_DB !== '1') await dropBenchDatabase(dbName);
}

writeReport();
log(`\n${growthMarkdown(report())}`);
process.exit(0);
