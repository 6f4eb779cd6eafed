import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOf, pyDecode, startRig, type PyModel, type Rig } from './harness.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { fund } from '../payout/helpers.js';

/**
 * LuK050/cardlinky (docs/clients.md), its pydantic 1.10 version (requirements.txt): `requests`
 * with `json=` on GET and POST alike (a JSON body, no query string), base URL `<origin>/api/v1/`
 * + path. Before the model it replaces status/type/currency by enums and parses created_at with
 * strptime("%Y-%m-%d %H:%M:%S"); amounts are `float` fields. Errors: `json["success"]` falsy ->
 * the first message of `errors`, else `message`.
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

const STATUS = ['NEW', 'MODERATING', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL', 'ERROR', 'DECLINED'] as const;
const CURRENCY = ['USD', 'RUB', 'EUR'] as const;
const BILL_TYPE = ['NORMAL', 'MULTI'] as const;

const Bill: PyModel = { id: 'str1', status: oneOf(STATUS), active: 'bool', amount: 'float', type: oneOf(BILL_TYPE), currency_in: oneOf(CURRENCY), created_at: 'strptime' };
const BillCreate: PyModel = { success: 'bool', link_url: 'str1', link_page_url: 'str1', bill_id: 'str1' };
const BillStatus: PyModel = { ...Bill, success: 'bool' };
const BillToggleActivity: PyModel = { ...Bill, success: 'bool' };
const Payment: PyModel = {
  id: 'str1', bill_id: 'str1', status: oneOf(STATUS), amount: 'float', commission: 'float', currency_in: oneOf(CURRENCY),
  account_amount: 'float', account_currency_code: oneOf(CURRENCY), from_card: 'str1', created_at: 'strptime',
};
const PaymentStatus: PyModel = { ...Payment, success: 'bool' };
const Balance: PyModel = { currency: oneOf(CURRENCY), balance_available: 'float', balance_locked: 'float', balance_hold: 'float' };

class HTTPError extends Error {}

/** Cardlinky._get / _post: JSON body on both, then __handle_error. */
async function call(method: 'GET' | 'POST', path: string, json: Record<string, unknown>) {
  const w = await rig.send(method, `/api/v1/${path}`, {
    headers: {
      'User-Agent': 'python-requests/2.28.2', 'Accept-Encoding': 'gzip, deflate', Accept: '*/*', Connection: 'keep-alive',
      Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/json',
    },
    body: JSON.stringify(json),
  });
  const body = JSON.parse(w.text) as Record<string, unknown>;
  if (!('success' in body)) throw new Error(`KeyError: 'success' in ${w.text}`);
  if (!body.success) {
    const errors = body.errors as Record<string, string[]> | undefined;
    throw new HTTPError(errors && Object.keys(errors).length ? Object.values(errors)[0]![0] : String(body.message));
  }
  return body;
}

describe('cardlinky', () => {
  it('create_bill: JSON body with nulls for the options it was not given, amount a JSON float, payer_pays_commission false', async () => {
    const body = await call('POST', 'bill/create', {
      amount: 150.5, order_id: null, description: null, shop_id: rig.m.shopId, custom: null, name: null, payer_pays_commission: false, type: 'multi',
    });
    pyDecode(body, BillCreate);
    expect(body.success).toBe('true');
  });

  it('get_bill_status: id only in a JSON body on GET; amount float, active bool, created_at strptime', async () => {
    const created = await call('POST', 'bill/create', { amount: 99.9, shop_id: rig.m.shopId, payer_pays_commission: false });
    const st = await call('GET', 'bill/status', { id: created.bill_id });
    pyDecode(st, BillStatus);
    expect(st).toMatchObject({ amount: 99.9, active: true, success: true });
  });

  it('toggle_bill_activity: active as int(bool) in JSON', async () => {
    const created = await call('POST', 'bill/create', { amount: 10, shop_id: rig.m.shopId, type: 'multi' });
    const r = await call('POST', 'bill/toggle_activity', { id: created.bill_id, active: 0 });
    pyDecode(r, BillToggleActivity);
    expect(r.active).toBe(false);
  });

  it('search_bill: shop_id and YYYY-MM-DD dates in a JSON body on GET; each bill decodes', async () => {
    const day = new Date().toLocaleDateString('sv-SE', { timeZone: 'Europe/Moscow' });
    const r = await call('GET', 'bill/search', { shop_id: rig.m.shopId, start_date: day, finish_date: day });
    const data = r.data as unknown[];
    expect(data.length).toBeGreaterThan(0);
    for (const b of data) pyDecode(b, Bill);
  });

  it('get_payment_status, get_bill_payments and search_payment decode a paid card payment (float amounts, account_amount present)', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '300.10', commission: '3.00' });
    const st = await call('GET', 'payment/status', { id: p.paymentId });
    pyDecode(st, PaymentStatus);
    expect(st).toMatchObject({ amount: 300.1, commission: 3, account_amount: 297.1 });
    const list = await call('GET', 'bill/payments', { id: p.billId });
    for (const x of list.data as unknown[]) pyDecode(x, Payment);
    const search = await call('GET', 'payment/search', { shop_id: rig.m.shopId });
    expect((search.data as { id: string }[]).map((x) => x.id)).toContain(p.paymentId);
    for (const x of search.data as unknown[]) pyDecode(x, Payment);
  });

  it('get_balance: an empty JSON object on GET; balances decode as float from the 8-decimal strings', async () => {
    await fund(rig.t, rig.m.merchantId, '10.5');
    const r = await call('GET', 'merchant/balance', {});
    for (const b of r.balances as unknown[]) pyDecode(b, Balance);
  });

  it('errors: a 422 answers success false with errors, the first message is raised', async () => {
    await expect(call('GET', 'bill/status', {})).rejects.toThrow(HTTPError);
    await expect(call('GET', 'bill/status', { id: 'NoSuchBill1' })).rejects.toThrow('api:error.bill_not_found');
  });
});
