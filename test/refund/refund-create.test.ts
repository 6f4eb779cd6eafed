import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import {
  balance, debitAvailable, expect422, grantedMerchant, refundCount, refundFull, refundPartial, refundStatus, refundedAmount,
} from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

describe('refund/full/create and refund/partial/create', () => {
  it('a full refund of a paid payment answers the spec Refund fields as NEW, for what it received', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const res = await refundFull(t, m, p.paymentId);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(String), status: 'NEW', amount: 100, currency: 'RUB', entity_type: 'payment',
      entity_id: p.paymentId, created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/), success: true,
    });
    expect(Object.keys(body).sort()).toEqual(['amount', 'created_at', 'currency', 'entity_id', 'entity_type', 'id', 'status', 'success']);
  });

  it('creating a refund moves its amount from available to locked and records it on the payment', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const res = await refundPartial(t, m, p.paymentId, '30.50');
    expect(res.statusCode).toBe(200);
    expect(res.json().amount).toBe(30.5);
    expect(await balance(t, m.merchantId)).toEqual({ available: '69.50', locked: '30.50', hold: '0.00' });
    expect(await refundedAmount(t, p.paymentId)).toBe('30.50');
    const e = await t.db.pool.query(
      `SELECT t.kind, e.debit_account, e.credit_account, e.amount::text FROM ledger_transfers t JOIN ledger_entries e ON e.transfer_id = t.id WHERE t.ref_id = $1`,
      [res.json().id]);
    expect(e.rows).toEqual([{ kind: 'REFUND_LOCK', debit_account: `RUB:merchant:${m.merchantId}:available`, credit_account: `RUB:merchant:${m.merchantId}:locked`, amount: '30.50000000' }]);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a full refund after partial refunds refunds what is left', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    expect((await refundPartial(t, m, p.paymentId, '30')).statusCode).toBe(200);
    expect((await refundPartial(t, m, p.paymentId, 10.25)).statusCode).toBe(200);
    const full = await refundFull(t, m, p.paymentId);
    expect(full.statusCode).toBe(200);
    expect(full.json().amount).toBe(59.75);
    expect(await refundedAmount(t, p.paymentId)).toBe('100.00');
    expect(await balance(t, m.merchantId)).toEqual({ available: '0.00', locked: '100.00', hold: '0.00' });
  });

  it('a fully refunded payment cannot be refunded again (full: errors.payment_id, partial: errors.amount)', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '50.00' });
    await createPaidPayment(t, m, { amount: '500.00' }); // money on the balance: only the payment's bound refuses
    expect((await refundFull(t, m, p.paymentId)).statusCode).toBe(200);
    expect422(await refundFull(t, m, p.paymentId), 'payment_id');
    expect422(await refundPartial(t, m, p.paymentId, '0.01'), 'amount');
    expect(await refundCount(t, p.paymentId)).toBe(1);
    expect(await refundedAmount(t, p.paymentId)).toBe('50.00');
  });

  it('the sum of refunds never exceeds what the payment received: more than is left is 422 errors.amount and changes nothing', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    await createPaidPayment(t, m, { amount: '1000.00' });
    expect((await refundPartial(t, m, p.paymentId, '60')).statusCode).toBe(200);
    const res = await refundPartial(t, m, p.paymentId, '40.01');
    expect422(res, 'amount');
    expect(res.json().errors.amount[0]).toContain('40.00');
    expect(await refundedAmount(t, p.paymentId)).toBe('60.00');
    expect(await refundCount(t, p.paymentId)).toBe(1);
    expect(await balance(t, m.merchantId)).toEqual({ available: '1040.00', locked: '60.00', hold: '0.00' });
    expect((await refundPartial(t, m, p.paymentId, '40.00')).statusCode).toBe(200);
  });

  it('refunds are bounded by what the payment received before commission: the customer gets back what they paid', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00', commission: '3.00' });
    await createPaidPayment(t, m, { amount: '1000.00' });
    expect422(await refundPartial(t, m, p.paymentId, '100.01'), 'amount');
    const full = await refundFull(t, m, p.paymentId);
    expect(full.json().amount).toBe(100);
  });

  it('the commission is not returned: a full refund needs more than the payment credited, else balance_not_enough', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00', commission: '3.00' });
    const r = await refundFull(t, m, p.paymentId);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ success: false, message: 'api:error.balance_not_enough' });
    expect((await refundPartial(t, m, p.paymentId, '97.00')).statusCode).toBe(200);
  });

  it('a USD payment is refunded in USD from the USD balance, bounded by its USD credit', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '10.00', currency: 'USD', rate: '92.5' });
    expect422(await refundPartial(t, m, p.paymentId, '10.01'), 'amount');
    const res = await refundPartial(t, m, p.paymentId, '4.00');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ amount: 4, currency: 'USD' });
    expect(await balance(t, m.merchantId, 'USD')).toEqual({ available: '6.00', locked: '4.00', hold: '0.00' });
    expect(await balance(t, m.merchantId, 'RUB')).toEqual({ available: '0.00', locked: '0.00', hold: '0.00' });
    expect((await refundFull(t, m, p.paymentId)).json()).toMatchObject({ amount: 6, currency: 'USD' });
  });

  it('a sub-cent remainder of a converted credit is not refundable: the full refund takes whole cents', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '1.08', currency: 'EUR', accountAmount: '1.08108108' });
    expect((await refundFull(t, m, p.paymentId)).json()).toMatchObject({ amount: 1.08, currency: 'EUR' });
    expect422(await refundFull(t, m, p.paymentId), 'payment_id');
  });

  it('without enough available balance: 400 api:error.balance_not_enough, and nothing is stored', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    await debitAvailable(t, m.merchantId, '60');
    const res = await refundFull(t, m, p.paymentId);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'api:error.balance_not_enough' });
    const partial = await refundPartial(t, m, p.paymentId, '40.01');
    expect(partial.statusCode).toBe(400);
    expect(partial.json().message).toBe('api:error.balance_not_enough');
    expect(await refundCount(t, p.paymentId)).toBe(0);
    expect(await refundedAmount(t, p.paymentId)).toBe('0.00');
    expect(await balance(t, m.merchantId)).toEqual({ available: '40.00', locked: '0.00', hold: '0.00' });
    expect((await refundPartial(t, m, p.paymentId, '40.00')).statusCode).toBe(200);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('only a payment that received money can be refunded: FAIL, NEW and PROCESS payments are 422 errors.payment_id', async () => {
    const m = await grantedMerchant(t);
    await createPaidPayment(t, m, { amount: '1000.00' });
    for (const status of ['FAIL', 'NEW', 'PROCESS'] as const) {
      const p = await createPaidPayment(t, m, { amount: '100.00', status });
      expect422(await refundFull(t, m, p.paymentId), 'payment_id');
      expect422(await refundPartial(t, m, p.paymentId, '1'), 'payment_id');
      expect(await refundCount(t, p.paymentId)).toBe(0);
    }
  });

  it('UNDERPAID and OVERPAID payments received money and can be refunded', async () => {
    const m = await grantedMerchant(t);
    const under = await createPaidPayment(t, m, { amount: '100.00', status: 'UNDERPAID', accountAmount: '80' });
    const over = await createPaidPayment(t, m, { amount: '100.00', status: 'OVERPAID', accountAmount: '120' });
    expect((await refundFull(t, m, under.paymentId)).json().amount).toBe(80);
    expect((await refundFull(t, m, over.paymentId)).json().amount).toBe(120);
  });

  it('an unknown payment is 422 errors.payment_id', async () => {
    const m = await grantedMerchant(t);
    expect422(await refundFull(t, m, 'nope'), 'payment_id');
    expect422(await refundPartial(t, m, 'nope', '1'), 'payment_id');
  });

  it('a payment of another merchant is not found (422 errors.payment_id), and stays untouched', async () => {
    const a = await grantedMerchant(t);
    const b = await grantedMerchant(t);
    await createPaidPayment(t, b, { amount: '1000.00' });
    const pa = await createPaidPayment(t, a, { amount: '100.00' });
    expect422(await refundFull(t, b, pa.paymentId), 'payment_id');
    expect422(await refundPartial(t, b, pa.paymentId, '1'), 'payment_id');
    expect(await refundCount(t, pa.paymentId)).toBe(0);
    expect(await balance(t, a.merchantId)).toEqual({ available: '100.00', locked: '0.00', hold: '0.00' });
    expect(await balance(t, b.merchantId)).toEqual({ available: '1000.00', locked: '0.00', hold: '0.00' });
  });

  it('input validation: missing payment_id or amount, non-numeric, zero, negative, 3 decimals, too large -> 422 naming the field', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    expect422(await refundFull(t, m, undefined), 'payment_id');
    expect422(await refundPartial(t, m, undefined, '1'), 'payment_id');
    expect422(await refundPartial(t, m, p.paymentId, undefined), 'amount');
    for (const bad of ['abc', '0', '-5', '1.005', '100000000.00', '1e3x', true, [1, 2]]) {
      expect422(await refundPartial(t, m, p.paymentId, bad), 'amount');
    }
    expect422(await refundFull(t, m, { nested: 1 }), 'payment_id');
    expect(await refundCount(t, p.paymentId)).toBe(0);
    expect(await balance(t, m.merchantId)).toEqual({ available: '100.00', locked: '0.00', hold: '0.00' });
  });

  it('accepts form-urlencoded and multipart bodies, and a query string', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const form = await t.app.inject({
      method: 'POST', url: '/api/v1/refund/partial/create',
      headers: { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `payment_id=${p.paymentId}&amount=10.00`,
    });
    expect(form.statusCode).toBe(200);
    const boundary = 'XyZ';
    const multipart = await t.app.inject({
      method: 'POST', url: '/api/v1/refund/partial/create',
      headers: { ...m.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: [`--${boundary}`, 'Content-Disposition: form-data; name="payment_id"', '', p.paymentId,
        `--${boundary}`, 'Content-Disposition: form-data; name="amount"', '', '5', `--${boundary}--`, ''].join('\r\n'),
    });
    expect(multipart.statusCode).toBe(200);
    const query = await t.app.inject({ method: 'POST', url: `/api/v1/refund/full/create?payment_id=${p.paymentId}`, headers: m.auth });
    expect(query.statusCode).toBe(200);
    expect(query.json().amount).toBe(85);
  });
});

