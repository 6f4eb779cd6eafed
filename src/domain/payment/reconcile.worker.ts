import type { Worker, WorkerContext } from '../../workers.js';

const BATCH = 20;

/**
 * One reconciliation pass over the payments due to be asked (tests call it instead of waiting):
 * each is asked with `getPayment` at the connector that has it, outside any transaction; the
 * answer is applied once through `PaymentService.applyOutcome` (which schedules the next
 * question with backoff). Only the provider's answer fails a payment. One still without a final
 * answer past RECONCILE_GIVE_UP_MS goes to the attention list (and is still asked, at the
 * longest delay: a late answer settles the item). Returns how many were asked.
 */
export async function reconcilePayments(ctx: Pick<WorkerContext, 'services' | 'config'>, limit = BATCH): Promise<number> {
  const { payments, attention } = ctx.services;
  // The lease: while one worker asks, no other claims the payment.
  const due = await payments.claimDueChecks(limit, ctx.config.connectorTimeoutMs + 5_000);
  for (const p of due) {
    const { outcome, result: r } = await payments.askProvider(p, p.attempts + 1);
    if (r.status === 'PROCESS' && p.ageMs >= ctx.config.reconcileGiveUpMs) {
      const raised = await attention.raise({
        objectType: 'payment', objectId: p.id, merchantId: p.merchantId, connector: p.connector ?? '', providerRef: p.ref,
        reason: `no final answer from ${p.connector ?? 'any connector'} within RECONCILE_GIVE_UP_MS (${ctx.config.reconcileGiveUpMs} ms)`, lastHeard: outcome,
      });
      if (!raised) await attention.heardAgain('payment', p.id, outcome);
    }
  }
  return due.length;
}

/** The payment reconciliation loop (replaces the blind stale-payment reaper). */
export function startPaymentReconciler(ctx: WorkerContext): Worker {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const pass = async (): Promise<void> => {
    try {
      let n: number;
      do n = await reconcilePayments(ctx); while (!stopped && n === BATCH);
    } catch (err) {
      ctx.log.error({ err }, 'payment reconciliation pass failed');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => { running = pass().finally(schedule); }, ctx.config.reconcilePollMs);
    timer.unref();
  };
  schedule();
  return {
    name: 'payment-reconciler',
    async stop() { stopped = true; if (timer) clearTimeout(timer); await running; },
  };
}
