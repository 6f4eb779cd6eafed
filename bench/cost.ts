/**
 * npm run bench:cost [-- <tree>]: what one request COSTS, in figures a busy machine does not
 * blur: CPU time of the service process and of its PostgreSQL backends per request (user + sys
 * from /proc/<pid>/stat, not wall time), statements sent per request (counted in the service by
 * bench/lib/query-count.mjs), and the bench database's commits, buffer accesses and rows
 * written per request (pg_stat_database). Scenarios: bill_create, bill_status, payment (card,
 * JSON), each beside the bare handler of the same database work (insert, select, transaction;
 * COST_BARE=0 leaves them out), then the idle workers' cost per second and the service's RSS. `<tree>` (default this
 * checkout) is a checkout of another commit with its node_modules, to compare before and after
 * with the same script. Writes bench/results/cost.json (the latest run). COST_YEAR_OF_MONTHS=1 gives
 * the bench database the monthly partitions of a year-old service (empty): a fresh database has
 * only this month and the months made ahead, so a statement that visits every month kept costs
 * no more there than one that visits this month alone.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPastMonths } from './lib/growth-seed.js';
import { adminQuery, dropBenchDatabase, seededBillId, urlFor, withClient } from './lib/pg.js';
import { freePort, procStatusKb, ROOT, startChild } from './lib/proc.js';
import { serviceEnv, setupTenant, type Tenant } from './scenarios/service.js';
import { writeResult } from './lib/results.js';

const tree = resolve(process.argv[2] ?? ROOT);
const N = Number(process.env.COST_REQUESTS ?? 2000);
const WARM = Number(process.env.COST_WARMUP ?? 300);
const CONC = Number(process.env.COST_CONCURRENCY ?? 8);
const IDLE_S = Number(process.env.COST_IDLE_SECONDS ?? 20);
const TICK_MS = 1000 / 100; // USER_HZ: /proc's clock ticks are 10 ms on Linux
const STATS_FLUSH_MS = 11_000; // an idle backend flushes its pending statistics after 10 s (PostgreSQL 15)

/** utime + stime of a process, ms; null once it is gone. */
function cpuMs(pid: number): number | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch { return null; }
}

async function backendCpu(db: string): Promise<Map<number, number>> {
  const r = await adminQuery<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [db]);
  const out = new Map<number, number>();
  for (const { pid } of r.rows) { const c = cpuMs(pid); if (c !== null) out.set(pid, c); }
  return out;
}
/** CPU the backends spent between two readings (a backend opened in between counts whole). */
const backendDelta = (a: Map<number, number>, b: Map<number, number>) => [...b].reduce((s, [pid, c]) => s + c - (a.get(pid) ?? 0), 0);

interface DbStats { xact_commit: number; blks: number; tup_written: number; tup_read: number }
async function dbStats(db: string): Promise<DbStats> {
  const r = await adminQuery<Record<keyof DbStats, string>>(
    `SELECT xact_commit, blks_hit + blks_read AS blks, tup_inserted + tup_updated + tup_deleted AS tup_written,
            tup_returned + tup_fetched AS tup_read FROM pg_stat_database WHERE datname = $1`, [db]);
  const x = r.rows[0]!;
  return { xact_commit: +x.xact_commit, blks: +x.blks, tup_written: +x.tup_written, tup_read: +x.tup_read };
}

/** Runs `n` requests, `CONC` at a time; throws on the first non-2xx (a cost of failures would mislead). */
async function drive(n: number, req: (i: number) => { url: string; init: RequestInit }): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONC }, async () => {
    while (next < n) {
      const { url, init } = req(next++);
      const r = await fetch(url, init);
      const body = await r.text();
      if (r.status < 200 || r.status >= 300) throw new Error(`${init.method ?? 'GET'} ${url} -> ${r.status} ${body.slice(0, 200)}`);
    }
  }));
}

