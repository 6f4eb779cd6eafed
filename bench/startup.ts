/**
 * npm run bench:startup: start-up cost of the compiled service, load-insensitive.
 * Starts the service as `npm run start:prod` does (node, its flags, dist/main.js) STARTUP_RUNS
 * times (default 7) after one uncounted start, on a fresh migrated database, workers on, and for each start reports: wall time from spawn to the first
 * 200 of GET /health, the CPU time (user + system, /proc/<pid>/stat) the process had used by
 * then, and its peak RSS (VmHWM) at that moment. CPU time is the figure to compare on a shared
 * machine: wall time grows with the load average, CPU time barely does.
 * BENCH_NODE_FLAGS / BENCH_ENTRY measure a variant (bench/lib/proc.ts startProdArgs). No load is
 * applied: the peak under load is npm run bench:prod's.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { ensureBuilt } from '../test/helpers/build.js';
import { createBenchDatabase, dropBenchDatabase } from './lib/pg.js';
import { freePort, procStatusKb, ROOT, startProdArgs } from './lib/proc.js';
import { serviceEnv } from './scenarios/service.js';

const RUNS = Number(process.env.STARTUP_RUNS ?? 7);
const NODE_ARGS = startProdArgs();
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** user + system CPU time of a process, ms (fields 14 and 15 of /proc/<pid>/stat). */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

async function once(env: Record<string, string>): Promise<{ wall: number; cpu: number; rss: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, NODE_ARGS, {
    cwd: ROOT, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', WEB_CONCURRENCY: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-4000); });
  const exited = new Promise((r) => child.once('exit', r));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited at start: ${err}`);
    try { if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break; } catch { /* not yet */ }
    if (performance.now() - t0 > 60_000) { child.kill('SIGKILL'); throw new Error(`service not up: ${err}`); }
    await new Promise((r) => setTimeout(r, 5));
  }
  const wall = Math.round(performance.now() - t0);
  const cpu = cpuMs(child.pid!);
  const rss = Math.round((procStatusKb(child.pid!, 'VmHWM') ?? 0) / 1024);
  child.kill('SIGTERM');
  await exited;
  return { wall, cpu, rss };
}

const range = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return `${s[0]}-${s[s.length - 1]} (median ${s[Math.floor(s.length / 2)]})`; };

if (!process.env.BENCH_ENTRY) ensureBuilt();
const name = `bench_startup_${process.pid}`;
const url = await createBenchDatabase(name);
const env = { ...serviceEnv(url), RUN_WORKERS: 'true' };
const rows: Array<{ wall: number; cpu: number; rss: number }> = [];
const load0 = loadavg()[0]!.toFixed(1);
try {
  await once(env); // warms the page cache and any compile cache; not counted
  for (let i = 0; i < RUNS; i++) rows.push(await once(env));
} finally {
  await dropBenchDatabase(name);
}
const load1 = loadavg()[0]!.toFixed(1);
console.log(`node ${NODE_ARGS.join(' ')}: ${RUNS} starts, load average ${load0} -> ${load1}`);
console.log(`  CPU ms until /health: ${range(rows.map((r) => r.cpu))}   [${rows.map((r) => r.cpu).join(', ')}]`);
console.log(`  wall ms until /health: ${range(rows.map((r) => r.wall))}   [${rows.map((r) => r.wall).join(', ')}]`);
console.log(`  VmHWM at /health, MB: ${range(rows.map((r) => r.rss))}`);
process.exit(0);
