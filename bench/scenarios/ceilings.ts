import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { load, type LoadResult, type LoadSpec } from '../lib/load.js';
import { openLoop, type OpenLoopResult } from '../lib/open-loop.js';
import { checkpoint, seededBillId, withClient } from '../lib/pg.js';
import { sampleRss, startChild } from '../lib/proc.js';
import type { BenchPlan } from '../lib/plan.js';

const run = promisify(execFile);

export type ByConnections<T> = Record<string, T>;

export interface CeilingResults {
  /** API processes of each bare handler (WEB_CONCURRENCY), as the service it is compared with. */
  processes?: number;
  hello: ByConnections<LoadResult>;
  insert: ByConnections<LoadResult>;
  select: ByConnections<LoadResult>;
  tx: ByConnections<LoadResult>;
  pgbench_insert: ByConnections<PgbenchResult> | { unavailable: string };
  peak_rss_mb: Record<string, number | null>;
}

/** Which bare handler a control runs. */
export type BareMode = 'insert' | 'select' | 'tx';

/**
 * The control of one service open loop: the bare handler the scenario is compared with, driven
 * by the same generator at the same rate (requests/s) the service was, on a database of its own.
 */
export type ControlRun = OpenLoopResult & { mode: BareMode; percent: number };
export type Controls = Record<string, Record<string, ControlRun>>;

export interface PgbenchResult { connections: number; duration_s: number; tps: number; p50_ms: number | null; p99_ms: number | null; failed: number }

/** A merchant, a shop and its balances written straight into the ceilings' database. */
export async function seedBare(url: string, selectRows: number, tenants: number): Promise<{ merchantId: string; shopId: string; billIds: string[]; merchants: string[] }> {
  return withClient(url, async (c) => {
    const merchants = Array.from({ length: tenants }, (_, i) => `benchbare${i}`);
    const merchantId = merchants[0]!;
    const shopId = 'benchbareshop';
    await c.query(
      `INSERT INTO merchants (id, name, email, api_token_hash, api_token_enc)
       SELECT m, 'bare', m || '@bench.test', lpad(m, 64, '0'), 'x' FROM unnest($1::text[]) m`,
      [merchants],
    );
    await c.query(`INSERT INTO shops (id, merchant_id, name) VALUES ($1, $2, 'bare')`, [shopId, merchantId]);
    await c.query(
      `INSERT INTO balances (merchant_id, currency) SELECT m, cur FROM unnest($1::text[]) m, unnest(ARRAY['RUB','USD','EUR']::"Currency"[]) cur ON CONFLICT DO NOTHING`,
      [merchants],
    );
    // The ledger accounts the bare transaction's entry names (ledger legs must name existing accounts).
    await c.query(
      `INSERT INTO ledger_accounts (id, currency, kind, merchant_id)
       SELECT 'RUB:merchant:' || m || ':available', 'RUB'::"Currency", 'available', m FROM unnest($1::text[]) m
       UNION ALL SELECT 'RUB:adjustments', 'RUB'::"Currency", 'adjustments', NULL
       ON CONFLICT DO NOTHING`,
      [merchants],
    );
    await c.query(
      `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in) SELECT ${seededBillId('S', 'n')}, $1, $2, 100.00, 'RUB' FROM generate_series(1, $3) n`,
      [merchantId, shopId, selectRows],
    );
    const r = await c.query<{ id: string }>(`SELECT id FROM bills WHERE merchant_id = $1 AND id LIKE 'S%'`, [merchantId]);
    await c.query('ANALYZE');
    return { merchantId, shopId, billIds: r.rows.map((x) => x.id), merchants };
  });
}

/**
 * Warm-up at the highest connection count (so the pool has opened every connection and both
 * Node's JIT and PostgreSQL's backend caches are warm: the first seconds run at a fraction of
 * the steady rate), then one measured run per connection count, RSS polled during each.
 */
