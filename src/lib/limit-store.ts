/**
 * One limit's count for one key in fixed windows of `windowMs` (the window a moment falls in is
 * the store's clock divided by the window), shared by every process that asks the same store.
 */
export interface Counter {
  /** Which limit (`pay:bill`, `cabinet-sign-in:address`...): keys of two limits never meet. */
  name: string;
  key: string;
  windowMs: number;
  /** Hits allowed per window. */
  limit: number;
  /**
   * For `admit`: this counter's limit holds only when the counter at this index (of the same
   * call) already has a hit; while that one is empty, this one never refuses.
   */
  onlyAfter?: number;
}

/** Where a counted hit went: to take it back later, in the window it was counted in. */
export interface Hit { counter: Counter; window: string }

/** Limits every process shares: each method is one statement (src/db/limit-counters.ts). */
export interface LimitStore {
  /** Hits of each counter in its current window. */
  peek(counters: readonly Counter[]): Promise<number[]>;
  /**
   * Counts `by` hits (default one) on each counter; its hits after them and the milliseconds left
   * of its window.
   */
  add(counters: readonly Counter[], by?: number): Promise<Array<{ hits: number; ttlMs: number; window: string }>>;
  /**
   * Counts one hit on every counter when each is below its limit (see `onlyAfter`), else on
   * none: the hits, or null when refused. Of a concurrent burst, no more than the limit pass.
   */
  admit(counters: readonly Counter[]): Promise<Hit[] | null>;
  /** Forgets the counters' current windows and takes back hits counted earlier. */
  release(forget: readonly Counter[], takeBack: readonly Hit[]): Promise<void>;
}
