import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { balance, booksBalance, card, fund, insertAccount, payoutMerchant, personal, regular } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

describe('concurrent payouts against one balance', () => {
  it('100 concurrent payouts against a balance covering exactly 37 -> exactly 37 accepted, available 0, entries sum to the balance', async () => {
    const m = await payoutMerchant(t, { payoutCardPercent: '0', payoutCardFixed: '1' });
    // Each payout takes 10 + 1 commission.
    await fund(t, m.merchantId, String(37 * 11));
    const res = await Promise.all(Array.from({ length: 100 }, (_, i) =>
      i % 2 === 0 ? regular(t, m, card('10')) : regular(t, m, card('10', { order_id: `c-${i}` }))));
    const ok = res.filter((r) => r.statusCode === 200);
    const refused = res.filter((r) => r.statusCode !== 200);
    expect(ok).toHaveLength(37);
    expect(refused.every((r) => r.statusCode === 400 && r.json().message === 'api:error.balance_not_enough')).toBe(true);
    expect(await balance(t, m.merchantId)).toEqual({ available: '0.00', locked: '370.00', hold: '37.00' });
    const n = await t.db.pool.query('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [m.merchantId]);
    expect(n.rows[0].n).toBe(37);
    const lost = await t.db.pool.query(
      `SELECT count(*)::int AS n FROM payout_requests r WHERE merchant_id = $1 AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.request_id = r.id)`,
      [m.merchantId],
    );
    expect(lost.rows[0].n).toBe(0);
    expect(await booksBalance(t)).toEqual([]);
  });

  it('personal and regular payouts of one merchant share the balance under concurrency', async () => {
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '50');
    const acc = await insertAccount(t, m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
    const res = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      i % 2 ? personal(t, m, { amount: '5', payout_account_id: acc }) : regular(t, m, card('5'))));
    expect(res.filter((r) => r.statusCode === 200)).toHaveLength(10);
    expect((await balance(t, m.merchantId)).available).toBe('0.00');
    expect(await booksBalance(t)).toEqual([]);
  });
});
