import type { Worker, WorkerContext } from './index.js';
import type { ClaimedRefund } from '../domain/refund/refund.repository.js';
import { startPollLoop } from './poll-loop.js';

/** The nap when nothing is due: one indexed claim a second per worker while idle. */
const IDLE_POLL_MS = 1000;

/** One pass over the due refunds (tests call this instead of waiting for the loop). */
export function processDueRefunds(ctx: Pick<WorkerContext, 'services'>, limit?: number): Promise<number> {
  return ctx.services.refunds.processDue(limit);
}

/** The refund worker: NEW -> PROCESS -> sent to the payment's connector, or reconciled with it. */
export function startRefundWorker(ctx: WorkerContext, opts: { pollMs?: number; concurrency?: number } = {}): Worker {
  const { refunds } = ctx.services;
  return startPollLoop<ClaimedRefund>({
    name: 'refunds',
    log: ctx.log,
    concurrency: opts.concurrency ?? 8,
    pollMs: opts.pollMs ?? IDLE_POLL_MS,
    claim: (n) => refunds.claimDue(n),
    process: (r) => refunds.processClaimed(r),
    release: (rs) => refunds.releaseClaims(rs.map((r) => r.id)),
  });
}
