import type { Worker, WorkerContext } from './index.js';
import { dropExpiredOutbox, ensurePartitions } from '../db/partitions.js';
import { startPollLoop } from './poll-loop.js';

const HOUR_MS = 3_600_000;

/**
 * Partition upkeep: at start and every hour, creates the months ahead (PARTITION_MONTHS_AHEAD)
 * and drops the outbox months past retention (OUTBOX_RETENTION_DAYS). Safe in any number of
 * processes (src/db/partitions.ts takes an advisory lock); a failed tick is retried with the
 * loop's back-off, and inserts never wait for it (a month without its partition fills the
 * DEFAULT partition). On the poll loop as a claim that finds nothing to hand on: the upkeep is
 * the whole of its work.
 */
export function startPartitionWorker(ctx: WorkerContext, opts: { intervalMs?: number } = {}): Worker {
  return startPollLoop<never>({
    name: 'partitions',
    log: ctx.log,
    pollMs: opts.intervalMs ?? HOUR_MS,
    jitter: 0,
    claim: async () => {
      const created = await ensurePartitions(ctx.db.pool, ctx.config.partitionMonthsAhead);
      if (created.length > 0) ctx.log.info({ created }, 'partitions created');
      const dropped = await dropExpiredOutbox(ctx.db.pool, ctx.config.outboxRetentionDays);
      if (dropped.length > 0) ctx.log.info({ dropped }, 'outbox partitions past retention dropped');
      return [];
    },
    process: async () => {},
  });
}
