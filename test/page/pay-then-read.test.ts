import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payRequest } from '../factories/payment.js';

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t, { merchant: { paymentCardPercent: '2', paymentCardFixed: '1' } });
});
afterAll(async () => { await t.close(); });

const api = (url: string, who: MerchantFixture = m) => t.app.inject({ method: 'GET', url, headers: who.auth });

describe('a payment made on the page, read back through the merchant API', () => {
  it('bill/status, bill/payments, payment/status, payment/search and merchant/balance show it with commission and account fields', async () => {
    const billId = await createBill(t, m, { amount: '200.00', orderId: 'e2e-1' });
    const paid = await payRequest(t, billId, cardForm('4242 4242 4242 4242'));
    const paymentId = paid.json().payment_id;

    const bill = (await api(`/api/v1/bill/status?id=${billId}`)).json();
    expect(bill).toMatchObject({ id: billId, status: 'SUCCESS', amount: 200, type: 'NORMAL', currency_in: 'RUB', success: true });

    const expected = {
      id: paymentId, bill_id: billId, status: 'SUCCESS', amount: 200, amount_received: 200,
      from_card: '424242******4242', currency_in: 'RUB', commission: 5, account_amount: 195, account_currency_code: 'RUB',
    };
    const list = (await api(`/api/v1/bill/payments?id=${billId}`)).json();
    expect(list.success).toBe(true);
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject(expected);

    const status = await api(`/api/v1/payment/status?id=${paymentId}`);
    expect(status.statusCode).toBe(200);
    expect(status.json()).toMatchObject({ ...expected, success: true });
    expect(status.json().created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    const search = await api('/api/v1/payment/search');
    expect(search.statusCode).toBe(200);
    expect(search.json().data.find((p: { id: string }) => p.id === paymentId)).toMatchObject(expected);

    const bal = (await api('/api/v1/merchant/balance')).json();
    const rub = bal.balances.find((b: { currency: string }) => b.currency === 'RUB');
    expect(rub).toMatchObject({ balance_available: '195.00000000', balance_locked: '0.00000000', balance_hold: '0.00000000' });
  });

  it('merchant B never sees merchant A\'s payment', async () => {
    const b = await createMerchant(t);
    const billId = await createBill(t, m);
    const paymentId = (await payRequest(t, billId)).json().payment_id;
    const r = await api(`/api/v1/payment/status?id=${paymentId}`, b);
    expect(r.statusCode).toBe(422);
    expect(r.json().message).toBe('api:error.payment_not_found');
    const rb = await api(`/api/v1/bill/payments?id=${billId}`, b);
    expect(rb.statusCode).toBe(403);
  });
});
