import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LimitCounters } from '../../src/db/limit-counters.js';
import { chunkFor, sharedRateLimitStore, SHARED_KEY_PREFIX } from '../../src/plugins/rate-limit-store.js';
import { createTestDatabase } from '../helpers/app.js';

/**
 * The per-token API limit counted in PostgreSQL in chunks: each process takes several hits of the
 * shared count at once and admits from them. Two stores on two pools stand for two API processes.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pools: pg.Pool[] = [];
let sent = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  pools = [new pg.Pool({ connectionString: db.url, max: 4 }), new pg.Pool({ connectionString: db.url, max: 4 })];
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db.drop();
});

/** A process's store over its own pool, counting the statements it sends. */
function processStore(n: 0 | 1) {
  const pool = pools[n]!;
  const counted = { query: (...a: Parameters<pg.Pool['query']>) => { sent++; return (pool.query as (...x: unknown[]) => unknown)(...a); } } as unknown as pg.Pool;
  const Store = sharedRateLimitStore(new LimitCounters(counted));
  return new (Store as unknown as new (o: object) => { incr(k: string, cb: (e: Error | null, r?: { current: number; ttl: number }) => void, w: number, max: number): void })({});
}

const hit = (s: ReturnType<typeof processStore>, token: string, max: number) =>
  new Promise<{ current: number; ttl: number }>((ok, no) => s.incr(`${SHARED_KEY_PREFIX}${token}`, (e, r) => (e ? no(e) : ok(r!)), 60_000, max));

describe('the per-token limit taken in chunks', () => {
  it('chunks are one hit for a small limit and at most 16 for a large one', () => {
    expect(chunkFor(6)).toBe(1);
    expect(chunkFor(39)).toBe(1);
    expect(chunkFor(100)).toBe(5);
    expect(chunkFor(60_000)).toBe(16);
  });

  it('two processes admit a limit of 100 at most once in total under a concurrent burst, losing fewer than a chunk, in far fewer statements than requests', async () => {
    const a = processStore(0);
    const b = processStore(1);
    sent = 0;
    const answers = await Promise.all(Array.from({ length: 160 }, (_, i) => hit(i % 2 ? a : b, 'tok-burst', 100)));
    const admitted = answers.filter((r) => r.current <= 100).length;
    expect(admitted).toBeLessThanOrEqual(100);
    expect(admitted).toBeGreaterThanOrEqual(100 - (chunkFor(100) - 1));
    // Every admitted answer names a distinct place in the shared count.
    const places = answers.filter((r) => r.current <= 100).map((r) => r.current);
    expect(new Set(places).size).toBe(places.length);
    expect(sent).toBeLessThan(160 / 2);
    expect(answers.every((r) => r.ttl > 0 && r.ttl <= 60_000)).toBe(true);
  });

  it('a limit of 6 is counted request by request: exactly 6 admitted over both processes, then refused by each', async () => {
    const a = processStore(0);
    const b = processStore(1);
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await hit(i % 2 ? a : b, 'tok-small', 6));
    expect(answers.map((r) => r.current <= 6)).toEqual([true, true, true, true, true, true, false, false, false, false]);
  });

  it('once the shared count is past the limit, a process refuses without asking PostgreSQL again in that window', async () => {
    const a = processStore(0);
    for (let i = 0; i < 100; i++) await hit(a, 'tok-local', 100);
    expect((await hit(a, 'tok-local', 100)).current).toBeGreaterThan(100);
    sent = 0;
    for (let i = 0; i < 20; i++) expect((await hit(a, 'tok-local', 100)).current).toBeGreaterThan(100);
    expect(sent).toBe(0);
  });
});
