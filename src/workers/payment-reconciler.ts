import type { Worker, WorkerContext } from './index.js';
import type { DueCheck } from '../domain/payment/payment.service.js';
import { startPollLoop } from './poll-loop.js';

const BATCH = 20;

/** How long a claimed check is ours: longer than the provider call it makes. */
const leaseMs = (ctx: Pick<WorkerContext, 'config'>) => ctx.config.connectorTimeoutMs + 5_000;

/** One reconciliation pass over the payments due to be asked (tests call it instead of waiting); returns how many were asked. */
export async function reconcilePayments(ctx: Pick<WorkerContext, 'services' | 'config'>, limit = BATCH): Promise<number> {
  // The lease: while one worker asks, no other claims the payment.
  const due = await ctx.services.payments.claimDueChecks(limit, leaseMs(ctx));
  for (const p of due) await ctx.services.payments.processClaimed(p, ctx.config.reconcileGiveUpMs);
  return due.length;
}

/** The payment reconciliation worker (replaces the blind stale-payment reaper). */
export function startPaymentReconciler(ctx: WorkerContext, opts: { concurrency?: number } = {}): Worker {
  return startPollLoop<DueCheck>({
    name: 'payment-reconciler',
    log: ctx.log,
    concurrency: opts.concurrency ?? 8,
    pollMs: ctx.config.reconcilePollMs,
    claim: (n) => ctx.services.payments.claimDueChecks(n, leaseMs(ctx)),
    // Asked outside any transaction, the answer applied once or the next question scheduled;
    // past RECONCILE_GIVE_UP_MS on the attention list (src/domain/operations/lifecycle.ts).
    process: (p) => ctx.services.payments.processClaimed(p, ctx.config.reconcileGiveUpMs),
    // Claimed while stopping, never asked: due again at once for the next worker.
    release: (ps) => ctx.services.payments.releaseChecks(ps.map((p) => p.id)),
  });
}
