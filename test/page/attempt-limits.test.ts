import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LimitCounters } from '../../src/db/limit-counters.js';
import { PayCsrf } from '../../src/page/csrf.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, DECLINED_CARD, payRequest } from '../factories/payment.js';
import { waitFor } from '../helpers/wait.js';

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '3', PAY_ATTEMPTS_PER_IP: '6', TRUST_PROXY: 'true' });
  m = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

describe('attempt limits of the payment form', () => {
  it('per bill: after 3 failed attempts in 10 minutes the bill answers 429 and takes no payment', async () => {
    const billId = await createBill(t, m);
    for (let i = 0; i < 3; i++) expect((await payRequest(t, billId, cardForm(DECLINED_CARD), { 'x-forwarded-for': `10.0.0.${i}` })).json().status).toBe('FAIL');
    const r = await payRequest(t, billId, cardForm(), { 'x-forwarded-for': '10.0.0.99' });
    expect(r.statusCode).toBe(429);
    expect(r.json()).toEqual({ success: false, message: 'api:error.too_many_attempts' });
    expect(r.headers['retry-after']).toBe('600');
    const pays = await t.db.pool.query(`SELECT status::text FROM payments WHERE bill_id = $1`, [billId]);
    expect(pays.rows.every((p) => p.status === 'FAIL')).toBe(true);
  });

  it('per IP: bad card data from one address counts across bills; other addresses are not affected; successes never count', async () => {
    for (let i = 0; i < 5; i++) expect((await payRequest(t, await createBill(t, m), cardForm(), { 'x-forwarded-for': '10.9.9.9' })).json().status).toBe('SUCCESS');
    for (let i = 0; i < 6; i++) {
      const billId = await createBill(t, m);
      expect((await payRequest(t, billId, { ...cardForm(), card_number: '1234567812345678' }, { 'x-forwarded-for': '10.1.1.1' })).statusCode).toBe(422);
    }
    const blocked = await payRequest(t, await createBill(t, m), cardForm(), { 'x-forwarded-for': '10.1.1.1' });
    expect(blocked.statusCode).toBe(429);
    const other = await payRequest(t, await createBill(t, m), cardForm(), { 'x-forwarded-for': '10.2.2.2' });
    expect(other.json().status).toBe('SUCCESS');
  });

  it('a window that is over is forgotten: counts start again in the next one, and the sweep deletes it', async () => {
    const store = new LimitCounters(t.db.pool);
    const c = { name: 'test:window', key: 'k', windowMs: 1000, limit: 2 };
    const first = await store.add([c, { ...c, key: 'other' }]);
    expect(first.map((r) => r.hits)).toEqual([1, 1]);
    expect(first[0]!.ttlMs).toBeGreaterThan(0);
    expect(first[0]!.ttlMs).toBeLessThanOrEqual(1000);
    await store.add([c]);
    // Counted in the window the database's clock is in: once it turns, the key starts over.
    await waitFor(async () => (await store.peek([c]))[0] === 0, 'the key counted from zero in the next window', 5000, 50);
    const left = async () => Number((await t.db.pool.query(`SELECT count(*) FROM limit_counters WHERE name = 'test:window'`)).rows[0].count);
    expect(await left()).toBeGreaterThan(0);
    // The sweep takes a window a second after its end.
    await waitFor(async () => await store.sweep() > 0, 'the sweep deleting the window that is over', 5000, 50);
    expect(await left()).toBe(0);
  });

  it('admit: of a concurrent burst exactly the limit passes, and a refused one is not counted', async () => {
    const store = new LimitCounters(t.db.pool);
    const c = { name: 'test:burst', key: 'k', windowMs: 3_600_000, limit: 5 };
    const got = await Promise.all(Array.from({ length: 20 }, () => store.admit([c])));
    expect(got.filter((h) => h !== null)).toHaveLength(5);
    expect(await store.peek([c])).toEqual([5]);
    await store.release([], [got.find((h) => h !== null)![0]!]);
    expect(await store.peek([c])).toEqual([4]);
  });

  it('a CSRF token is bound to its bill and expires', () => {
    const c = new PayCsrf(Buffer.alloc(32, 1));
    const tok = c.issue('BillA', 1_000_000_000_000);
    expect(c.verify('BillA', tok, 1_000_000_000_000 + 1000)).toBe(true);
    expect(c.verify('BillB', tok, 1_000_000_000_000 + 1000)).toBe(false);
    expect(c.verify('BillA', tok, 1_000_000_000_000 + 3 * 3600 * 1000)).toBe(false);
    expect(new PayCsrf(Buffer.alloc(32, 2)).verify('BillA', tok, 1_000_000_000_000)).toBe(false);
  });
});
