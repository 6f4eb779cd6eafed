import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodeError, opt, pyDecode, startRig, type PyModel, type Rig } from './harness.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { fund, regular, card } from '../payout/helpers.js';

/**
 * austnv/cardlink (pycardlink, docs/clients.md): one httpx client per SDK whose default headers
 * are `Authorization`, `Content-Type: application/json` and `Accept: application/json` on every
 * request (GET too, with no body); GET parameters in the query (`model_dump(exclude_none=True)`,
 * httpx writes booleans as "true"/"false" and datetimes as str(datetime)); POST bodies are
 * `json=model_dump(exclude_none=True)`. Answers go through pydantic v2 models (Decimal amounts,
 * Optional everything); a non-2xx answer raises RuntimeError.
 * Not replayed (the client fails before sending): every POST whose model holds a Decimal
 * (bill/create, payout creates, refund/partial) -- model_dump() keeps Decimal and json.dumps refuses it.
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

const headers = () => ({
  Accept: 'application/json', 'Accept-Encoding': 'gzip, deflate', Connection: 'keep-alive', 'User-Agent': 'python-httpx/0.28.1',
  Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/json',
});

async function get(path: string, params: Record<string, string> = {}) {
  const q = new URLSearchParams(params).toString();
  const w = await rig.send('GET', `/api/v1${path}${q ? `?${q}` : ''}`, { headers: headers() });
  if (w.status < 200 || w.status >= 300) throw new Error(`API Error ${w.status}: ${w.text}`);
  return JSON.parse(w.text) as Record<string, unknown>;
}

async function post(path: string, json: Record<string, unknown>) {
  const w = await rig.send('POST', `/api/v1${path}`, { headers: headers(), body: JSON.stringify(json) });
  if (w.status < 200 || w.status >= 300) throw new Error(`API Error ${w.status}: ${w.text}`);
  return JSON.parse(w.text) as Record<string, unknown>;
}

const Bill: PyModel = {
  id: opt('str'), order_id: opt('str'), active: opt('bool'), status: opt('str', ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL']),
  amount: opt('Decimal'), type: opt('str', ['MULTI', 'NORMAL']), created_at: opt('datetime'), currency_in: opt('str', ['USD', 'RUB', 'EUR']),
  ttl: opt('int'), success: opt('bool'),
};
const Refund: PyModel = {
  id: opt('str'), status: opt('str', ['NEW', 'PROCESS', 'SUCCESS', 'FAIL']), amount: opt('Decimal'), currency: opt('str', ['USD', 'RUB', 'EUR']),
  entity_type: opt('str', ['payment']), entity_id: opt('str'), created_at: opt('datetime'), success: opt('bool'),
};
const Payment: PyModel = {
  id: opt('str'), bill_id: opt('str'), status: opt('str'), amount: opt('Decimal'), commission: opt('Decimal'), account_amount: opt('Decimal'),
  account_currency_code: opt('str'), refunded_amount: opt('Decimal'), from_card: opt('str'), account_bank: opt('str'),
  currency_in: opt('str', ['USD', 'RUB', 'EUR']), created_at: opt('datetime'), payer_phone: opt('str'), payer_email: opt('str'),
  payer_name: opt('str'), payer_comment: opt('str'), error_code: opt('int'), error_message: opt('str'), description: opt('str'),
  success: opt('bool'), refunds: opt([Refund]), chargeback: opt([{ id: opt('str'), payment_id: opt('str'), status: opt('str'), created_at: opt('datetime') }]),
};
const Payout: PyModel = {
  id: opt('str'), status: opt('str', ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED']), order_id: opt('str'),
  account_identifier: opt('str'), amount: opt('Decimal'), account_amount: opt('Decimal'), commission: opt('Decimal'),
  account_commission: opt('Decimal'), currency: opt('str', ['USD', 'RUB', 'EUR']), created_at: opt('datetime'), error_code: opt('int'),
  error_message: opt('int'), success: opt('bool'),
};
const Balance: PyModel = { balances: opt([{ currency: opt('str', ['USD', 'RUB', 'EUR']), balance_available: opt('Decimal'), balance_locked: opt('Decimal'), balance_hold: opt('Decimal') }]), success: opt('bool') };
const Banks: PyModel = { data: opt([{ member_id: opt('int'), name: opt('str'), name_en: opt('str'), bic: opt('int') }]), success: opt('bool') };
const Links: PyModel = { prev: opt('str'), next: opt('str') };
const Meta: PyModel = { path: opt('str'), per_page: opt('int'), prev_cursor: opt('str'), next_cursor: opt('str') };
const RefundSearch: PyModel = { success: opt('bool'), data: opt([Refund]), links: opt(Links), meta: opt(Meta) };

describe('austnv/cardlink', () => {
  it('bill.toggle_activity: JSON {"id", "active": true}; BillToggleActivityResponse and BillStatusResponse decode (Decimal amount)', async () => {
    const billId = (await rig.t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { authorization: `Bearer ${rig.m.token}` }, payload: { amount: '12.34', shop_id: rig.m.shopId, type: 'multi' } })).json().bill_id;
    const toggled = await post('/bill/toggle_activity', { id: billId, active: false });
    pyDecode(toggled, Bill);
    expect(toggled).toMatchObject({ id: billId, active: false, amount: 12.34 });
    const st = await get('/bill/status', { id: billId });
    pyDecode(st, Bill);
    expect(st.success).toBe(true);
  });

  it('payment.status with refunds=true&chargeback=true in the query (httpx booleans) decodes PaymentStatusResponse', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '80.00', commission: '1.60' });
    const st = await get('/payment/status', { id: p.paymentId, refunds: 'true', chargeback: 'true' });
    pyDecode(st, Payment);
    expect(st).toMatchObject({ id: p.paymentId, amount: 80, commission: 1.6, account_amount: 78.4 });
  });

  it('balance.balance: MerchantBalanceResponse decodes (success "true" is a bool in lax mode, Decimal balances)', async () => {
    await fund(rig.t, rig.m.merchantId, '10');
    pyDecode(await get('/merchant/balance'), Balance);
  });

  it('payout.status by id and by order_id decodes PayoutStatusResponse', async () => {
    await fund(rig.t, rig.m.merchantId, '100');
    const p = (await regular(rig.t, rig.m, card('7.5', { order_id: 'austnv-1' }))).json().data[0];
    const byId = await get('/payout/status', { id: p.id });
    pyDecode(byId, Payout);
    expect(byId).toMatchObject({ id: p.id, amount: 7.5 });
    pyDecode(await get('/payout/status', { order_id: 'austnv-1' }), Payout);
  });

  it('payout.spb_banks decodes PayoutSPBBanksResponse (int member_id and bic)', async () => {
    const r = await get('/payout/dictionaries/sbp_banks');
    pyDecode(r, Banks);
    expect((r.data as unknown[]).length).toBeGreaterThan(0);
  });

  it('refund.full_create (JSON payment_id) and refund.status by id decode', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '30.00' });
    const created = await post('/refund/full/create', { payment_id: p.paymentId });
    pyDecode(created, Refund);
    expect(created).toMatchObject({ status: 'NEW', amount: 30, entity_id: p.paymentId });
    const st = await get('/refund/status', { id: created.id as string });
    pyDecode(st, Refund);
    expect(st.id).toBe(created.id);
  });

  it('refund.search by payment_id decodes RefundSearchResponse (links and meta objects)', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '20.00' });
    const created = await post('/refund/full/create', { payment_id: p.paymentId });
    const r = await get('/refund/search', { payment_id: p.paymentId });
    pyDecode(r, RefundSearch);
    expect((r.data as { id: string }[]).map((x) => x.id)).toEqual([created.id]);
  });

  it('payment.search accepts its datetimes as httpx writes str(datetime): with microseconds', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '11.00' });
    const start = new Date(Date.now() - 86400_000);
    const py = (d: Date) => `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 19)}.556957`;
    // The answer's links/meta are objects (the twin's form); this model types them as lists, so
    // only the request side is replayed here (docs/clients.md).
    const r = await get('/payment/search', { start_date: py(start), finish_date: py(new Date(Date.now() + 86400_000)) });
    expect((r.data as { id: string }[]).map((x) => x.id)).toContain(p.paymentId);
    expect(() => pyDecode(r, { links: opt([Links]) })).toThrow(DecodeError);
  });
});
