import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, startRig, type Rig } from './harness.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { fund } from '../payout/helpers.js';

/**
 * Tellarion/Paypalych (docs/clients.md): one cURL call for everything, base URL the constant
 * https://paypalych.com/api/v1/. POST: CURLOPT_POST with CURLOPT_POSTFIELDS =
 * http_build_query($params) (cURL adds Content-Type: application/x-www-form-urlencoded). GET:
 * CURLOPT_CUSTOMREQUEST "GET" with the same CURLOPT_POSTFIELDS: the parameters travel ONLY as a
 * form body of the GET, never in the query. The raw answer is returned to the caller.
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

async function getResponse(route: string, method: 'GET' | 'POST', params: Record<string, string | number> = {}) {
  const body = form(params);
  const w = await rig.send(method, `/api/v1/${route}`, {
    headers: {
      Host: '127.0.0.1', 'User-Agent': 'composer require tellarion/paypalych V-Agent', Accept: '*/*',
      Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/x-www-form-urlencoded',
    },
    body,
  });
  return { status: w.status, json: JSON.parse(w.text) as Record<string, unknown> };
}

describe('Tellarion/Paypalych', () => {
  it('billCreate: form POST, a PHP float amount as http_build_query writes it', async () => {
    const r = await getResponse('bill/create', 'POST', { amount: 100.5, shop_id: rig.m.shopId, order_id: 'php-1' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 'true', bill_id: expect.any(String) });
  });

  it('billStatus, billPayments, billToggleActivity: the GET parameters only in a form body', async () => {
    const id = (await getResponse('bill/create', 'POST', { amount: 20, shop_id: rig.m.shopId, type: 'multi' })).json.bill_id as string;
    expect((await getResponse('bill/status', 'GET', { id })).json).toMatchObject({ id, amount: 20, success: true });
    expect((await getResponse('bill/payments', 'GET', { id })).json).toMatchObject({ data: [], success: true });
    expect((await getResponse('bill/toggle_activity', 'POST', { id, active: 0 })).json).toMatchObject({ active: false });
  });

  it('paymentStatus and paymentSearch with form bodies on GET; merchantBalance with an empty body', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '55.00' });
    expect((await getResponse('payment/status', 'GET', { id: p.paymentId })).json).toMatchObject({ id: p.paymentId, amount: 55 });
    const day = new Date().toLocaleDateString('sv-SE', { timeZone: 'Europe/Moscow' });
    const s = (await getResponse('payment/search', 'GET', { start_date: day, finish_date: day })).json;
    expect((s.data as { id: string }[]).map((x) => x.id)).toContain(p.paymentId);
    expect((await getResponse('merchant/balance', 'GET')).json).toMatchObject({ success: 'true' });
  });

  it('payoutRegularCreate, payoutStatus and payoutSearch', async () => {
    await fund(rig.t, rig.m.merchantId, '100');
    const created = await getResponse('payout/regular/create', 'POST', { amount: 10, currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN IVANOV' });
    expect(created.status).toBe(200);
    const id = (created.json.data as { id: string }[])[0]!.id;
    expect((await getResponse('payout/status', 'GET', { id })).json).toMatchObject({ id, amount: 10 });
    expect(((await getResponse('payout/search', 'GET')).json.data as unknown[]).length).toBeGreaterThan(0);
  });

  it('testValid: GET "payment/status?id=…" with an empty body answers the keyed 422', async () => {
    const w = await rig.send('GET', '/api/v1/payment/status?id=lGPmp4mYeE', { headers: { Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(w.status).toBe(422);
    expect(JSON.parse(w.text)).toEqual({ success: false, message: 'api:error.payment_not_found' });
  });
});
