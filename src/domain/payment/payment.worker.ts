import type { Worker, WorkerContext } from '../../workers.js';


/** Fails payments stuck in PROCESS so their NORMAL bills can be paid again. */
export function startPaymentReaper(ctx: WorkerContext): Worker {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const tick = async () => {
    try {
      const n = await ctx.services.payments.failStalePayments(ctx.config.paymentStaleMs);
      if (n > 0) ctx.log.warn({ failed: n }, 'failed payments abandoned in PROCESS');
    } catch (err) {
      ctx.log.error({ err }, 'payment reaper failed');
    }
  };
  const timer = setInterval(() => { if (!stopped) running = tick(); }, Math.min(60_000, Math.ceil(ctx.config.paymentStaleMs / 2)));
  timer.unref();
  return {
    name: 'payment-reaper',
    async stop() { stopped = true; clearInterval(timer); await running; },
  };
}
