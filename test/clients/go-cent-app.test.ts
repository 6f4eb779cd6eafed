import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodeError, goDecode, startRig, type GoStruct, type Rig } from './harness.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { fund, insertAccount } from '../payout/helpers.js';

/**
 * plin2k/go-cent-app (docs/clients.md). Its base URL is the constant https://cent.app; the
 * replay sends the same requests to our origin. Every call goes through `request()`: the
 * url.Values encoded (keys sorted) as the query string on GET AND as the body of every request,
 * `Content-Type: application/x-www-form-urlencoded`, `Authorization: Bearer <token>`; answers
 * are unmarshalled into structs whose amounts are `float64` and balances `float64 ,string`.
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig({ payoutCardPercent: '1', payoutCardFixed: '0.40' }); });
afterAll(async () => { await rig.close(); });

/** Go's url.Values.Encode(): keys sorted, form escaping. */
const encode = (params: Record<string, string>): string =>
  new URLSearchParams(Object.keys(params).sort().map((k) => [k, params[k]!])).toString();

/** fmt.Sprintf("%g", f): shortest digits, exponent form from 1e+06 up (and below 1e-4). */
function goG(x: number): string {
  if (x === 0) return '0';
  const exp = Math.floor(Math.log10(Math.abs(x)));
  if (exp < -4 || exp >= 6) {
    const [mant, e] = x.toExponential().split('e');
    const n = Number(e);
    return `${mant}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
  }
  return String(x);
}

const ERRORS: Record<number, Record<string, string>> = {
  401: { Unauthenticated: 'Invalid API Token' },
  403: { 'api:error.bill_is_finished': 'Bill is paid in case of NORMAL bill', 'api:error.merchant_banned': 'Merchant is blocked' },
  422: { '': 'Invalid data in request', 'api:error.bill_not_found': "Bill doesn't exist", 'api:error.payout_not_found': 'Payout is not found', 'api:error.payment_not_found': 'Payment is not found' },
  400: { 'api:error.balance_not_enough': 'Not enough balance for payout' },
  500: { 'api:error.general_error': 'Internal error' },
};

/** api.request(method, url, params) followed by json.Unmarshal into `into`. */
async function call(method: 'GET' | 'POST', path: string, params: Record<string, string>, into: GoStruct, token = rig.m.token) {
  const enc = encode(params);
  const url = method === 'GET' ? `${path}?${enc}` : path;
  const w = await rig.send(method, url, {
    headers: { 'User-Agent': 'Go-http-client/1.1', 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Bearer ${token}` },
    body: enc === '' ? undefined : enc,
  });
  let error: string | null = null;
  if (ERRORS[w.status]) {
    const msg = (JSON.parse(w.text) as { message?: string }).message ?? '';
    error = ERRORS[w.status]![msg] ?? msg;
  }
  const body = JSON.parse(w.text) as Record<string, unknown>;
  if (error === null) goDecode(body, into);
  return { status: w.status, body, error, text: w.text };
}

const bill: GoStruct = { id: 'string', status: 'string', amount: 'float64', type: 'string', currency_in: 'string', created_at: 'time' };
const payment: GoStruct = { id: 'string', status: 'string', amount: 'float64', amount_received: 'float64', from_card: 'string', currency_in: 'string', created_at: 'time' };
const payout: GoStruct = { id: 'string', status: 'string', amount: 'float64', commission: 'float64', account_identifier: 'string', currency: 'string', created_at: 'time' };
const balance: GoStruct = { currency: 'string', balance_available: 'float64,string', balance_locked: 'float64,string', balance_hold: 'float64,string' };

const billCreateResponse: GoStruct = { success: 'bool,string', link_url: 'string', link_page_url: 'string', bill_id: 'string' };
const billStatusResponse: GoStruct = { ...bill, success: 'bool' };
const billToggleActivityResponse: GoStruct = { ...bill, active: 'bool', success: 'bool' };
const paymentsResponse: GoStruct = { data: [payment], success: 'bool' };
const billsResponse: GoStruct = { data: [bill], success: 'bool' };
const paymentStatusResponse: GoStruct = { ...payment, success: 'bool' };
const merchantBalanceResponse: GoStruct = { balances: [balance], success: 'bool,string' };
const payoutsResponse: GoStruct = { data: [payout], success: 'bool' };

const today = () => new Date().toLocaleDateString('sv-SE', { timeZone: 'Europe/Moscow' });

