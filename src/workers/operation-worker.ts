import type { Config } from '../config.js';
import type { Services } from '../services.js';
import type { Claimed } from '../domain/operations/lifecycle.js';
import type { OperationType } from '../domain/operation-type.js';
import { runDue, type Pass } from '../domain/operations/kinds.js';
import type { Worker, WorkerContext } from './index.js';
import { startPollLoop } from './poll-loop.js';

/** The nap when nothing is due: one indexed claim a second per worker while idle. */
const IDLE_POLL_MS = 1000;

/** Each kind's worker as the logs and the worker list name it. */
const NAMES: Record<OperationType, string> = { payment: 'payment-reconciler', refund: 'refunds', payout: 'payouts' };

/**
 * One pass over a kind's due work (tests call it instead of waiting for the loop), with the
 * worker's RECONCILE_GIVE_UP_MS when `config` is given.
 */
export function processDueOperations(
  ctx: { services: Pick<Services, 'operations'>; config?: Pick<Config, 'reconcileGiveUpMs'> }, type: OperationType, limit = 20,
): Promise<Pass> {
  return runDue(ctx.services.operations[type], limit, ctx.config?.reconcileGiveUpMs);
}

/**
 * The worker of any operation kind (docs/adr/0120-one-worker-factory-and-one-map-of-kinds.md):
 * claims the kind's due work under a lease and runs each through its lifecycle (sent, or its
 * connector asked, outside any transaction; a final answer applied once; anything else asked
 * again with backoff, on the attention list past RECONCILE_GIVE_UP_MS). Any number run side by
 * side (SKIP LOCKED). What was claimed while stopping is given back, due again at once.
 */
export function startOperationWorker(ctx: WorkerContext, type: OperationType, opts: { pollMs?: number; concurrency?: number } = {}): Worker {
  const kind = ctx.services.operations[type];
  return startPollLoop<Claimed>({
    name: NAMES[type],
    log: ctx.log,
    concurrency: opts.concurrency ?? 8,
    pollMs: opts.pollMs ?? IDLE_POLL_MS,
    claim: (n) => kind.claim(n),
    process: async (op) => { await kind.lifecycle.run(op, ctx.config.reconcileGiveUpMs); },
    release: (ops) => kind.release(ops.map((o) => o.id)),
  });
}
