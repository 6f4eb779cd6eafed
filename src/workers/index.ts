import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { Services } from '../services.js';
import { startOutboxWorker } from './outbox.js';
import { startOperationWorker } from './operation-worker.js';
import { startPartitionWorker } from './partitions.js';
import { startMailWorker } from './mail.js';
import { startLimitCounterSweeper } from './limit-counters.js';

export interface WorkerContext { config: Config; db: Db; services: Services; log: FastifyBaseLogger }

/** A background loop (src/workers/poll-loop.ts); `stop` finishes or releases what it holds, then resolves. */
export interface Worker { name: string; stop(): Promise<void> }

/** Every background worker of the service (outbox delivery, sandbox processing...). */
export function startWorkers(ctx: WorkerContext): Worker[] {
  const workers: Worker[] = [];
  workers.push(startOutboxWorker(ctx, { leaseMs: ctx.config.workerLeaseMs }));
  workers.push(startOperationWorker(ctx, 'refund'));
  workers.push(startOperationWorker(ctx, 'payout'));
  workers.push(startOperationWorker(ctx, 'payment', { pollMs: ctx.config.reconcilePollMs }));
  workers.push(startPartitionWorker(ctx));
  workers.push(startMailWorker(ctx));
  workers.push(startLimitCounterSweeper(ctx));
  return workers;
}

export async function stopWorkers(workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.stop()));
}
