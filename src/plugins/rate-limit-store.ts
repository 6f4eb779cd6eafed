import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import type { LimitStore } from '../lib/limit-store.js';

/** Keys of the per-token limit (src/plugins/rate-limit.ts): counted in the shared store. */
export const SHARED_KEY_PREFIX = 't:';

/**
 * Hits a process takes from the shared count at once for a limit of `max` per window: one for a
 * small limit (each request is counted where every process sees it), up to 16 for a large one,
 * so the per-token limit costs the hot path one statement per 16 requests, not one per request.
 * Hits a process took and did not use are lost when the window ends: of a limit of L with N
 * processes at most (N - 1) * (chunk - 1) requests are refused early, never one admitted too many.
 */
export const chunkFor = (max: number): number => Math.max(1, Math.min(16, Math.floor(max / 20)));

/** Hits of one window this process took from the shared count: positions `base + 1 .. base + by`, of which `taken` are within the limit. */
interface Reserved { until: number; base: number; by: number; taken: number; used: number }
type Result = { current: number; ttl: number };

/** The next hit from what the process holds; null when it must take more from the shared count. */
function fromHeld(r: Reserved | undefined, t: number, max: number): Result | null {
  if (!r || r.until <= t) return null;
  if (r.used < r.taken) { r.used++; return { current: r.base + r.used, ttl: r.until - t }; }
  // The shared count went past the limit when these were taken: refused until the window ends.
  if (r.taken < r.by) return { current: Math.max(max + 1, r.base + r.by), ttl: r.until - t };
  return null;
}

/**
 * A store for @fastify/rate-limit that counts the per-token limit in PostgreSQL
 * (src/db/limit-counters.ts), so N API processes allow a token its limit once in total. Each
 * process takes its hits in chunks (`chunkFor`), one statement at a time per token (requests that
 * arrive meanwhile wait for it), and admits from what it holds; once the shared count is past the
 * limit, the process refuses locally until the window ends. Other keys (the per-address flood
 * guard, checked first) stay in process memory: they guard no money or account, and a flood of
 * made-up tokens is stopped before it writes a row each. Fixed windows, as the package's own store.
 */
export function sharedRateLimitStore(store: LimitStore, now: () => number = Date.now): FastifyRateLimitStoreCtor {
  const held = new Map<string, Reserved>();
  const waiting = new Map<string, Array<(e?: Error) => void>>();
  class SharedStore implements FastifyRateLimitStore {
    private readonly local: FastifyRateLimitStore;

    constructor(opts: { continueExceeding?: boolean; exponentialBackoff?: boolean; cache?: number } = {}) {
      this.local = new LocalStore(opts.continueExceeding, opts.exponentialBackoff, opts.cache);
    }

    incr(key: string, cb: (error: Error | null, result?: Result) => void, timeWindow: number, max: number): void {
      if (!key.startsWith(SHARED_KEY_PREFIX)) return this.local.incr(key, cb, timeWindow, max);
      const got = fromHeld(held.get(key), now(), max);
      if (got) return cb(null, got);
      const again = (e?: Error) => (e ? cb(e) : this.incr(key, cb, timeWindow, max));
      const queue = waiting.get(key);
      if (queue) { queue.push(again); return; }
      waiting.set(key, [again]);
      const done = (e?: Error) => { const q = waiting.get(key) ?? []; waiting.delete(key); for (const w of q) w(e); };
      const by = chunkFor(max);
      store.add([{ name: 'api:token', key: key.slice(SHARED_KEY_PREFIX.length), windowMs: timeWindow, limit: max }], by).then(([a]) => {
        const base = a!.hits - by;
        if (held.size >= 10_000) held.clear();
        held.set(key, { until: now() + a!.ttlMs, base, by, taken: Math.max(0, Math.min(by, max - base)), used: 0 });
        done();
      }, (e: Error) => done(e));
    }

    child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
      return new SharedStore(routeOptions as never);
    }
  }
  return SharedStore as unknown as FastifyRateLimitStoreCtor;
}
