import type { Worker, WorkerContext } from './index.js';
import type { WorkRow } from '../domain/payout/payout.service.js';
import { startPollLoop } from './poll-loop.js';

/** The nap when nothing is due: one indexed claim a second per worker while idle. */
const IDLE_POLL_MS = 1000;

/** One pass over due payouts (tests call it directly); returns how many were finalised. */
export async function processDuePayouts(ctx: Pick<WorkerContext, 'services'>, batch = 50): Promise<number> {
  return ctx.services.payouts.processDue(batch);
}

/**
 * The payout worker: sends due PROCESS payouts through the merchant's routing, or reconciles
 * those handed to a connector before. Any number of these run safely side by side (SKIP LOCKED).
 */
export function startPayoutWorker(ctx: WorkerContext, opts: { pollMs?: number; concurrency?: number } = {}): Worker {
  const { payouts } = ctx.services;
  return startPollLoop<WorkRow>({
    name: 'payouts',
    log: ctx.log,
    concurrency: opts.concurrency ?? 8,
    pollMs: opts.pollMs ?? IDLE_POLL_MS,
    claim: (n) => payouts.claimDue(n),
    process: async (row) => { await payouts.processClaimed(row); },
    release: (rows) => payouts.releaseClaims(rows.map((r) => r.id)),
  });
}
