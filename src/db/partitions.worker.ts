import type { Worker, WorkerContext } from '../workers.js';
import { dropExpiredOutbox, ensurePartitions } from './partitions.js';

const HOUR_MS = 3_600_000;

/**
 * Partition upkeep: at start and every hour, creates the months ahead (PARTITION_MONTHS_AHEAD)
 * and drops the outbox months past retention (OUTBOX_RETENTION_DAYS). Safe in any number of
 * processes (src/db/partitions.ts takes an advisory lock); a failed tick is retried next hour,
 * and inserts never wait for it (a month without its partition fills the DEFAULT partition).
 */
export function startPartitionWorker(ctx: WorkerContext, opts: { intervalMs?: number } = {}): Worker {
  let stopped = false;
  const tick = async () => {
    try {
      const created = await ensurePartitions(ctx.db.pool, ctx.config.partitionMonthsAhead);
      if (created.length > 0) ctx.log.info({ created }, 'partitions created');
      const dropped = await dropExpiredOutbox(ctx.db.pool, ctx.config.outboxRetentionDays);
      if (dropped.length > 0) ctx.log.info({ dropped }, 'outbox partitions past retention dropped');
    } catch (err) {
      if (!stopped) ctx.log.error({ err }, 'partition upkeep failed');
    }
  };
  let running: Promise<unknown> = tick();
  const timer = setInterval(() => { if (!stopped) running = tick(); }, opts.intervalMs ?? HOUR_MS);
  timer.unref();
  return {
    name: 'partitions',
    async stop() { stopped = true; clearInterval(timer); await running; },
  };
}
