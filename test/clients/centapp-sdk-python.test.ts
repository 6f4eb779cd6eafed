import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, startRig, type Rig } from './harness.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { fund, insertAccount } from '../payout/helpers.js';

/**
 * hteppl/centapp-sdk-python (docs/clients.md): `requests.request(method, url, params=data,
 * data=data)`, so every call with parameters sends them twice, in the query string and as a
 * form body (POST and GET alike); None values are dropped by requests. The base URL is the
 * module variable `base_url`. Answers are returned as `response.json()`, undecoded; a non-2xx
 * status is only printed.
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

async function request(method: 'GET' | 'POST', section: string, endpoint: string, data?: Record<string, string | number | null>) {
  const enc = data ? form(data) : '';
  const headers: Record<string, string> = {
    'User-Agent': 'python-requests/2.31.0', 'Accept-Encoding': 'gzip, deflate', Accept: '*/*', Connection: 'keep-alive',
    Authorization: `Bearer ${rig.m.token}`,
  };
  if (enc) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  const w = await rig.send(method, `/api/v1/${section}/${endpoint}${enc ? `?${enc}` : ''}`, { headers, body: enc || undefined });
  return { status: w.status, json: JSON.parse(w.text) as Record<string, unknown> };
}

describe('centapp-sdk-python', () => {
  it('bill.create: parameters in the query and the form body; str(float) amount, payer_pays_commission int(True), type "normal"', async () => {
    const r = await request('POST', 'bill', 'create', {
      amount: '100.0', order_id: null, description: null, type: 'normal', shop_id: rig.m.shopId, currency_in: 'RUB',
      custom: null, payer_pays_commission: 1, name: null,
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 'true', bill_id: expect.any(String), link_page_url: expect.any(String) });
  });

  it('bill.status, bill.toggle_activity, bill.payments and bill.search answer JSON the caller can read', async () => {
    const created = (await request('POST', 'bill', 'create', { amount: '25.5', type: 'multi', shop_id: rig.m.shopId, currency_in: 'RUB', payer_pays_commission: 0 })).json;
    const id = created.bill_id as string;
    expect((await request('GET', 'bill', 'status', { id })).json).toMatchObject({ id, amount: 25.5, success: true });
    expect((await request('POST', 'bill', 'toggle_activity', { id, active: 0 })).json).toMatchObject({ id, active: false });
    expect((await request('GET', 'bill', 'payments', { id })).json).toMatchObject({ data: [], success: true });
    const day = new Date().toLocaleDateString('sv-SE', { timeZone: 'Europe/Moscow' });
    const search = (await request('GET', 'bill', 'search', { start_date: day, finish_date: day, shop_id: rig.m.shopId })).json;
    expect((search.data as { id: string }[]).map((b) => b.id)).toContain(id);
  });

  it('payment.status, payment.search and merchant.balance (no parameters: no body, no query)', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '40.00' });
    expect((await request('GET', 'payment', 'status', { id: p.paymentId })).json).toMatchObject({ id: p.paymentId, amount: 40, success: true });
    const search = (await request('GET', 'payment', 'search', { shop_id: rig.m.shopId })).json;
    expect((search.data as { id: string }[]).map((x) => x.id)).toContain(p.paymentId);
    const balance = (await request('GET', 'merchant', 'balance')).json;
    expect(balance).toMatchObject({ success: 'true', balances: expect.any(Array) });
  });

  it('payout.personal_create, payout.regular_create (account_type credit_card) and payout.search', async () => {
    await fund(rig.t, rig.m.merchantId, '1000');
    const account = await insertAccount(rig.t, rig.m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
    const personal = await request('POST', 'payout', 'personal/create', { amount: '15.5', payout_account_id: account });
    expect(personal.status).toBe(200);
    expect((personal.json.data as unknown[])[0]).toMatchObject({ amount: 15.5 });
    const regular = await request('POST', 'payout', 'regular/create', {
      amount: '20.0', currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN IVANOV',
    });
    expect(regular.status).toBe(200);
    const search = (await request('GET', 'payout', 'search', {})).json;
    expect((search.data as unknown[]).length).toBe(2);
  });

  it('payout.status sends the id as payout_id (an alias of id in the wild)', async () => {
    await fund(rig.t, rig.m.merchantId, '100');
    const regular = await request('POST', 'payout', 'regular/create', {
      amount: '5.0', currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN IVANOV',
    });
    const id = (regular.json.data as { id: string }[])[0]!.id;
    const r = await request('GET', 'payout', 'status', { payout_id: id });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toMatchObject({ id, amount: 5, success: true });
  });
});
