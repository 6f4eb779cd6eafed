/**
 * npm run bench:prod: the compiled service as the image runs it (node dist/main.js, no
 * TypeScript loader), with 1 and with 2 API processes (WEB_CONCURRENCY):
 *   - time to listening: from spawn to the first 200 of /health, the database up and migrated
 *     (the median of 5 starts, each start listed);
 *   - throughput of bill/create and bill/status at 64 connections;
 *   - peak RSS (VmHWM) of every process of the service over the starts and the load.
 * Targets (docs/performance.md): listening in < 1 s, peak RSS < 150 MB for one process.
 * BENCH_DURATION=<s> per figure (default 10), BENCH_QUICK=1 (2 s smoke run). Writes
 * bench/results/prod.json and .md (the latest run).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt } from '../test/helpers/build.js';
import { load, type LoadResult } from './lib/load.js';
import { machineInfo } from './lib/machine.js';
import { createBenchDatabase, dropBenchDatabase, withClient } from './lib/pg.js';
import { planFromEnv } from './lib/plan.js';
import { freePort, procStatusKb, ROOT, round1, startChild, startProdArgs } from './lib/proc.js';
import { serviceEnv, setupTenant, type Tenant } from './scenarios/service.js';
import { writeResult } from './lib/results.js';

const plan = planFromEnv();
const CONNS = 64;
const STARTS = 5;
/** `npm run start:prod` without npm: its node flags (--max-semi-space-size) and dist/main.js. */
const NODE_ARGS = startProdArgs();

/** The pids of a process and of its descendants (the cluster's API processes). */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch { /* gone */ }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

interface Running { pid: number; base: string; startMs: number; peakMb(): number[]; stop(): Promise<number | null> }

/** Starts the service as `npm run start:prod` does and times it until /health answers 200. */
async function startService(env: Record<string, string>, processes: number): Promise<Running> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, NODE_ARGS, {
    cwd: ROOT, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', WEB_CONCURRENCY: String(processes) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-4000); });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited at start: ${err}`);
    try { if ((await fetch(`${base}/health`)).ok) break; } catch { /* not yet */ }
    if (performance.now() - t0 > 60_000) { child.kill('SIGKILL'); throw new Error(`service not up: ${err}`); }
    await new Promise((r) => setTimeout(r, 5));
  }
  const startMs = Math.round(performance.now() - t0);
  // With a cluster, /health answers as soon as one API process listens: wait for all of them.
  while (tree(child.pid!).length < (processes > 1 ? processes + 1 : 1)) await new Promise((r) => setTimeout(r, 20));
  const peaks = new Map<number, number>();
  const sample = () => { for (const p of tree(child.pid!)) peaks.set(p, Math.max(peaks.get(p) ?? 0, procStatusKb(p, 'VmHWM') ?? 0)); };
  const timer = setInterval(sample, 200);
  return {
    pid: child.pid!, base, startMs,
    peakMb: () => { sample(); return [...peaks.values()].map((kb) => round1(kb / 1024)); },
    async stop() { sample(); clearInterval(timer); child.kill('SIGTERM'); return exited; },
  };
}

interface ProcessesResult {
  processes: number;
  start_ms: number[];
  start_ms_median: number;
  bill_create: LoadResult;
  bill_status: LoadResult;
  /** Peak RSS of each process (primary first), MB. */
  peak_rss_mb: number[];
  peak_rss_total_mb: number;
  exit_code: number | null;
}

