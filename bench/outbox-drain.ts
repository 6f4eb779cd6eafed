/**
 * The outbox drain of `npm run bench` alone: 10,000 (BENCH_OUTBOX_EVENTS) pending payment
 * postbacks of one merchant, then the worker process timed until all are delivered, on a bench
 * database of its own. One JSON line on stdout, so runs can be paired against another tree's.
 */
import { createBenchDatabase, dropBenchDatabase } from './lib/pg.js';
import { planFromEnv } from './lib/plan.js';
import { startChild } from './lib/proc.js';
import { runOutbox } from './scenarios/outbox.js';

const plan = { ...planFromEnv(), log: () => {} };
const name = `bench_outbox_drain_${process.pid}`;
const receiver = await startChild('receiver', 'bench/servers/receiver.ts', {});
try {
  const url = await createBenchDatabase(name);
  const r = await runOutbox(plan, url, `http://127.0.0.1:${receiver.port}`);
  process.stdout.write(`${JSON.stringify(r)}\n`);
} finally {
  await receiver.stop();
  await dropBenchDatabase(name);
}
