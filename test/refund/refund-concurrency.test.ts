import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { balance, debitAvailable, grantedMerchant, refundCount, refundFull, refundPartial, refundedAmount } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

describe('refunds under concurrency', () => {
  it('two partial refunds racing for the last rouble: 10 concurrent refunds of 60 on a 100 payment -> exactly one', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    await createPaidPayment(t, m, { amount: '10000.00' }); // the balance is not what stops them
    const results = await Promise.all(Array.from({ length: 10 }, () => refundPartial(t, m, p.paymentId, '60.00')));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    const refused = results.filter((r) => r.statusCode !== 200);
    expect(refused).toHaveLength(9);
    for (const r of refused) {
      expect(r.statusCode).toBe(422);
      expect(r.json().errors.amount).toHaveLength(1);
    }
    expect(await refundCount(t, p.paymentId)).toBe(1);
    expect(await refundedAmount(t, p.paymentId)).toBe('60.00');
    expect(await balance(t, m.merchantId)).toEqual({ available: '10040.00', locked: '60.00', hold: '0.00' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('20 concurrent full refunds of one payment -> exactly one refund of the whole amount', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '250.00' });
    const results = await Promise.all(Array.from({ length: 20 }, () => refundFull(t, m, p.paymentId)));
    const ok = results.filter((r) => r.statusCode === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.json().amount).toBe(250);
    expect(results.filter((r) => r.statusCode === 422)).toHaveLength(19);
    expect(await refundCount(t, p.paymentId)).toBe(1);
    expect(await balance(t, m.merchantId)).toEqual({ available: '0.00', locked: '250.00', hold: '0.00' });
  });

  it('concurrent partial refunds of 10 on a 100 payment: exactly 10 succeed and their sum is what it received', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const results = await Promise.all(Array.from({ length: 20 }, () => refundPartial(t, m, p.paymentId, '10')));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(10);
    expect(results.filter((r) => r.statusCode === 422)).toHaveLength(10);
    expect(await refundedAmount(t, p.paymentId)).toBe('100.00');
    expect(await balance(t, m.merchantId)).toEqual({ available: '0.00', locked: '100.00', hold: '0.00' });
  });

  it('refunds of different payments racing for one balance never overdraw it: the loser gets balance_not_enough and leaves no trace', async () => {
    const m = await grantedMerchant(t);
    const p1 = await createPaidPayment(t, m, { amount: '100.00' });
    const p2 = await createPaidPayment(t, m, { amount: '100.00' });
    await debitAvailable(t, m.merchantId, '50'); // 150 available: room for one full refund only
    const [r1, r2] = await Promise.all([refundFull(t, m, p1.paymentId), refundFull(t, m, p2.paymentId)]);
    const codes = [r1.statusCode, r2.statusCode].sort();
    expect(codes).toEqual([200, 400]);
    const loser = r1.statusCode === 400 ? r1 : r2;
    expect(loser.json().message).toBe('api:error.balance_not_enough');
    const loserPayment = r1.statusCode === 400 ? p1 : p2;
    expect(await refundCount(t, loserPayment.paymentId)).toBe(0);
    expect(await refundedAmount(t, loserPayment.paymentId)).toBe('0.00');
    expect(await balance(t, m.merchantId)).toEqual({ available: '50.00', locked: '100.00', hold: '0.00' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a retried refund with the same Idempotency-Key creates one refund and answers the same one', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const send = () => t.app.inject({
      method: 'POST', url: '/api/v1/refund/partial/create', headers: { ...m.auth, 'idempotency-key': `refund-${p.paymentId}` },
      payload: { payment_id: p.paymentId, amount: '10.00' },
    });
    const first = await send();
    const retry = await send();
    expect(first.statusCode).toBe(200);
    expect(retry.statusCode).toBe(200);
    expect(retry.json().id).toBe(first.json().id);
    expect(await refundCount(t, p.paymentId)).toBe(1);
    expect(await refundedAmount(t, p.paymentId)).toBe('10.00');
  });
});
