import type { FastifyBaseLogger } from 'fastify';
import { classifyDatabaseError, reportInvariantViolation } from '../db/database-error.js';

/** What a worker supplies; the loop does the rest (pacing, concurrency, back-off, stop). */
export interface PollLoopOptions<T> {
  /** In log lines and the worker list. */
  name: string;
  log: Pick<FastifyBaseLogger, 'error' | 'warn'>;
  /**
   * Claims up to `limit` due items under a lease, or [] when nothing is due: one cheap indexed
   * statement, since an idle service runs it every poll interval. A throw is a database error.
   */
  claim(limit: number): Promise<T[]>;
  /**
   * Works on one claimed item; a throw is logged and the loop goes on (its lease expires).
   * `giveBackSlot()` lets the item's slot go before its work ends: the work goes on (stop() still
   * waits for it), but the loop may start another item in its place (the outbox's lent slots).
   */
  process(item: T, giveBackSlot: () => void): Promise<void>;
  /** Gives back items claimed but never started (claimed while the loop was stopping). */
  release?(items: T[]): Promise<void>;
  /** Runs once on stop after the work in flight settled (or the bound passed): flush, release leases. */
  onStop?(): Promise<void>;
  /** Items in flight at most (default 1). */
  concurrency?: number;
  /** Items claimed at once at most (default: the free slots). */
  batch?: number;
  /** The nap when nothing is due, jittered by +-jitter (default 0.2) so processes do not poll in step. */
  pollMs: number;
  jitter?: number;
  /**
   * First and longest wait after a failed claim (default 1 s doubling to 4 s): a worker finds a
   * database back (a restart, a failover's new primary) within 4 s of its return.
   */
  backoffMs?: { first: number; max: number };
  /** How long stop() waits for the work in flight (default 10 s; the stop signal handler exits at 15 s). */
  stopTimeoutMs?: number;
  /** Jitter source in [0, 1). */
  random?: () => number;
}

export interface PollLoop {
  readonly name: string;
  /** Ends a nap at once (new work is known to be due). */
  wake(): void;
  /** Items in flight now. */
  readonly inFlight: number;
  /** Stops claiming, waits for the work in flight up to the bound, gives back what it holds. */
  stop(): Promise<void>;
}

/**
 * The one poll loop of every worker. Claims only what it can start at once (so a lease covers
 * the whole of an item's work), in chunks of at least a quarter of the slots while work is in
 * flight (one round trip for many items, not one per freed slot). With a backlog or work in
 * flight it goes on as soon as a slot frees up rather than after the poll interval: a claim the
 * slots (or a worker's own fairness cap) held back may succeed then. Waiting for the interval
 * there capped one merchant's outbox backlog at 150/s (docs/performance.md).
 */
export function startPollLoop<T>(o: PollLoopOptions<T>): PollLoop {
  const concurrency = Math.max(1, o.concurrency ?? 1);
  const minClaim = Math.max(1, Math.floor(concurrency / 4));
  const jitter = o.jitter ?? 0.2;
  const random = o.random ?? Math.random;
  const backoff = o.backoffMs ?? { first: 1000, max: 4000 };
  const inflight = new Set<Promise<void>>();
  // Items holding a slot: those in flight less those that gave theirs back.
  let holding = 0;
  let stopping = false;
  // Past the stop bound: what still runs may fail on a closed pool; that is not worth a line.
  let abandoned = false;
  let failures = 0;
  let wakeNap: ((force: boolean) => void) | null = null;

  const nap = (ms: number, wakeOnSlot: boolean) => new Promise<void>((resolve) => {
    const t = setTimeout(() => { wakeNap = null; resolve(); }, ms);
    wakeNap = (force) => {
      if (!force && !wakeOnSlot) return;
      clearTimeout(t); wakeNap = null; resolve();
    };
  });

  const start = (item: T) => {
    let held = true;
    holding += 1;
    const giveBack = () => {
      if (held) { held = false; holding -= 1; }
      wakeNap?.(false);
    };
    const p: Promise<void> = o.process(item, giveBack)
      .catch((err: unknown) => {
        if (abandoned) return;
        // A broken invariant is an alert wherever it happens, the worker's jobs included.
        const f = classifyDatabaseError(err);
        if (f?.fault === 'invariant') reportInvariantViolation(o.log, f, err, o.name);
        else o.log.error({ err }, `${o.name}: processing failed`);
      })
      .finally(() => { inflight.delete(p); giveBack(); });
    inflight.add(p);
  };

  const loop = (async () => {
    let backlog = false;
    while (!stopping) {
      const free = concurrency - holding;
      backlog = false;
      if (free > 0 && (holding === 0 || free >= minClaim)) {
        const want = Math.min(free, o.batch ?? free);
        let items: T[];
        try {
          items = await o.claim(want);
          failures = 0;
        } catch (err) {
          // The database is away (restart, failover): one line per try, spaced out, no crash loop.
          const wait = Math.min(backoff.max, backoff.first * 2 ** Math.min(failures++, 20));
          if (!stopping) o.log.error({ err, retryInMs: wait }, `${o.name}: claim failed`);
          await nap(wait, false);
          continue;
        }
        if (stopping) {
          if (items.length > 0) await o.release?.(items).catch((err: unknown) => o.log.warn({ err }, `${o.name}: cannot release claims`));
          break;
        }
        for (const item of items) start(item);
        backlog = items.length === want;
        // Slots left over a full claim (batch smaller than the slots): claim again at once.
        if (backlog && holding < concurrency) continue;
      }
      if (stopping) break;
      const ms = Math.max(0, Math.round(o.pollMs * (1 + jitter * (2 * random() - 1))));
      await nap(ms, backlog || inflight.size > 0);
    }
  })();

  let stopped: Promise<void> | null = null;
  return {
    name: o.name,
    wake: () => wakeNap?.(true),
    get inFlight() { return inflight.size; },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        wakeNap?.(true);
        await loop;
        const bound = o.stopTimeoutMs ?? 10_000;
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          Promise.allSettled([...inflight]).then(() => false),
          new Promise<boolean>((r) => { timer = setTimeout(() => r(true), bound); }),
        ]);
        clearTimeout(timer);
        if (timedOut) {
          // Their leases stay: the work may still land at the other end; another worker takes
          // them once the leases expire, as after a crash.
          abandoned = true;
          o.log.warn({ inFlight: inflight.size, boundMs: bound }, `${o.name}: stopped with work still in flight`);
        }
        await o.onStop?.();
      })();
      return stopped;
    },
  };
}
