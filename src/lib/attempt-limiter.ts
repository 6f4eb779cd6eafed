/**
 * Failed payment attempts per key (bill, IP) in a sliding window, in process memory. Only
 * failures count (bad card data, declines, expired forms): card testing is what it stops, and a
 * payer who pays is never throttled. Per process: N API processes allow up to N times the limit.
 */
export class AttemptLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(private readonly windowMs: number, private readonly maxKeys = 100_000) {}

  private live(key: string, now: number): number[] {
    const list = this.hits.get(key);
    if (!list) return [];
    const from = now - this.windowMs;
    let i = 0;
    while (i < list.length && list[i]! <= from) i++;
    if (i > 0) list.splice(0, i);
    if (list.length === 0) this.hits.delete(key);
    return list;
  }

  /** True when `key` already has `limit` failures in the window. */
  blocked(key: string, limit: number, now = Date.now()): boolean {
    return this.live(key, now).length >= limit;
  }

  fail(key: string, now = Date.now()): void {
    const list = this.live(key, now);
    if (list.length === 0) {
      if (this.hits.size >= this.maxKeys) {
        // Bounded memory: forget the oldest key (Map keeps insertion order).
        const oldest = this.hits.keys().next().value;
        if (oldest !== undefined) this.hits.delete(oldest);
      }
      this.hits.set(key, list);
    }
    list.push(now);
  }

  /** Attempts of `key` in the window. */
  count(key: string, now = Date.now()): number {
    return this.live(key, now).length;
  }

  /** Takes back the latest attempt of `key` (it turned out not to be a failure). */
  undo(key: string): void {
    const list = this.hits.get(key);
    list?.pop();
    if (list && list.length === 0) this.hits.delete(key);
  }

  /** Forgets every attempt of `key`. */
  reset(key: string): void { this.hits.delete(key); }

  clear(): void { this.hits.clear(); }
}