describe('refund endpoints: authentication, ban and grant', () => {
  it('without a valid token: 401 Unauthenticated', async () => {
    for (const [method, url] of [['POST', '/api/v1/refund/full/create'], ['POST', '/api/v1/refund/partial/create'], ['GET', '/api/v1/refund/status']] as const) {
      const none = await t.app.inject({ method, url });
      expect(none.statusCode).toBe(401);
      expect(none.json().message).toBe('Unauthenticated.');
      const bad = await t.app.inject({ method, url, headers: { authorization: 'Bearer wrong' } });
      expect(bad.statusCode).toBe(401);
    }
  });

  it('without the refund grant: 403 "This action is unauthorized." on all three, and nothing changes', async () => {
    const m = await createMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    for (const res of [
      await refundFull(t, m, p.paymentId),
      await refundPartial(t, m, p.paymentId, '10'),
      await refundStatus(t, m, { payment_id: p.paymentId }),
      await refundFull(t, m, undefined), // the grant is checked before the input
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ success: false, message: 'This action is unauthorized.' });
    }
    expect(await refundCount(t, p.paymentId)).toBe(0);
    expect(await balance(t, m.merchantId)).toEqual({ available: '100.00', locked: '0.00', hold: '0.00' });
  });

  it('a banned merchant: 403 api:error.merchant_banned on all three, and nothing changes', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    await t.db.prisma.merchant.update({ where: { id: m.merchantId }, data: { status: 'BANNED' } });
    for (const res of [
      await refundFull(t, m, p.paymentId),
      await refundPartial(t, m, p.paymentId, '10'),
      await refundStatus(t, m, { payment_id: p.paymentId }),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ success: false, message: 'api:error.merchant_banned' });
    }
    expect(await refundCount(t, p.paymentId)).toBe(0);
  });

  it('refunds list no subscription keys: a merchant without an active subscription can still refund', async () => {
    const m = await grantedMerchant(t, { subscription: 'INACTIVE' });
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    expect((await refundFull(t, m, p.paymentId)).statusCode).toBe(200);
  });
});
