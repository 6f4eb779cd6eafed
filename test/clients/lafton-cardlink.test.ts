import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opt, pyDecode, startRig, type PyModel, type Rig } from './harness.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { fund, regular, card } from '../payout/helpers.js';

/**
 * LaFTonTechnology/cardlink (docs/clients.md), AiohttpSession: POST `json=clean_dict(model_dump())`
 * with `Authorization` and `Content-Type: application/json`; GET `?urlencode(model_dump())` with
 * the same two headers and no body. Base URL is the constant https://cardlink.link/api/v1/.
 * `_check_response`: `success` truthy or "true", else APIError(message); the answer (minus
 * `success`) goes through pydantic v2 models: amounts `int | float` (a numeric string passes
 * lax mode too), Payment.created_at strptime("%Y-%m-%d %H:%M:%S"), Balance.balance_available
 * `int` (a fractional balance fails whatever its JSON type), Links with `prev` and `next` keys.
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

const headers = () => ({ Host: '127.0.0.1', Accept: '*/*', 'Accept-Encoding': 'gzip, deflate', 'User-Agent': 'Python/3.12 aiohttp/3.9.5', Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/json' });

class APIError extends Error {}

function check(text: string): Record<string, unknown> {
  const data = JSON.parse(text) as Record<string, unknown>;
  if (data.success || data.success === 'true') {
    delete data.success;
    return data;
  }
  throw new APIError(String(data.message));
}

/** Python's urlencode(dict): str() of each value (True -> "True"). */
const urlencode = (d: Record<string, unknown>) => new URLSearchParams(Object.entries(d).map(([k, v]) => [k, v === true ? 'True' : v === false ? 'False' : String(v)])).toString();

const get = async (m: string, d: Record<string, unknown> = {}) => check((await rig.send('GET', `/api/v1/${m}?${urlencode(d)}`, { headers: headers() })).text);
const post = async (m: string, d: Record<string, unknown>) => check((await rig.send('POST', `/api/v1/${m}`, { headers: headers(), body: JSON.stringify(d) })).text);

const num = (o = true) => (o ? opt('float') : 'float');
const Bill: PyModel = { id: 'str', order_id: opt('str'), active: opt('bool'), status: opt('str'), amount: num(), type: opt('str'), created_at: opt('datetime'), currency_in: opt('str'), ttl: opt('int') };
const Payment: PyModel = {
  id: opt('str'), bill_id: opt('str'), status: opt('str'), amount: num(), commission: num(), account_amount: num(), account_currency_code: opt('str'),
  refunded_amount: num(), from_card: opt('str'), currency_in: opt('str'), created_at: opt('strptime'),
};
const Payout: PyModel = { id: opt('str'), status: opt('str'), order_id: opt('str'), account_identifier: opt('str'), amount: num(), commission: num(), created_at: opt('datetime') };
const Refund: PyModel = { id: opt('str'), status: opt('str'), amount: num(), entity_type: opt('str'), entity_id: opt('str'), created_at: opt('strptime') };
const Balance: PyModel = { currency: 'str', balance_available: 'int', balance_locked: 'Decimal', balance_hold: 'Decimal' };
const Links: PyModel = { prev: opt('str'), next: opt('str') };
const Meta: PyModel = { path: 'str', per_page: 'int', prev_cursor: opt('str'), next_cursor: opt('str') };
/** SearchedPayments and the other searches: `links: Links` and `meta: Meta` are required, and Links' keys must be present. */
const searched = (item: PyModel): PyModel => ({ data: [item], links: Links, meta: Meta });
const expectLinkKeys = (s: Record<string, unknown>) => {
  expect(s.links).toHaveProperty('prev');
  expect(s.links).toHaveProperty('next');
};

describe('LaFTon cardlink', () => {
  it('create_bill: JSON with request_fields as an object of false flags and payment_method "SBP"; success "true" passes _check_response', async () => {
    const r = await post('bill/create', {
      amount: 250, shop_id: rig.m.shopId, type: 'normal', currency_in: 'RUB', payment_method: 'SBP',
      request_fields: { email: false, phone: false, name: false, comment: false },
    });
    expect(r.bill_id).toEqual(expect.any(String));
    const st = await get('bill/status', { id: r.bill_id });
    pyDecode(st, Bill);
    expect(st).toMatchObject({ amount: 250, type: 'NORMAL' });
  });

  it('get_payment and search_payments: Payment decodes (strptime created_at); SearchedPayments needs links.prev/next and meta', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '100.00', commission: '2.00' });
    pyDecode(await get('payment/status', { id: p.paymentId }), Payment);
    const s = await get('payment/search', { shop_id: rig.m.shopId });
    pyDecode(s, searched(Payment));
    expectLinkKeys(s);
  });

  it('get_balance: whole balances decode into the int balance_available', async () => {
    await fund(rig.t, rig.m.merchantId, '300');
    const r = await get('merchant/balance');
    for (const b of r.balances as unknown[]) pyDecode(b, Balance);
  });

  it('get_payout and search_payout decode the payout amounts', async () => {
    await fund(rig.t, rig.m.merchantId, '100');
    const p = (await regular(rig.t, rig.m, card('10'))).json().data[0];
    pyDecode(await get('payout/status', { id: p.id }), Payout);
    const ps = await get('payout/search');
    pyDecode(ps, searched(Payout));
    expectLinkKeys(ps);
  });

  it('refund_full and get_refund by id decode Refund', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '40.00' });
    const r = await post('refund/full/create', { payment_id: p.paymentId });
    pyDecode(r, Refund);
    pyDecode(await get('refund/status', { id: r.id }), Refund);
  });

  it('search_refund decodes SearchedRefund (data, links, meta)', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '60.00' });
    await post('refund/full/create', { payment_id: p.paymentId });
    const s = await get('refund/search', { payment_id: p.paymentId });
    pyDecode(s, searched(Refund));
    expectLinkKeys(s);
  });

  it('bill_payments (id, per_page) decodes SearchedPayments: data plus required links and meta', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '15.00' });
    const s = await get('bill/payments', { id: p.billId, per_page: 10 });
    pyDecode(s, searched(Payment));
    expectLinkKeys(s);
    expect(s.meta).toMatchObject({ per_page: 10 });
  });

  it('an error answer raises APIError with the message', async () => {
    await expect(get('bill/status', { id: 'NoSuchBill1' })).rejects.toThrow('api:error.bill_not_found');
  });

  it('create_bill with ttl 600 and order_id: get_bill answers them (Bill.ttl int, order_id str)', async () => {
    const r = await post('bill/create', { amount: 5, shop_id: rig.m.shopId, type: 'normal', currency_in: 'RUB', order_id: 'lafton-ttl', ttl: 600 });
    const st = await get('bill/status', { id: r.bill_id });
    pyDecode(st, { ...Bill, ttl: 'int', order_id: 'str' });
    expect(st).toMatchObject({ ttl: 600, order_id: 'lafton-ttl' });
  });
});
