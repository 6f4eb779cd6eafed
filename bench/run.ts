/**
 * npm run bench: the ceilings of this machine and the service measured against them, in one run.
 * The service runs compiled, as production does (dist/, built when missing or older than src/;
 * BENCH_RUNTIME=tsx runs the sources instead), with 1 and 2 API processes (BENCH_PROCESSES,
 * default 1,2), each beside bare handlers run with the same process count; each open loop of the
 * service beside its bare handler driven at the same rate (the control).
 * Writes bench/results/bench.json and .md (the latest run) and the table between the markers of
 * docs/performance.md. BENCH_DURATION=<s> (default 10), BENCH_QUICK=1 (2 s smoke run),
 * BENCH_KEEP_DB=1 keeps the databases, DATABASE_URL picks the PostgreSQL server (default the
 * local 127.0.0.1:5432). The targets are judged only when the machine was quiet at the start
 * (load average below 1). See docs/performance.md for the method.
 */
import { createBenchDatabase, dropBenchDatabase } from './lib/pg.js';
import { planFromEnv } from './lib/plan.js';
import { machineInfo } from './lib/machine.js';
import { RUNTIME, startChild } from './lib/proc.js';
import { writeResult } from './lib/results.js';
import { computeRatios, controlRates, computeTargets, toMarkdown, type BenchResults } from './lib/report.js';
import { runCeilings, runControls } from './scenarios/ceilings.js';
import { runService } from './scenarios/service.js';
import { runOutbox } from './scenarios/outbox.js';
import { updateReadme } from './lib/readme.js';
import { latestCost } from './lib/results.js';

const plan = planFromEnv();
const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const tag = stamp.replace(/\D/g, '').slice(0, 14);
const dbs: Record<string, string> = { bare: `bench_${tag}_bare`, service: `bench_${tag}`, control: `bench_${tag}_control`, outbox: `bench_${tag}_outbox` };
for (const n of plan.processes.slice(1)) {
  dbs[`service_p${n}`] = `bench_${tag}_p${n}`;
  dbs[`bare_p${n}`] = `bench_${tag}_bare_p${n}`;
}

const failed = (e: unknown) => ({ unavailable: (e as Error).message.slice(0, 800) });

plan.log(`bench: ${plan.quick ? 'quick smoke run' : `${plan.durationS} s per figure`}, connections ${plan.connections.join(' and ')}, ${RUNTIME} service, API processes ${plan.processes.join(' and ')}`);
const machine = await machineInfo();
const receiver = await startChild('receiver', 'bench/servers/receiver.ts', {});
const receiverUrl = `http://127.0.0.1:${receiver.port}`;
let out: BenchResults;
try {
  plan.log('ceilings');
  const [first, ...more] = plan.processes;
  const ceilings = await createBenchDatabase(dbs.bare!).then((url) => runCeilings(plan, url, first)).catch(failed);
  plan.log('service');
  const service = await createBenchDatabase(dbs.service!).then((url) => runService(plan, url, receiverUrl, first)).catch(failed);
  // Each open loop's control: the bare handler the scenario is compared with, at the same rate.
  const rates = controlRates(service);
  plan.log('controls: the bare handlers at the service\'s open-loop rates');
  const controls = rates.length ? await createBenchDatabase(dbs.control!).then((url) => runControls(plan, url, rates)).catch(failed) : { unavailable: 'no service open loop ran' };
  const byProcesses: NonNullable<BenchResults['service_by_processes']> = { [String(first)]: service };
  const ceilingsByProcesses: NonNullable<BenchResults['ceilings_by_processes']> = { [String(first)]: ceilings };
  for (const n of more) {
    plan.log(`bare handlers with ${n} processes`);
    ceilingsByProcesses[String(n)] = await createBenchDatabase(dbs[`bare_p${n}`]!).then((url) => runCeilings(plan, url, n, true)).catch(failed);
    plan.log(`service with ${n} API processes (WEB_CONCURRENCY=${n})`);
    byProcesses[String(n)] = await createBenchDatabase(dbs[`service_p${n}`]!).then((url) => runService(plan, url, receiverUrl, n)).catch(failed);
  }
  plan.log('outbox drain');
  const outbox = await createBenchDatabase(dbs.outbox!).then((url) => runOutbox(plan, url, receiverUrl)).catch(failed);
  const { ratios, byConn } = computeRatios(ceilings, service, plan.connections);
  const partial = {
    started_at: started.toISOString(), finished_at: new Date().toISOString(), quick: plan.quick, duration_s: plan.durationS, runtime: RUNTIME,
    connections: plan.connections, tenants: plan.tenants, machine, ceilings, service, controls, outbox, ratios, ratios_by_connections: byConn, cost: latestCost(),
    ...(more.length ? { service_by_processes: byProcesses, ceilings_by_processes: ceilingsByProcesses } : {}),
  };
  out = { ...partial, targets: computeTargets(partial) };
} finally {
  await receiver.stop();
  if (process.env.BENCH_KEEP_DB !== '1') for (const d of Object.values(dbs)) await dropBenchDatabase(d);
}

const md = toMarkdown(out);
const written = writeResult('bench', out, md);
updateReadme(md);
plan.log(`\n${md}`);
plan.log(`written ${written.join(' and ')}`);
process.exit(0);