describe('go-cent-app', () => {
  it('the Go decoder of this file refuses a string where go-cent-app has float64 (the old wire form)', () => {
    expect(() => goDecode({ amount: '100.50' }, { amount: 'float64' })).toThrow(DecodeError);
    expect(() => goDecode({ balance_available: 1.5 }, { balance_available: 'float64,string' })).toThrow(DecodeError);
  });

  it('BillCreate: form POST, amount as %g, payer_pays_commission 0, type lower-case; success decodes with ,string', async () => {
    expect(goG(999999.5)).toBe('999999.5');
    const r = await call('POST', '/api/v1/bill/create', {
      amount: goG(999999.5), order_id: 'go-1', description: 'Go order', type: 'normal', shop_id: rig.m.shopId,
      currency_in: 'RUB', custom: 'c1', payer_pays_commission: '0', name: 'Go shop',
    }, billCreateResponse);
    expect(r.error, r.text).toBeNull();
    expect(r.body).toMatchObject({ success: 'true', bill_id: expect.any(String) });
    const st = await call('GET', '/api/v1/bill/status', { id: r.body.bill_id as string }, billStatusResponse);
    expect(st.body).toMatchObject({ amount: 999999.5, type: 'NORMAL', success: true });
  });

  it('BillCreate of a million: %g writes 1e+06, not the amount format: 422 naming it, no bill (docs/adr/0077-one-amount-format.md)', async () => {
    expect(goG(1000000)).toBe('1e+06');
    const before = (await rig.t.db.pool.query('SELECT count(*)::int AS n FROM bills')).rows[0].n;
    const r = await call('POST', '/api/v1/bill/create', { amount: goG(1000000), shop_id: rig.m.shopId, type: 'normal', payer_pays_commission: '0' }, billCreateResponse);
    expect(r.status).toBe(422);
    expect((r.body.errors as Record<string, string[]>).amount![0]).toMatch(/digits with an optional dot/);
    expect((await rig.t.db.pool.query('SELECT count(*)::int AS n FROM bills')).rows[0].n).toBe(before);
  });

  it('BillStatus and BillToggleActivity decode: amount float64 (100.5), created_at "2006-01-02 15:04:05", active bool', async () => {
    const created = await call('POST', '/api/v1/bill/create', { amount: goG(100.5), shop_id: rig.m.shopId, type: 'multi', payer_pays_commission: '1' }, billCreateResponse);
    const id = created.body.bill_id as string;
    const st = await call('GET', '/api/v1/bill/status', { id }, billStatusResponse);
    expect(st.error, st.text).toBeNull();
    expect(st.body).toMatchObject({ id, status: 'NEW', amount: 100.5, type: 'MULTI', currency_in: 'RUB', success: true });
    const off = await call('POST', '/api/v1/bill/toggle_activity', { id, active: '0' }, billToggleActivityResponse);
    expect(off.error, off.text).toBeNull();
    expect(off.body).toMatchObject({ id, active: false, amount: 100.5, success: true });
  });

  it('BillPayments, PaymentStatus and PaymentSearch decode amount and amount_received as float64', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '250.75', commission: '2.50' });
    const list = await call('GET', '/api/v1/bill/payments', { id: p.billId }, paymentsResponse);
    expect(list.error, list.text).toBeNull();
    expect(list.body.data).toEqual([expect.objectContaining({ id: p.paymentId, amount: 250.75, amount_received: 250.75, from_card: '424242******4242' })]);
    const st = await call('GET', '/api/v1/payment/status', { id: p.paymentId }, paymentStatusResponse);
    expect(st.error, st.text).toBeNull();
    expect(st.body).toMatchObject({ id: p.paymentId, status: 'SUCCESS', amount: 250.75, success: true });
    const search = await call('GET', '/api/v1/payment/search', { start_date: today(), finish_date: today(), shop_id: rig.m.shopId }, paymentsResponse);
    expect(search.error, search.text).toBeNull();
    expect((search.body.data as { id: string }[]).map((x) => x.id)).toContain(p.paymentId);
  });

  it('BillSearch by YYYY-MM-DD dates and shop_id decodes every bill', async () => {
    const r = await call('GET', '/api/v1/bill/search', { start_date: today(), finish_date: today(), shop_id: rig.m.shopId }, billsResponse);
    expect(r.error, r.text).toBeNull();
    expect((r.body.data as unknown[]).length).toBeGreaterThan(0);
  });

  it('MerchantBalance: GET with no parameters; balances decode with float64 ,string and success with bool ,string', async () => {
    await fund(rig.t, rig.m.merchantId, '1000.25');
    const r = await call('GET', '/api/v1/merchant/balance', {}, merchantBalanceResponse);
    expect(r.error, r.text).toBeNull();
    expect(r.body.balances).toContainEqual(expect.objectContaining({ currency: 'RUB', balance_available: expect.stringMatching(/^\d+\.\d{8}$/) }));
  });

  it('PayoutRegularCreate (card, no account_bank, no order_id), PayoutStatus and PayoutSearch decode amount and commission as float64', async () => {
    await fund(rig.t, rig.m.merchantId, '500');
    const r = await call('POST', '/api/v1/payout/regular/create', {
      amount: goG(12.5), currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN IVANOV',
    }, payoutsResponse);
    expect(r.error, r.text).toBeNull();
    const p = (r.body.data as Record<string, unknown>[])[0]!;
    expect(p).toMatchObject({ amount: 12.5, commission: 0.53, account_identifier: '424242******4242', currency: 'RUB' });
    const st = await call('GET', '/api/v1/payout/status', { id: p.id as string }, payout);
    expect(st.error, st.text).toBeNull();
    expect(st.body).toMatchObject({ id: p.id, amount: 12.5, commission: 0.53 });
    const search = await call('GET', '/api/v1/payout/search', { start_date: today(), finish_date: today() }, payoutsResponse);
    expect(search.error, search.text).toBeNull();
    expect((search.body.data as { id: string }[]).map((x) => x.id)).toContain(p.id);
  });

  it('PayoutPersonalCreate to a stored account decodes the payout list', async () => {
    await fund(rig.t, rig.m.merchantId, '100');
    const account = await insertAccount(rig.t, rig.m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
    const r = await call('POST', '/api/v1/payout/personal/create', { amount: goG(20), payout_account_id: account }, payoutsResponse);
    expect(r.error, r.text).toBeNull();
    expect((r.body.data as unknown[])[0]).toMatchObject({ amount: 20, currency: 'RUB' });
  });

  it('errors come back as the "message" errorHandle maps: 401 Unauthenticated., 422 bill_not_found', async () => {
    const unauth = await call('GET', '/api/v1/bill/status', { id: 'x' }, billStatusResponse, 'wrong-token');
    expect(unauth).toMatchObject({ status: 401, error: 'Unauthenticated.' });
    const missing = await call('GET', '/api/v1/bill/status', { id: 'NoSuchBill1' }, billStatusResponse);
    expect(missing).toMatchObject({ status: 422, error: "Bill doesn't exist" });
  });
});
