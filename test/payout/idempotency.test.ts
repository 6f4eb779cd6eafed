import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { balance, card, fund, insertAccount, payoutMerchant, personal, regular, sbp, seedBanks } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp();
  await seedBanks(t);
});
afterAll(async () => { await t.close(); });

async function count(merchantId: string) {
  const r = await t.db.pool.query('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [merchantId]);
  return r.rows[0].n as number;
}

describe('order_id idempotency', () => {
  it('the same order_id and parameters returns the same payouts (the same response), never a second payout', async () => {
    const m = await payoutMerchant(t, { payoutMaxCard: '100' });
    await fund(t, m.merchantId, '1000');
    const first = await regular(t, m, card('250', { order_id: 'o-1' }));
    expect(first.statusCode).toBe(200);
    // The same parameters written differently (amount as a number, card with spaces) are the same request.
    const again = await regular(t, m, card('250', { order_id: 'o-1' }));
    const again2 = await regular(t, m, { ...card('250.00', { order_id: 'o-1' }), amount: 250, account_identifier: '4242 4242 4242 4242' });
    expect(again.json()).toEqual(first.json());
    expect(again2.json()).toEqual(first.json());
    expect(await count(m.merchantId)).toBe(3);
    expect(await balance(t, m.merchantId)).toEqual({ available: '750.00', locked: '250.00', hold: '0.00' });
  });

  it('the same order_id with other parameters is 422 errors.order_id, and changes nothing', async () => {
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '1000');
    expect((await regular(t, m, card('10', { order_id: 'o-2' }))).statusCode).toBe(200);
    for (const payload of [card('11', { order_id: 'o-2' }), card('10', { order_id: 'o-2', card_holder: 'PETR PETROV' }), sbp('10', { order_id: 'o-2' })]) {
      const res = await regular(t, m, payload);
      expect(res.statusCode).toBe(422);
      expect(Object.keys(res.json().errors)).toEqual(['order_id']);
    }
    const acc = await insertAccount(t, m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
    expect((await personal(t, m, { amount: '10', payout_account_id: acc, order_id: 'o-2' })).statusCode).toBe(422);
    expect(await count(m.merchantId)).toBe(1);
    expect(await balance(t, m.merchantId)).toEqual({ available: '990.00', locked: '10.00', hold: '0.00' });
  });

  it('a retry is answered with the stored payouts even when the balance or limits no longer allow a new one', async () => {
    const m = await payoutMerchant(t, { payoutDailyLimit: '100' });
    await fund(t, m.merchantId, '100');
    const first = await regular(t, m, card('100', { order_id: 'o-3' }));
    expect(first.statusCode).toBe(200);
    const retry = await regular(t, m, card('100', { order_id: 'o-3' }));
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual(first.json());
  });

  it('order_id is per merchant: two merchants may use the same one', async () => {
    const a = await payoutMerchant(t);
    const b = await payoutMerchant(t);
    await fund(t, a.merchantId, '100');
    await fund(t, b.merchantId, '100');
    const ra = await regular(t, a, card('10', { order_id: 'shared' }));
    const rb = await regular(t, b, card('10', { order_id: 'shared' }));
    expect(ra.statusCode).toBe(200);
    expect(rb.statusCode).toBe(200);
    expect(ra.json().data[0].id).not.toBe(rb.json().data[0].id);
  });

  it('10 concurrent retries of one order_id make one request: every answer lists the same payouts', async () => {
    const m = await payoutMerchant(t, { payoutMaxCard: '100' });
    await fund(t, m.merchantId, '1000');
    const res = await Promise.all(Array.from({ length: 10 }, () => regular(t, m, card('300', { order_id: 'race' }))));
    expect(res.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    const bodies = res.map((r) => JSON.stringify(r.json()));
    expect(new Set(bodies).size).toBe(1);
    expect(await count(m.merchantId)).toBe(3);
    expect(await balance(t, m.merchantId)).toEqual({ available: '700.00', locked: '300.00', hold: '0.00' });
  });

  it('10 concurrent personal retries of one order_id make one payout', async () => {
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '1000');
    const acc = await insertAccount(t, m.merchantId, { type: 'SBP', identifier: '+79161234567' });
    const res = await Promise.all(Array.from({ length: 10 }, () => personal(t, m, { amount: '5', payout_account_id: acc, order_id: 'p-race' })));
    expect(res.every((r) => r.statusCode === 200)).toBe(true);
    expect(new Set(res.map((r) => r.json().data[0].id)).size).toBe(1);
    expect(await count(m.merchantId)).toBe(1);
  });
});
