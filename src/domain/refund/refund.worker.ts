import type { Worker, WorkerContext } from '../../workers.js';

/** Idle wait between passes when no refund was due. */
const POLL_MS = 250;
const BATCH = 20;

/** One pass over the due refunds (tests call this instead of waiting for the loop). */
export function processDueRefunds(ctx: Pick<WorkerContext, 'services'>, limit?: number): Promise<number> {
  return ctx.services.refunds.processDue(limit);
}

/** The sandbox refund processor: NEW -> PROCESS -> SUCCESS | FAIL, in the background. */
export function startRefundWorker(ctx: WorkerContext): Worker {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  const pass = async (): Promise<void> => {
    try {
      // A full batch means more may be due: go on at once.
      let n: number;
      do {
        n = await processDueRefunds(ctx, BATCH);
      } while (!stopped && n === BATCH);
    } catch (err) {
      ctx.log.error({ err }, 'refund worker pass failed');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(schedule);
    }, POLL_MS);
  };
  schedule();

  return {
    name: 'refunds',
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