export async function measure(plan: BenchPlan, pid: number, spec: LoadSpec): Promise<ByConnections<LoadResult>> {
  if (plan.warmupS > 0) await load(spec, Math.max(...plan.connections), plan.warmupS);
  const out: ByConnections<LoadResult> = {};
  for (const c of plan.connections) {
    await checkpoint();
    const rss = sampleRss(pid);
    const r = await load(spec, c, plan.durationS);
    r.rss_mb = rss.stop();
    out[`c${c}`] = r;
    plan.log(`    ${c} conns: ${r.rps} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms${r.non_2xx + r.errors ? `, ${r.non_2xx} non-2xx, ${r.errors} errors` : ''}`);
  }
  return out;
}

const cycle = <T>(xs: T[]) => { let i = 0; return () => xs[i++ % xs.length]!; };

type Seed = Awaited<ReturnType<typeof seedBare>>;

/** How each bare handler is driven: its path, method and body, spread over the seeded rows. */
function bareSpecs(seed: Seed): Record<'hello' | BareMode, (base: string) => LoadSpec> {
  const json = { 'content-type': 'application/json' };
  const nextId = cycle(seed.billIds);
  const nextMerchant = cycle(seed.merchants);
  return {
    hello: (b) => ({ url: `${b}/` }),
    insert: (b) => ({ url: `${b}/bill`, method: 'POST', headers: json, body: JSON.stringify({ amount: '100.00', shop_id: seed.shopId }) }),
    select: (b) => ({ url: `${b}/bill?id=x`, setup: () => ({ path: `/bill?id=${nextId()}` }) }),
    tx: (b) => ({
      url: `${b}/tx`, method: 'POST', headers: json, body: JSON.stringify({ amount: '1.00' }),
      setup: () => ({ path: '/tx', body: JSON.stringify({ amount: '1.00', merchant_id: nextMerchant() }) }),
    }),
  };
}

const bareEnv = (url: string, seed: Seed, processes: number) =>
  ({ DATABASE_URL: url, BENCH_MERCHANT_ID: seed.merchantId, NODE_ENV: 'production', WEB_CONCURRENCY: String(processes) });

/**
 * The bare handlers with `processes` processes each; `handlersOnly` leaves out what does not
 * depend on the process count of a handler (hello world is still measured; pgbench is not).
 */
export async function runCeilings(plan: BenchPlan, url: string, processes = 1, handlersOnly = false): Promise<CeilingResults> {
  const seed = await seedBare(url, 10_000, plan.tenants);
  const specs = bareSpecs(seed);
  const peak: Record<string, number | null> = {};
  const bare = async (mode: 'hello' | BareMode): Promise<ByConnections<LoadResult>> => {
    plan.log(`  bare ${mode}${processes > 1 ? ` (${processes} processes)` : ''}`);
    const child = await startChild(`bare-${mode}`, 'bench/servers/bare.ts', { ...bareEnv(url, seed, processes), BARE_MODE: mode });
    try {
      return await measure(plan, child.pid, specs[mode](`http://127.0.0.1:${child.port}`));
    } finally {
      peak[mode] = child.peakRssMb();
      await child.stop();
    }
  };

  const hello = await bare('hello');
  const insert = await bare('insert');
  const select = await bare('select');
  const tx = await bare('tx');
  if (handlersOnly) return { processes, hello, insert, select, tx, pgbench_insert: { unavailable: 'not run for this process count' }, peak_rss_mb: peak };
  plan.log('  pgbench insert');
  const pgbench_insert = await runPgbench(plan, url, seed.merchantId, seed.shopId);
  return { processes, hello, insert, select, tx, pgbench_insert, peak_rss_mb: peak };
}

/**
 * The controls of the service's open loops: for each `{ scenario, percent, rate }` the service was
 * driven at, the bare handler it is compared with (`mode`), one process, driven by the same
 * generator at the same rate, on a database seeded as the ceilings' (`url`, a fresh one). So a
 * scenario's p99 at a rate stands beside what PostgreSQL and Node alone give at that rate, not at
 * a share of their own, higher, maximum.
 */
