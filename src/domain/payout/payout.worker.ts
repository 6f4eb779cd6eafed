import type { Worker, WorkerContext } from '../../workers.js';

/** One pass over due payouts (tests call it directly); returns how many were finalised. */
export async function processDuePayouts(ctx: Pick<WorkerContext, 'services'>, batch = 50): Promise<number> {
  return ctx.services.payouts.processDue(batch);
}

/**
 * The sandbox payout loop: polls for due PROCESS payouts; a full batch is followed at once by
 * the next, otherwise it sleeps. Any number of these run safely side by side (SKIP LOCKED).
 */
export function startPayoutWorker(ctx: WorkerContext, opts: { idleMs?: number; batch?: number } = {}): Worker {
  const idleMs = opts.idleMs ?? Math.min(500, Math.max(50, ctx.config.sandboxProcessingDelayMs));
  const batch = opts.batch ?? 50;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      let n = 0;
      try {
        n = await processDuePayouts(ctx, batch);
      } catch (err) {
        ctx.log.error({ err }, 'payout worker pass failed');
      }
      if (stopped) break;
      if (n < batch) {
        await new Promise<void>((resolve) => { wake = resolve; timer = setTimeout(resolve, idleMs); });
      }
    }
  })();
  return {
    name: 'payouts',
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
