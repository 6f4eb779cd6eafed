import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import type { LimitStore } from '../lib/limit-store.js';

/** Keys of the per-token limit (src/plugins/rate-limit.ts): counted in the shared store. */
export const SHARED_KEY_PREFIX = 't:';

/**
 * A store for @fastify/rate-limit that counts the per-token limit in PostgreSQL
 * (src/db/limit-counters.ts: one statement per request), so N API processes allow a token its
 * limit once in total. Other keys (the per-address flood guard, checked first) stay in process
 * memory: they guard no money or account, and a flood of made-up tokens is stopped before it
 * writes a row each. Fixed windows, as the package's own store: the answers are the same.
 */
export function sharedRateLimitStore(store: LimitStore): FastifyRateLimitStoreCtor {
  class SharedStore implements FastifyRateLimitStore {
    private readonly local: FastifyRateLimitStore;

    constructor(opts: { continueExceeding?: boolean; exponentialBackoff?: boolean; cache?: number } = {}) {
      this.local = new LocalStore(opts.continueExceeding, opts.exponentialBackoff, opts.cache);
    }

    incr(key: string, cb: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
      if (!key.startsWith(SHARED_KEY_PREFIX)) return this.local.incr(key, cb, timeWindow, max);
      store.add([{ name: 'api:token', key: key.slice(SHARED_KEY_PREFIX.length), windowMs: timeWindow, limit: max }])
        .then(([r]) => cb(null, { current: r!.hits, ttl: r!.ttlMs }), (e: Error) => cb(e));
    }

    child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
      return new SharedStore(routeOptions as never);
    }
  }
  return SharedStore as unknown as FastifyRateLimitStoreCtor;
}
