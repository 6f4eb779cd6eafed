import type { Worker, WorkerContext } from './index.js';
import { startPollLoop } from './poll-loop.js';

/**
 * Deletes the limit windows that are over (src/db/limit-counters.ts) every minute, so the table
 * holds about one window per key in use. Safe in any number of processes (a DELETE each).
 */
export function startLimitCounterSweeper(ctx: WorkerContext, opts: { intervalMs?: number } = {}): Worker {
  return startPollLoop<never>({
    name: 'limit-counters',
    log: ctx.log,
    pollMs: opts.intervalMs ?? 60_000,
    claim: async () => {
      await ctx.services.limits.sweep();
      return [];
    },
    process: async () => {},
  });
}
