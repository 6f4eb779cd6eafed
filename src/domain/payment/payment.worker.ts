import type { Worker, WorkerContext } from '../../workers.js';

/** A payment still in PROCESS after this long was abandoned (the sandbox answers in milliseconds). */
export const STALE_PAYMENT_MS = 5 * 60 * 1000;
const EVERY_MS = 60 * 1000;

/** Fails payments stuck in PROCESS so their NORMAL bills can be paid again. */
export function startPaymentReaper(ctx: WorkerContext): Worker {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const tick = async () => {
    try {
      const n = await ctx.services.payments.failStalePayments(STALE_PAYMENT_MS);
      if (n > 0) ctx.log.warn({ failed: n }, 'failed payments abandoned in PROCESS');
    } catch (err) {
      ctx.log.error({ err }, 'payment reaper failed');
    }
  };
  const timer = setInterval(() => { if (!stopped) running = tick(); }, EVERY_MS);
  timer.unref();
  return {
    name: 'payment-reaper',
    async stop() { stopped = true; clearInterval(timer); await running; },
  };
}
