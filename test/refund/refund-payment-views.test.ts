import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { balance, grantedMerchant, refundFull, refundPartial, refundStatus } from './helpers.js';
import type { MerchantFixture } from '../factories/merchant.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const drain = async () => { while ((await t.app.services.refunds.processDue()) > 0); };

const paymentStatus = (m: MerchantFixture, id: string) =>
  t.app.inject({ method: 'GET', url: '/api/v1/payment/status', headers: m.auth, query: { id } });
const billPayments = (m: MerchantFixture, id: string) =>
  t.app.inject({ method: 'GET', url: '/api/v1/bill/payments', headers: m.auth, query: { id } });

/** A real payment through the hosted page (the sandbox acquirer), as a customer makes it. */
async function payByCard(m: MerchantFixture, amount: string, card: string) {
  const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount, shop_id: m.shopId } });
  expect(bill.statusCode).toBe(200);
  const billId = bill.json().bill_id as string;
  const pay = await t.app.inject({
    method: 'POST', url: `/pay/${billId}`, headers: { accept: 'application/json' },
    payload: { method: 'BANK_CARD', card_number: card, card_expiry: '12/39', card_cvc: '123' },
  });
  expect(pay.statusCode).toBe(200);
  expect(pay.json().status).toBe('SUCCESS');
  return { billId, paymentId: pay.json().payment_id as string };
}

describe('refunded_amount in payment views', () => {
  it('payment/status and bill/payments show what was refunded of the payment', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    expect((await paymentStatus(m, p.paymentId)).json().refunded_amount).toBe(0);
    await refundPartial(t, m, p.paymentId, '30.00');
    expect((await paymentStatus(m, p.paymentId)).json().refunded_amount).toBe(30);
    const list = await billPayments(m, p.billId);
    expect(list.json().data[0]).toMatchObject({ id: p.paymentId, refunded_amount: 30 });
    await drain();
    expect((await paymentStatus(m, p.paymentId)).json().refunded_amount).toBe(30);
  });

  it('a failed refund no longer counts as refunded', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00', fromCard: '555555******4444' });
    await refundFull(t, m, p.paymentId);
    expect((await paymentStatus(m, p.paymentId)).json().refunded_amount).toBe(100);
    await drain();
    expect((await paymentStatus(m, p.paymentId)).json().refunded_amount).toBe(0);
  });
});

describe('refunds of payments made through the payment page', () => {
  it('card 4242424242424242: the full refund SUCCEEDS and the balance returns to zero', async () => {
    const m = await grantedMerchant(t);
    const p = await payByCard(m, '150.00', '4242424242424242');
    expect(await balance(t, m.merchantId)).toEqual({ available: '150.00', locked: '0.00', hold: '0.00' });
    const r = await refundFull(t, m, p.paymentId);
    expect(r.json()).toMatchObject({ status: 'NEW', amount: 150, currency: 'RUB', entity_id: p.paymentId });
    await drain();
    expect((await refundStatus(t, m, { payment_id: p.paymentId })).json().status).toBe('SUCCESS');
    expect(await balance(t, m.merchantId)).toEqual({ available: '0.00', locked: '0.00', hold: '0.00' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('card 5555555555554444 pays, and its refund FAILs (sandbox rule): the money stays with the merchant', async () => {
    const m = await grantedMerchant(t);
    const p = await payByCard(m, '80.00', '5555555555554444');
    await refundFull(t, m, p.paymentId);
    await drain();
    expect((await refundStatus(t, m, { payment_id: p.paymentId })).json().status).toBe('FAIL');
    expect(await balance(t, m.merchantId)).toEqual({ available: '80.00', locked: '0.00', hold: '0.00' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });
});