async function runWith(processes: number, url: string, receiverUrl: string): Promise<ProcessesResult> {
  const env: Record<string, string> = { ...serviceEnv(url), RUN_WORKERS: 'true' };
  plan.log(`${processes} API process(es): ${STARTS} starts`);
  const starts: number[] = [];
  for (let i = 0; i < STARTS - 1; i++) {
    const s = await startService(env, processes);
    starts.push(s.startMs);
    await s.stop();
  }
  const svc = await startService(env, processes);
  starts.push(svc.startMs);
  plan.log(`  listening after ${starts.join(', ')} ms`);
  try {
    const tenants: Tenant[] = await Promise.all([0, 1, 2, 3].map(() => setupTenant(svc.base, env.ADMIN_API_TOKEN!, receiverUrl)));
    let i = 0;
    const next = () => tenants[i++ % tenants.length]!;
    const json = (t: Tenant) => ({ authorization: `Bearer ${t.token}`, 'content-type': 'application/json', accept: 'application/json' });
    const body = (t: Tenant) => JSON.stringify({ amount: '100.00', shop_id: t.shopId });
    const t0 = tenants[0]!;
    const createSpec = {
      url: `${svc.base}/api/v1/bill/create`, method: 'POST' as const, headers: json(t0), body: body(t0),
      setup: () => { const t = next(); return { path: '/api/v1/bill/create', body: body(t), headers: json(t) }; },
    };
    if (plan.warmupS > 0) await load(createSpec, CONNS, plan.warmupS);
    const billCreate = await load(createSpec, CONNS, plan.durationS);
    plan.log(`  bill/create: ${billCreate.rps} req/s, p99 ${billCreate.p99_ms} ms`);
    const tokenOf = new Map(tenants.map((t) => [t.merchantId, t.token]));
    const bills = await withClient(url, async (c) => (await c.query<{ id: string; merchant_id: string }>('SELECT id, merchant_id FROM bills LIMIT 20000')).rows);
    let j = 0;
    const billStatus = await load({
      url: `${svc.base}/api/v1/bill/status?id=${bills[0]!.id}`, headers: { authorization: `Bearer ${tokenOf.get(bills[0]!.merchant_id)}` },
      setup: () => { const b = bills[j++ % bills.length]!; return { path: `/api/v1/bill/status?id=${b.id}`, headers: { authorization: `Bearer ${tokenOf.get(b.merchant_id)}` } }; },
    }, CONNS, plan.durationS);
    plan.log(`  bill/status: ${billStatus.rps} req/s, p99 ${billStatus.p99_ms} ms`);
    const peaks = svc.peakMb();
    return {
      processes, start_ms: starts, start_ms_median: [...starts].sort((a, b) => a - b)[Math.floor(starts.length / 2)]!,
      bill_create: billCreate, bill_status: billStatus,
      peak_rss_mb: peaks, peak_rss_total_mb: round1(peaks.reduce((a, b) => a + b, 0)),
      exit_code: await svc.stop(),
    };
  } catch (e) {
    await svc.stop();
    throw e;
  }
}

function toMarkdown(r: { started_at: string; quick: boolean; duration_s: number; machine: Awaited<ReturnType<typeof machineInfo>>; runs: ProcessesResult[] }): string {
  const m = r.machine;
  const L = [
    `### Compiled service ${r.started_at}${r.quick ? ' (quick smoke run: not a measurement to quote)' : ''}`,
    '',
    `Machine: ${m.cpu_model}, ${m.cores} cores, ${m.memory_gb} GB RAM; Node ${m.node}; PostgreSQL ${m.postgres}; load average ${m.load_avg_at_start} at the start` +
      `${m.load_avg_at_start > m.cores ? ' (**busy machine: figures are low and noisy**)' : ''}. node ${NODE_ARGS.join(' ')}, workers on, ${CONNS} connections, ${r.duration_s} s per figure.`,
    '',
    '| API processes | listening after (median of 5), ms | bill/create req/s | p99 ms | bill/status req/s | p99 ms | peak RSS per process, MB | total MB | exit |',
    '|---:|---:|---:|---:|---:|---:|---|---:|---:|',
  ];
  for (const x of r.runs) {
    L.push(`| ${x.processes} | ${x.start_ms_median} (${x.start_ms.join(', ')}) | ${x.bill_create.rps} | ${x.bill_create.p99_ms} | ${x.bill_status.rps} | ${x.bill_status.p99_ms} | ${x.peak_rss_mb.join(' + ')} | ${x.peak_rss_total_mb} | ${x.exit_code} |`);
  }
  const one = r.runs.find((x) => x.processes === 1);
  if (one) {
    L.push('');
    L.push(`Targets: listening in < 1000 ms: ${one.start_ms_median < 1000 ? 'yes' : '**no**'} (${one.start_ms_median} ms); ` +
      `peak RSS of one process < 150 MB: ${one.peak_rss_mb[0]! < 150 ? 'yes' : '**no**'} (${one.peak_rss_mb[0]} MB).`);
  }
  return `${L.join('\n')}\n`;
}

if (!process.env.BENCH_ENTRY) ensureBuilt();
const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const db = `bench_prod_${stamp.replace(/\D/g, '').slice(0, 14)}`;
const machine = await machineInfo();
const receiver = await startChild('receiver', 'bench/servers/receiver.ts', {});
const runs: ProcessesResult[] = [];
try {
  for (const n of [1, 2]) {
    const url = await createBenchDatabase(`${db}_${n}`);
    runs.push(await runWith(n, url, `http://127.0.0.1:${receiver.port}`));
  }
} finally {
  await receiver.stop();
  for (const n of [1, 2]) await dropBenchDatabase(`${db}_${n}`);
}
const out = { started_at: started.toISOString(), quick: plan.quick, duration_s: plan.durationS, machine, runs };
const md = toMarkdown(out);
plan.log(`\n${md}\nwritten ${writeResult('prod', out, md).join(' and ')}`);
process.exit(0);
