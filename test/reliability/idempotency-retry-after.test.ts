import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

/**
 * Issue 27: a request cut off by a crash leaves its Idempotency-Key claimed and unanswered; a
 * retry gets 409 "in progress" until the claim's lease (a minute) runs out. The 409 says when to
 * retry: `Retry-After` is the seconds left of that lease, and a retry after it takes the key over.
 */
let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

const create = (key: string) => t.app.inject({
  method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'idempotency-key': key }, payload: { amount: '42.00', shop_id: m.shopId },
});
const bills = async () => (await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM bills WHERE merchant_id = $1', [m.merchantId])).rows[0]!.n;

/** The row a request leaves when its process dies after claiming the key, `ageMs` ago. */
async function cutOff(key: string, ageMs: number) {
  // The request hash of this exact request, taken from a finished one (the hash ignores the key).
  const done = await create(`${key}-probe`);
  expect(done.statusCode).toBe(200);
  const hash = (await t.db.pool.query('SELECT request_hash FROM idempotency_keys WHERE merchant_id = $1 AND key = $2', [m.merchantId, `${key}-probe`])).rows[0].request_hash;
  await t.db.pool.query(
    `INSERT INTO idempotency_keys (merchant_id, key, request_hash, created_at, expires_at)
     VALUES ($1, $2, $3, now() - $4 * interval '1 millisecond', now() + interval '1 day')`,
    [m.merchantId, key, hash, ageMs],
  );
}

describe('Idempotency-Key whose first request is still in progress (or was cut off)', () => {
  it('409 with Retry-After = the seconds left of the lease (45 s into a 60 s lease: 15)', async () => {
    await cutOff('cut-45', 45_000);
    const before = await bills();
    const r = await create('cut-45');
    expect(r.statusCode).toBe(409);
    const retryAfter = Number(r.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(14);
    expect(retryAfter).toBeLessThanOrEqual(16);
    expect(await bills()).toBe(before);
  });

  it('a request just claimed: Retry-After about the whole minute, never 0', async () => {
    await cutOff('cut-0', 0);
    const r = await create('cut-0');
    expect(r.statusCode).toBe(409);
    expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(59);
    expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Under a second of the lease left (less the time the request takes to arrive, which a busy
    // machine stretches): rounded up to 1, never 0.
    await cutOff('cut-59', 59_000);
    const late = await create('cut-59');
    expect(late.statusCode, late.body).toBe(409);
    expect(Number(late.headers['retry-after'])).toBe(1);
  });

  it('once the lease has run out, the retry takes the key over and is answered (one bill)', async () => {
    await cutOff('cut-61', 61_000);
    const before = await bills();
    const r = await create('cut-61');
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers['retry-after']).toBeUndefined();
    const again = await create('cut-61');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await bills()).toBe(before + 1);
  });
});
