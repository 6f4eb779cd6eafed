import type { Worker, WorkerContext } from './index.js';
import type { DueCheck } from '../domain/payment/payment.service.js';
import { startPollLoop } from './poll-loop.js';

const BATCH = 20;

/** How long a claimed check is ours: longer than the provider call it makes. */
const leaseMs = (ctx: Pick<WorkerContext, 'config'>) => ctx.config.connectorTimeoutMs + 5_000;

/**
 * Asks the provider about one payment due for a check (outside any transaction); the answer is
 * applied once through `PaymentService.applyOutcome` (which schedules the next question with
 * backoff). Only the provider's answer fails a payment. One still without a final answer past
 * RECONCILE_GIVE_UP_MS goes to the attention list (and is still asked, at the longest delay: a
 * late answer settles the item).
 */
async function reconcileOne(ctx: Pick<WorkerContext, 'services' | 'config'>, p: DueCheck): Promise<void> {
  const { payments, attention } = ctx.services;
  const { outcome, result: r } = await payments.askProvider(p, p.attempts + 1);
  if (r.status !== 'PROCESS' || p.ageMs < ctx.config.reconcileGiveUpMs) return;
  const raised = await attention.raise({
    objectType: 'payment', objectId: p.id, merchantId: p.merchantId, connector: p.connector ?? '', providerRef: p.ref,
    reason: `no final answer from ${p.connector ?? 'any connector'} within RECONCILE_GIVE_UP_MS (${ctx.config.reconcileGiveUpMs} ms)`, lastHeard: outcome,
  });
  if (!raised) await attention.heardAgain('payment', p.id, outcome);
}

/** One reconciliation pass over the payments due to be asked (tests call it instead of waiting); returns how many were asked. */
export async function reconcilePayments(ctx: Pick<WorkerContext, 'services' | 'config'>, limit = BATCH): Promise<number> {
  // The lease: while one worker asks, no other claims the payment.
  const due = await ctx.services.payments.claimDueChecks(limit, leaseMs(ctx));
  for (const p of due) await reconcileOne(ctx, p);
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
    process: (p) => reconcileOne(ctx, p),
    // Claimed while stopping, never asked: due again at once for the next worker.
    release: (ps) => ctx.services.payments.releaseChecks(ps.map((p) => p.id)),
  });
}
