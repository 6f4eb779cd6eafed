import type { Worker } from './index.js';
import { OutboxDeliverer, type ClaimedEvent, type DeliveryResult, type OutboxCtx, type OutboxWorkerOptions } from '../outbox/deliverer.js';
import { startPollLoop } from './poll-loop.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The outbox delivery worker on the poll loop: up to `concurrency` deliveries in flight, at most
 * `perMerchant` of them one merchant's while another merchant has events due (the cap lends the
 * idle slots otherwise: docs/adr/0043-postback-fairness-and-the-claim-function.md), results written in
 * batches. `stop()` stops claiming, lets what is in flight finish (each attempt is bounded by its
 * timeout), records it, and releases any lease still held.
 */
export function startOutboxWorker(ctx: OutboxCtx, opts: OutboxWorkerOptions = {}): Worker & { deliverer: OutboxDeliverer } {
  const d = new OutboxDeliverer(ctx, opts);
  const concurrency = opts.concurrency ?? 64;
  const perMerchant = opts.perMerchant ?? Math.max(1, Math.ceil(concurrency / 2));
  const lendMs = opts.lendMs ?? 1000;
  /** Deliveries in flight per merchant (what the claim's cap counts). */
  const busy = new Map<string, number>();
  /** Those of them still holding a worker slot (a lent slot is given back after lendMs). */
  const holding = new Map<string, number>();
  let givenBack = 0;
  // Merchants whose last finished delivery got an answer (any HTTP status), or got none (timeout,
  // refused connection). Slots are lent only to a merchant whose receiver answers, or that
  // starts from nothing in flight and was not silent last: one whose requests all hang keeps its cap.
  const answering = new Set<string>();
  const silent = new Set<string>();
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

  const add = (map: Map<string, number>, m: string, by: number) => {
    const n = (map.get(m) ?? 0) + by;
    if (n > 0) map.set(m, n); else map.delete(m);
  };

  /** Merchants not lent slots: a receiver that has not answered yet (with deliveries in flight) or did not answer last. */
  const notLent = (): string[] => {
    const out: string[] = [];
    for (const m of busy.keys()) if (!answering.has(m)) out.push(m);
    for (const m of silent) if (!busy.has(m)) out.push(m);
    return out;
  };

  const deliver = async (ev: ClaimedEvent, giveBackSlot: () => void): Promise<void> => {
    const m = ev.merchantId;
    add(busy, m, 1);
    add(holding, m, 1);
    // Past the cap: a lent slot. Should the receiver be slow, the slot goes back to the loop after
    // lendMs (the delivery goes on), so another merchant's events that show up meanwhile wait
    // lendMs at most, not the timeout. At most `concurrency` slots given back at once.
    let gaveBack = false;
    const lent = (holding.get(m) ?? 0) > perMerchant
      ? setTimeout(() => {
        if ((holding.get(m) ?? 0) <= perMerchant || givenBack >= concurrency) return;
        gaveBack = true;
        givenBack += 1;
        add(holding, m, -1);
        giveBackSlot();
      }, lendMs)
      : undefined;
    try {
      const r = await d.deliver(ev, { retries: ev.kind !== 'TEST_POSTBACK' }).catch((err: unknown): DeliveryResult => {
        // A bug, not the receiver: keep the event for a later try rather than crash the worker.
        ctx.log.error({ err, eventId: ev.id }, 'outbox: delivery crashed');
        return { eventId: ev.id, decision: { status: 'PENDING', nextAttemptAt: new Date(d.now().getTime() + 60_000) }, lastError: `internal error: ${(err as Error).message}`.slice(0, 500), attempt: null };
      });
      if (r.attempt) {
        const [to, from] = r.attempt.httpStatus !== null ? [answering, silent] : [silent, answering];
        if (to.size >= 10_000) to.clear();
        to.add(m);
        from.delete(m);
      }
      buffer.push(r);
      void flush();
    } finally {
      clearTimeout(lent);
      add(busy, m, -1);
      if (gaveBack) givenBack -= 1; else add(holding, m, -1);
    }
  };

  const loop = startPollLoop<ClaimedEvent>({
    name: 'outbox',
    log: ctx.log,
    concurrency,
    pollMs: opts.pollMs ?? 200,
    random: opts.random,
    // Events claimed in one statement, at most perMerchant per merchant counting those in flight,
    // up to every slot for a merchant alone with events due.
    claim: (limit) => d.claim(limit, undefined, perMerchant, busy, { upTo: concurrency, not: notLent() }),
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
