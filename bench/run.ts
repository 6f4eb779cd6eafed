/**
 * npm run bench: the ceilings of this machine and the service measured against them, in one run.
 * Writes bench/results/<timestamp>.json and .md, and bench/results/latest.md.
 * BENCH_DURATION=<s> (default 10), BENCH_QUICK=1 (2 s smoke run), BENCH_KEEP_DB=1 keeps the
 * databases, DATABASE_URL picks the PostgreSQL server (default the local 127.0.0.1:5432).
 * BENCH_PROCESSES=1,2 runs the service scenarios once per API process count (WEB_CONCURRENCY),
 * each on a fresh database; the first count gives the ratios and targets, the report adds a
 * throughput table by process count.
 * See docs/performance.md for the method.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBenchDatabase, dropBenchDatabase } from './lib/pg.js';
import { planFromEnv } from './lib/plan.js';
import { machineInfo } from './lib/machine.js';
import { ROOT, startChild } from './lib/proc.js';
import { computeRatios, computeTargets, toMarkdown, type BenchResults } from './lib/report.js';
import { runCeilings } from './scenarios/ceilings.js';
import { runService } from './scenarios/service.js';
import { runOutbox } from './scenarios/outbox.js';
import { updateReadme } from './lib/readme.js';

const plan = planFromEnv();
const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const tag = stamp.replace(/\D/g, '').slice(0, 14);
const dbs: Record<string, string> = { bare: `bench_${tag}_bare`, service: `bench_${tag}`, outbox: `bench_${tag}_outbox` };
for (const n of plan.processes.slice(1)) dbs[`service_p${n}`] = `bench_${tag}_p${n}`;

const failed = (e: unknown) => ({ unavailable: (e as Error).message.slice(0, 800) });

plan.log(`bench: ${plan.quick ? 'quick smoke run' : `${plan.durationS} s per figure`}, connections ${plan.connections.join(' and ')}`);
const machine = await machineInfo();
const receiver = await startChild('receiver', 'bench/servers/receiver.ts', {});
const receiverUrl = `http://127.0.0.1:${receiver.port}`;
let out: BenchResults;
try {
  plan.log('ceilings');
  const ceilings = await createBenchDatabase(dbs.bare!).then((url) => runCeilings(plan, url)).catch(failed);
  plan.log('service');
  const ceilingMax: Partial<Record<'insert' | 'select' | 'tx', number>> = {};
  if (!('unavailable' in ceilings)) {
    for (const k of ['insert', 'select', 'tx'] as const) ceilingMax[k] = Math.max(...Object.values(ceilings[k]).map((x) => x.rps));
  }
  const [first, ...more] = plan.processes;
  const service = await createBenchDatabase(dbs.service!).then((url) => runService(plan, url, receiverUrl, ceilingMax, first)).catch(failed);
  const byProcesses: NonNullable<BenchResults['service_by_processes']> = { [String(first)]: service };
  for (const n of more) {
    plan.log(`service with ${n} API processes (WEB_CONCURRENCY=${n})`);
    // Closed loop only: the open-loop rates belong to the first run's comparison with the ceilings.
    byProcesses[String(n)] = await createBenchDatabase(dbs[`service_p${n}`]!).then((url) => runService(plan, url, receiverUrl, {}, n)).catch(failed);
  }
  plan.log('outbox drain');
  const outbox = await createBenchDatabase(dbs.outbox!).then((url) => runOutbox(plan, url, receiverUrl)).catch(failed);
  const { ratios, byConn } = computeRatios(ceilings, service, plan.connections);
  const partial = {
    started_at: started.toISOString(), finished_at: new Date().toISOString(), quick: plan.quick, duration_s: plan.durationS,
    connections: plan.connections, tenants: plan.tenants, machine, ceilings, service, outbox, ratios, ratios_by_connections: byConn,
    ...(more.length ? { service_by_processes: byProcesses } : {}),
  };
  out = { ...partial, targets: computeTargets(partial) };
} finally {
  await receiver.stop();
  if (process.env.BENCH_KEEP_DB !== '1') for (const d of Object.values(dbs)) await dropBenchDatabase(d);
}

const dir = join(ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
const md = toMarkdown(out);
writeFileSync(join(dir, `${stamp}.json`), `${JSON.stringify(out, null, 2)}\n`);
writeFileSync(join(dir, `${stamp}.md`), md);
writeFileSync(join(dir, 'latest.md'), md);
updateReadme(md);
plan.log(`\n${md}`);
plan.log(`written bench/results/${stamp}.json, .md and latest.md`);
process.exit(0);