export async function runControls(plan: BenchPlan, url: string, runs: { scenario: string; mode: BareMode; percent: number; rate: number }[]): Promise<Controls> {
  const seed = await seedBare(url, 10_000, plan.tenants);
  const specs = bareSpecs(seed);
  const out: Controls = {};
  for (const mode of ['insert', 'select', 'tx'] as const) {
    const mine = runs.filter((r) => r.mode === mode);
    if (mine.length === 0) continue;
    const child = await startChild(`control-${mode}`, 'bench/servers/bare.ts', { ...bareEnv(url, seed, 1), BARE_MODE: mode });
    try {
      const spec = specs[mode](`http://127.0.0.1:${child.port}`);
      if (plan.warmupS > 0) await load(spec, Math.max(...plan.connections), plan.warmupS);
      for (const r of mine) {
        plan.log(`  control for ${r.scenario} at ${r.percent}%: bare ${mode} at ${r.rate} req/s`);
        await checkpoint();
        (out[r.scenario] ??= {})[`p${r.percent}`] = { ...await openLoop(spec, r.rate, plan.durationS), mode, percent: r.percent };
        await new Promise((res) => setTimeout(res, 2000));
      }
    } finally {
      await child.stop();
    }
  }
  return out;
}

/** PostgreSQL alone doing the bill insert: pgbench with a custom script, prepared statements. */
async function runPgbench(plan: BenchPlan, url: string, merchantId: string, shopId: string): Promise<ByConnections<PgbenchResult> | { unavailable: string }> {
  try {
    await run('pgbench', ['--version']);
  } catch {
    return { unavailable: 'pgbench not installed (apt-get install -y postgresql-client)' };
  }
  const u = new URL(url);
  const dir = mkdtempSync(join(tmpdir(), 'bench-pgbench-'));
  const script = join(dir, 'bill-insert.sql');
  writeFileSync(script,
    `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type) ` +
    `VALUES (substr(md5(random()::text || clock_timestamp()::text), 1, 20), :merchant, :shop, 100.00, 'RUB', 'NORMAL');\n`);
  const base = [
    '-n', '-M', 'prepared', '-f', script, '-D', `merchant=${merchantId}`, '-D', `shop=${shopId}`,
    '-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres'),
  ];
  const env = { ...process.env, ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}) };
  const out: ByConnections<PgbenchResult> = {};
  try {
    for (const c of plan.connections) {
      const logDir = mkdtempSync(join(dir, `c${c}-`));
      const args = [...base, '-c', String(c), '-j', '2', '-T', String(plan.durationS), '-l', '--log-prefix', join(logDir, 'pgb'), u.pathname.slice(1)];
      await checkpoint();
      const r = await run('pgbench', args, { env, cwd: logDir, maxBuffer: 16 * 1024 * 1024 });
      const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(r.stdout)?.[1];
      const failed = Number(/number of failed transactions: (\d+)/.exec(r.stdout)?.[1] ?? 0);
      const lat: number[] = [];
      for (const f of readdirSync(logDir)) {
        for (const line of readFileSync(join(logDir, f), 'utf8').split('\n')) {
          const us = line.split(' ')[2];
          if (us) lat.push(Number(us));
        }
      }
      lat.sort((a, b) => a - b);
      const pct = (p: number) => (lat.length ? Math.round(lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]! / 10) / 100 : null);
      out[`c${c}`] = { connections: c, duration_s: plan.durationS, tps: Math.round(Number(tps ?? 0)), p50_ms: pct(0.5), p99_ms: pct(0.99), failed };
      plan.log(`    ${c} clients: ${out[`c${c}`]!.tps} tps, p50 ${out[`c${c}`]!.p50_ms} ms, p99 ${out[`c${c}`]!.p99_ms} ms`);
    }
  } catch (e) {
    return { unavailable: `pgbench failed: ${(e as Error).message.slice(0, 500)}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