const dbName = `bench_cost_${Date.now()}`;
const countFile = join(tmpdir(), `${dbName}.queries.json`);
const url = urlFor(dbName);
const baseEnv = serviceEnv(url);
await adminQuery(`CREATE DATABASE "${dbName}"`);
const run = (args: string[], env: Record<string, string>) => new Promise<void>((ok, fail) => {
  const p = spawn(process.execPath, args, { cwd: tree, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  p.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`${args.join(' ')} exited ${code}`))));
});

interface Service { pid: number; base: string; stop(): Promise<void> }
async function startService(extraEnv: Record<string, string>): Promise<Service> {
  const port = await freePort();
  // COST_SERVICE_ENV='{"NAME":"value"}' measures a variant of the service's settings.
  const variant = JSON.parse(process.env.COST_SERVICE_ENV ?? '{}') as Record<string, string>;
  const env = { ...baseEnv, ...variant, ...extraEnv, PORT: String(port), HOST: '127.0.0.1', QUERY_COUNT_FILE: countFile };
  // COST_NODE_FLAGS="<flags>": node flags of the service (a V8 setting's cost per request).
  const flags = (process.env.COST_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const p = spawn(process.execPath, [...flags, '--import', join(ROOT, 'bench/lib/query-count.mjs'), '--import', 'tsx', 'src/entry/main.ts'],
    { cwd: tree, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((r) => p.on('exit', () => r()));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (await fetch(`${base}/health`).then((r) => r.ok, () => false)) break;
    if (i > 600) throw new Error('service did not start');
    await sleep(100);
  }
  return { pid: p.pid!, base, async stop() { p.kill('SIGTERM'); await exited; } };
}
async function queryCounts(pid: number): Promise<Record<string, number>> {
  rmSync(countFile, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50; i++) {
    await sleep(50);
    try { return JSON.parse(readFileSync(countFile, 'utf8')) as Record<string, number>; } catch { /* not yet */ }
  }
  throw new Error('no query counts');
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const countDelta = (a: Record<string, number>, b: Record<string, number>, per: number): Record<string, number> =>
  Object.fromEntries(Object.entries(b).map(([k, v]) => [k, r3((v - (a[k] ?? 0)) / per)] as const).filter(([, v]) => v > 0));

const YEAR_OF_MONTHS = Boolean(process.env.COST_YEAR_OF_MONTHS);
const report: Record<string, unknown> = { tree, requests: N, concurrency: CONC, year_of_months: YEAR_OF_MONTHS, at: new Date().toISOString(), load_average: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') };
try {
  await run(['--import', 'tsx', 'src/entry/migrate-cli.ts'], baseEnv);
  if (YEAR_OF_MONTHS) await createPastMonths(url);
  if (process.env.COST_AUTO_EXPLAIN) {
    // Every statement's plan with its buffers, triggers' statements included, in the server's log (a look, not a figure).
    await adminQuery(`ALTER DATABASE "${dbName}" SET session_preload_libraries = 'auto_explain'`);
    for (const [k, v] of [['log_min_duration', '0'], ['log_analyze', 'on'], ['log_buffers', 'on'], ['log_nested_statements', 'on'], ['log_triggers', 'on']]) {
      await adminQuery(`ALTER DATABASE "${dbName}" SET auto_explain.${k} = ${v}`);
    }
  }
  const svc = await startService({});
  const rss = (k: 'VmRSS' | 'VmHWM') => Math.round((procStatusKb(svc.pid, k) ?? 0) / 1024);
  const memory: Record<string, number> = { listening_rss_mb: rss('VmRSS') };
  try {
    const tenants: Tenant[] = [];
    for (let i = 0; i < 4; i++) tenants.push(await setupTenant(svc.base, baseEnv.ADMIN_API_TOKEN!, 'http://127.0.0.1:9'));
    memory.after_setup_rss_mb = rss('VmRSS');
    const total = 2 * WARM + N;
    await withClient(url, async (c) => {
      await c.query(`INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type)
        SELECT ${seededBillId('P', 'n')}, ($1::text[])[1 + n % 4], ($2::text[])[1 + n % 4], 100.00, 'RUB', 'NORMAL' FROM generate_series(1, $3) n`,
      [tenants.map((t) => t.merchantId), tenants.map((t) => t.shopId), total]);
      await c.query('ANALYZE bills');
    });
    const tOf = (i: number) => tenants[i % tenants.length]!;
    const json = (t: Tenant) => ({ authorization: `Bearer ${t.token}`, 'content-type': 'application/json', accept: 'application/json' });
    const created: Array<{ id: string; token: string }> = [];
    let payN = 0;
    let payoutN = 0;
    const scenarios: Record<string, (i: number) => { url: string; init: RequestInit }> = {
      bill_create: (i) => ({ url: `${svc.base}/api/v1/bill/create`, init: { method: 'POST', headers: json(tOf(i)), body: JSON.stringify({ amount: '100.00', shop_id: tOf(i).shopId }) } }),
      bill_status: (i) => { const b = created[i % created.length]!; return { url: `${svc.base}/api/v1/bill/status?id=${b.id}`, init: { headers: { authorization: `Bearer ${b.token}` } } }; },
      payment: () => ({ url: `${svc.base}/pay/P${(++payN).toString(16).padStart(9, '0')}`, init: {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/30', card_cvc: '123' }),
      } }),
      payout: (i) => ({ url: `${svc.base}/api/v1/payout/personal/create`, init: {
        method: 'POST', headers: json(tOf(i)), body: JSON.stringify({ amount: '1.00', payout_account_id: tOf(i).payoutAccountId, order_id: `cost-${++payoutN}` }),
      } }),
      merchant_balance: (i) => ({ url: `${svc.base}/api/v1/merchant/balance`, init: { headers: { authorization: `Bearer ${tOf(i).token}` } } }),
    };
    const results: Record<string, unknown> = {};
    const only = process.env.COST_SCENARIOS?.split(',');
    /** One scenario's cost per request on the server `pid`; `counts`: the service counts its statements. */
    const measureOne = async (pid: number, req: (i: number) => { url: string; init: RequestInit }, counts: boolean) => {
      await drive(WARM, req);
      await sleep(STATS_FLUSH_MS);
      const s0 = await dbStats(dbName);
      // The pool let idle connections go during the wait: open them again before the reading.
      await drive(WARM, req);
      const [q0, b0, c0] = [counts ? await queryCounts(pid) : {}, await backendCpu(dbName), cpuMs(pid)!];
      await drive(N, req);
      const [c1, b1, q1] = [cpuMs(pid)!, await backendCpu(dbName), counts ? await queryCounts(pid) : {}];
      await sleep(STATS_FLUSH_MS);
      const s1 = await dbStats(dbName);
      const perDb = WARM + N; // the statistics window holds the second warm-up too
      return {
        service_cpu_ms: r3((c1 - c0) / N),
        db_backends_cpu_ms: r3(backendDelta(b0, b1) / N),
        ...(counts ? { statements: r3(Object.values(countDelta(q0, q1, N)).reduce((s, v) => s + v, 0)) } : {}),
        commits: r3((s1.xact_commit - s0.xact_commit) / perDb),
        buffers: r3((s1.blks - s0.blks) / perDb),
        rows_written: r3((s1.tup_written - s0.tup_written) / perDb),
        rows_read: r3((s1.tup_read - s0.tup_read) / perDb),
        ...(counts ? { by_statement: countDelta(q0, q1, N) } : {}),
      };
    };
    for (const [name, req] of Object.entries(scenarios)) {
      if (only && !only.includes(name)) continue;
      results[name] = await measureOne(svc.pid, req, true);
      if (name === 'bill_create') {
        const byMerchant = new Map(tenants.map((t) => [t.merchantId, t.token]));
        const rows = await withClient(url, (c) => c.query<{ id: string; merchant_id: string }>(`SELECT id, merchant_id FROM bills WHERE id NOT LIKE 'P%' LIMIT 5000`));
        for (const r of rows.rows) created.push({ id: r.id, token: byMerchant.get(r.merchant_id)! });
      }
      process.stdout.write(`${name}: ${JSON.stringify(results[name])}\n`);
    }
    // The bare handlers (bench/servers/bare.ts, one process each) on the same database, driven the
    // same way: what the same database work costs with nothing else. Their statements are fixed by
    // construction: insert 1, select 1, tx 4 (BEGIN, the ledger insert, the balance, COMMIT).
    if (process.env.COST_BARE !== '0') {
      const t0 = tenants[0]!;
      const bare: Record<string, [string, (base: string) => (i: number) => { url: string; init: RequestInit }]> = {
        bill_create: ['insert', (b) => () => ({ url: `${b}/bill`, init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: '100.00', shop_id: t0.shopId }) } })],
        bill_status: ['select', (b) => (i) => ({ url: `${b}/bill?id=${created[i % created.length]!.id}`, init: {} })],
        payment: ['tx', (b) => (i) => ({ url: `${b}/tx`, init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: '1.00', merchant_id: tOf(i).merchantId }) } })],
      };
      // payout is compared with the bare transaction and merchant_balance with the bare select,
      // as in `npm run bench`: the same handlers, measured once above.
      for (const [name, [mode, reqOf]] of Object.entries(bare)) {
        if ((only && !only.includes(name)) || (name === 'bill_status' && created.length === 0)) continue;
        const child = await startChild(`bare-${mode}`, 'bench/servers/bare.ts', { DATABASE_URL: url, BENCH_MERCHANT_ID: t0.merchantId, NODE_ENV: 'production', BARE_MODE: mode });
        try {
          results[`bare_${mode}`] = await measureOne(child.pid, reqOf(`http://127.0.0.1:${child.port}`), false);
        } finally {
          await child.stop();
        }
        process.stdout.write(`bare ${mode} (beside ${name}): ${JSON.stringify(results[`bare_${mode}`])}\n`);
      }
    }
    memory.after_load_rss_mb = rss('VmRSS');
    memory.peak_rss_mb = rss('VmHWM');
    report.scenarios = results;
    report.memory = memory;
  } finally {
    await svc.stop();
  }

  // The workers with nothing to do (an empty database: the scenarios' postbacks would keep the
  // outbox busy): what they cost per second, service and database.
  if (IDLE_S > 0) {
  const idleDb = `${dbName}_idle`;
  await adminQuery(`CREATE DATABASE "${idleDb}"`);
  await run(['--import', 'tsx', 'src/entry/migrate-cli.ts'], { ...baseEnv, DATABASE_URL: urlFor(idleDb) });
  const idle = await startService({ RUN_WORKERS: 'true', DATABASE_URL: urlFor(idleDb) });
  try {
    await sleep(5000);
    const [q0, b0, c0] = [await queryCounts(idle.pid), await backendCpu(idleDb), cpuMs(idle.pid)!];
    await sleep(IDLE_S * 1000);
    const [c1, b1, q1] = [cpuMs(idle.pid)!, await backendCpu(idleDb), await queryCounts(idle.pid)];
    report.idle_workers_per_second = {
      service_cpu_ms: r3((c1 - c0) / IDLE_S), db_backends_cpu_ms: r3(backendDelta(b0, b1) / IDLE_S), statements: countDelta(q0, q1, IDLE_S),
    };
    process.stdout.write(`idle workers per second: ${JSON.stringify(report.idle_workers_per_second)}\n`);
  } finally {
    await idle.stop();
    await dropBenchDatabase(idleDb);
  }
  }
} finally {
  await dropBenchDatabase(dbName);
  rmSync(countFile, { force: true });
}
const [file] = writeResult('cost', report);
process.stdout.write(`memory: ${JSON.stringify(report.memory)}\nwritten ${file}\n`);

