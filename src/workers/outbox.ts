import type { Worker } from './index.js';
import { OutboxDeliverer, type ClaimedEvent, type DeliveryResult, type OutboxCtx, type OutboxWorkerOptions } from '../outbox/deliverer.js';
import { startPollLoop } from './poll-loop.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The outbox delivery worker on the poll loop: up to `concurrency` deliveries in flight, at most
 * `perMerchant` of them one merchant's, results written in batches. `stop()` stops claiming,
 * lets what is in flight finish (each attempt is bounded by its timeout), records it, and
 * releases any lease still held.
 */
export function startOutboxWorker(ctx: OutboxCtx, opts: OutboxWorkerOptions = {}): Worker & { deliverer: OutboxDeliverer } {
  const d = new OutboxDeliverer(ctx, opts);
  const concurrency = opts.concurrency ?? 64;
  const perMerchant = opts.perMerchant ?? Math.max(1, Math.ceil(concurrency / 2));
  const busy = new Map<string, number>();
  const buffer: DeliveryResult[] = [];
  let flushing: Promise<void> | null = null;
  let stopping = false;
  let stopFailures = 0;

  const flush = (): Promise<void> => {
    if (flushing) return flushing;
    flushing = (async () => {
      while (buffer.length > 0) {
        const batch = buffer.splice(0, 1000);
        try {
          await d.record(batch);
        } catch (err) {
          // Database unavailable: keep the results and try again. If this worker dies first,
          // the leases expire and another worker sends again (at-least-once).
          ctx.log.error({ err }, 'outbox: cannot record delivery results');
          if (stopping && ++stopFailures >= 3) {
            buffer.length = 0;
            break;
          }
          buffer.unshift(...batch);
          await sleep(500);
        }
      }
      flushing = null;
    })();
    return flushing;
  };

  const deliver = async (ev: ClaimedEvent): Promise<void> => {
    busy.set(ev.merchantId, (busy.get(ev.merchantId) ?? 0) + 1);
    try {
      const r = await d.deliver(ev, { retries: ev.kind !== 'TEST_POSTBACK' }).catch((err: unknown): DeliveryResult => {
        // A bug, not the receiver: keep the event for a later try rather than crash the worker.
        ctx.log.error({ err, eventId: ev.id }, 'outbox: delivery crashed');
        return { eventId: ev.id, decision: { status: 'PENDING', nextAttemptAt: new Date(d.now().getTime() + 60_000) }, lastError: `internal error: ${(err as Error).message}`.slice(0, 500), attempt: null };
      });
      buffer.push(r);
      void flush();
    } finally {
      const n = (busy.get(ev.merchantId) ?? 1) - 1;
      if (n > 0) busy.set(ev.merchantId, n); else busy.delete(ev.merchantId);
    }
  };

  const loop = startPollLoop<ClaimedEvent>({
    name: 'outbox',
    log: ctx.log,
    concurrency,
    pollMs: opts.pollMs ?? 200,
    random: opts.random,
    // Events claimed in one statement, at most perMerchant per merchant counting those in flight.
    claim: (limit) => d.claim(limit, undefined, perMerchant, busy),
    process: deliver,
    release: async (events) => { await d.release(events.map((e) => e.id)); },
    onStop: async () => {
      stopping = true;
      await flush();
      await d.releaseAll().catch((err) => ctx.log.error({ err }, 'outbox: cannot release leases'));
    },
  });

  return { name: 'outbox', deliverer: d, stop: () => loop.stop() };
}
