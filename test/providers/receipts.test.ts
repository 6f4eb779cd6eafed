import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { formPost } from './connector-calls.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { payRequest } from '../factories/payment.js';
import { startReceiver, type Receiver } from '../outbox/receiver.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { TBankEmulator, tbankToken } from '../emulators/tbank.js';
import { tbankToken as ourToken } from '../../src/domain/providers/connectors/tbank/index.js';
import { paymentReceipt, receiptTotal, refundReceipt } from '../../src/domain/receipt/receipt.js';
import type { ActiveFiscal } from '../../src/domain/receipt/fiscal.js';

// Issue 29 item 1: 54-FZ receipts through both connectors, against the emulators on 127.0.0.1
// (fiscalized, so they refuse anything without a valid receipt), driven through the service's own
// HTTP faces: the operator API sets the shop and the routing, bill/create makes the bill, the page
// opens the payment, the payer pays on the provider's page, refund/full|partial/create and the
// refund worker give money back.

let t: TestApp;
let yk: YooKassaEmulator;
let tb: TBankEmulator;
let hook: Receiver;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const FISCAL = { enabled: true, tax_system_code: 2, vat_code: 1, payment_subject: 'commodity', payment_mode: 'full_payment' };

beforeAll(async () => {
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '8000' });
  hook = await startReceiver();
  yk = await YooKassaEmulator.start({ notifyUrl: `${hook.url}/yookassa`, fiscalization: true });
  tb = await TBankEmulator.start({ notifyUrl: `${hook.url}/tbank`, fiscalization: true });
  const put = (name: string, payload: object) => t.app.inject({ method: 'PUT', url: `/admin/v1/connectors/${name}`, headers: admin, payload });
  expect((await put('yk-fz', { kind: 'yookassa', mode: 'test', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.1' } })).statusCode).toBe(201);
  expect((await put('tb-fz', { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } })).statusCode).toBe(201);
});
afterAll(async () => { await yk.stop(); await tb.stop(); await hook.close(); await t.close(); });

/** A merchant allowed refunds, its shop fiscalized through the operator API, its card route on `connector`. */
async function fiscalMerchant(connector: string, fiscal: Record<string, unknown> = FISCAL): Promise<MerchantFixture> {
  const m = await createMerchant(t, { merchant: { grantRefunds: true } });
  expect((await t.app.inject({ method: 'PATCH', url: `/admin/v1/shops/${m.shopId}`, headers: admin, payload: { fiscalization: fiscal } })).statusCode).toBe(200);
  expect((await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing: { payment_card: [connector] } } })).statusCode).toBe(200);
  return m;
}

const billCreate = (m: MerchantFixture, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, ...payload } });

/** Opens the payment on our page (JSON mode) and answers the provider's page URL. */
async function open(billId: string, form: Record<string, string> = {}) {
  const r = await payRequest(t, billId, { method: 'BANK_CARD', ...form });
  expect(r.statusCode, r.body).toBe(200);
  const b = r.json();
  expect(b.action.type).toBe('redirect');
  return { paymentId: b.payment_id as string, url: b.action.url as string };
}

/** The payment as the provider says after the payer paid (the reconciler's read). */
async function settle(paymentId: string) {
  const row = (await t.db.pool.query<{ connector: string; provider_ref: string; provider_data: Record<string, unknown> | null }>(`SELECT connector, provider_ref, provider_data FROM payments WHERE id = $1`, [paymentId])).rows[0]!;
  await t.app.services.payments.askProvider({ id: paymentId, connector: row.connector, ref: row.provider_ref, data: row.provider_data });
  return (await t.db.pool.query<{ status: string }>(`SELECT status::text FROM payments WHERE id = $1`, [paymentId])).rows[0]!.status;
}

async function refund(m: MerchantFixture, paymentId: string, amount?: string) {
  const r = await t.app.inject({
    method: 'POST', url: `/api/v1/refund/${amount ? 'partial' : 'full'}/create`, headers: m.auth, payload: { payment_id: paymentId, ...(amount ? { amount } : {}) },
  });
  expect(r.statusCode, r.body).toBe(200);
  await t.db.pool.query(`UPDATE refunds SET process_after = now() - interval '1 second' WHERE payment_id = $1`, [paymentId]);
  await t.app.services.refunds.processDue();
  return (await t.db.pool.query<{ status: string; failure_reason: string | null }>(
    `SELECT status::text, failure_reason FROM refunds WHERE payment_id = $1 ORDER BY created_at DESC LIMIT 1`, [paymentId])).rows[0]!;
}

describe('receipts through YooKassa (a fiscalized shop)', () => {
  it('a payment and its refunds carry receipt {customer, items, tax_system_code} whose lines add up to the amount; the emulator took them', async () => {
    const m = await fiscalMerchant('yk-fz');
    const bill = await billCreate(m, {
      amount: '1490.00', name: 'Заказ 42', payer_email: 'buyer@example.test',
      items: [{ name: 'Шарф', price: '1290.00', quantity: 1 }, { name: 'Доставка', price: '100.00', quantity: 2 }],
    });
    expect(bill.statusCode, bill.body).toBe(200);
    const { paymentId, url } = await open(bill.json().bill_id);
    const sent = yk.receipts.find((x) => x.object === 'payment' && yk.payments.get(x.id)?.metadata.payment_id === paymentId)!;
    expect(sent.receipt).toEqual({
      customer: { email: 'buyer@example.test' },
      items: [
        { description: 'Шарф', quantity: 1, amount: { value: '1290.00', currency: 'RUB' }, vat_code: 1, payment_subject: 'commodity', payment_mode: 'full_payment' },
        { description: 'Доставка', quantity: 2, amount: { value: '100.00', currency: 'RUB' }, vat_code: 1, payment_subject: 'commodity', payment_mode: 'full_payment' },
      ],
      tax_system_code: 2,
    });
    expect((await fetch(`${url}/pay`, formPost('card=5555555555554444'))).status).toBe(303);
    expect(await settle(paymentId)).toBe('SUCCESS');

    // A partial refund: one line of the refunded amount; then the rest (another partial line).
    expect(await refund(m, paymentId, '90.00')).toMatchObject({ status: 'SUCCESS' });
    const refunds = yk.receipts.filter((x) => x.object === 'refund');
    expect(refunds.at(-1)!.receipt).toEqual({
      customer: { email: 'buyer@example.test' },
      items: [{ description: 'Заказ 42', quantity: 1, amount: { value: '90.00', currency: 'RUB' }, vat_code: 1, payment_subject: 'commodity', payment_mode: 'full_payment' }],
      tax_system_code: 2,
    });
    expect(await refund(m, paymentId)).toMatchObject({ status: 'SUCCESS' });
    expect(yk.receipts.filter((x) => x.object === 'refund')).toHaveLength(refunds.length + 1);
  });

  it('a full refund repeats the payment receipt line by line (the payer paid the fee: a commission line)', async () => {
    const m = await fiscalMerchant('yk-fz');
    await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { fees: { payment_card_percent: '2', payment_card_fixed: '0' } } });
    const bill = await billCreate(m, { amount: '500.00', description: 'Подписка', payer_pays_commission: 1, request_fields: ['phone'] });
    expect(bill.statusCode, bill.body).toBe(200);
    const { paymentId, url } = await open(bill.json().bill_id, { payer_phone: '+7 900 123-45-67' });
    const sent = yk.receipts.find((x) => x.object === 'payment' && yk.payments.get(x.id)?.metadata.payment_id === paymentId)!.receipt;
    expect(sent.customer).toEqual({ phone: '79001234567' });
    expect(sent.items).toEqual([
      { description: 'Подписка', quantity: 1, amount: { value: '500.00', currency: 'RUB' }, vat_code: 1, payment_subject: 'commodity', payment_mode: 'full_payment' },
      { description: 'Комиссия за оплату', quantity: 1, amount: { value: '10.00', currency: 'RUB' }, vat_code: 1, payment_subject: 'service', payment_mode: 'full_payment' },
    ]);
    await fetch(`${url}/pay`, formPost('card=5555555555554444'));
    expect(await settle(paymentId)).toBe('SUCCESS');
    // The payer's fee went to the operator: the merchant's balance covers the full refund only topped up.
    expect((await t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/balance-adjustments`, headers: admin, payload: { currency: 'RUB', amount: '10.00', reason: 'fee back' } })).statusCode).toBe(201);
    expect(await refund(m, paymentId)).toMatchObject({ status: 'SUCCESS' });
    expect(yk.receipts.filter((x) => x.object === 'refund').at(-1)!.receipt).toEqual(sent);
  });

  it('the emulator is strict: without a receipt (or with a wrong total) it answers 400 "Receipt is missing or illegal"', async () => {
    const post = (body: object, key: string) => fetch(`${yk.apiUrl}/payments`, {
      method: 'POST', body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', 'idempotence-key': key, authorization: `Basic ${Buffer.from(`${yk.shopId}:${yk.secretKey}`).toString('base64')}` },
    });
    const base = { amount: { value: '100.00', currency: 'RUB' }, capture: true, confirmation: { type: 'redirect', return_url: 'https://shop.test/' } };
    const none = await post(base, `k-${Date.now()}-1`);
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({ type: 'error', code: 'invalid_request', description: 'Receipt is missing or illegal', parameter: 'receipt' });
    const item = { description: 'x', quantity: 1, amount: { value: '99.99', currency: 'RUB' }, vat_code: 1, payment_subject: 'commodity', payment_mode: 'full_payment' };
    expect((await post({ ...base, receipt: { customer: { email: 'a@b.test' }, items: [item] } }, `k-${Date.now()}-2`)).status).toBe(400);
    expect((await post({ ...base, receipt: { customer: {}, items: [{ ...item, amount: { value: '100.00', currency: 'RUB' } }] } }, `k-${Date.now()}-3`)).status).toBe(400);
    expect((await post({ ...base, receipt: { customer: { email: 'a@b.test' }, items: [{ ...item, amount: { value: '100.00', currency: 'RUB' } }] } }, `k-${Date.now()}-4`)).status).toBe(200);
  });

  it('a shop without fiscalization sends no receipt, and its payment is refused by the fiscalized shop: the receipt is what it needed', async () => {
    const m = await createMerchant(t);
    await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing: { payment_card: ['yk-fz'] } } });
    const bill = await billCreate(m, { amount: '100.00' });
    const r = await payRequest(t, bill.json().bill_id, { method: 'BANK_CARD' });
    expect(r.json()).toMatchObject({ status: 'FAIL' });
    // A refusal on creation: the method was unavailable to the payer; YooKassa's code stays in the message.
    expect((await t.db.pool.query(`SELECT failure_reason, failure_message FROM payments WHERE id = $1`, [r.json().payment_id])).rows[0])
      .toEqual({ failure_reason: 'provider_unavailable', failure_message: expect.stringMatching(/^yookassa:invalid_request: /) });
  });
});

describe('receipts through T-Bank (a terminal with an online cash register)', () => {
  it('Init and Cancel carry Receipt {Email, Taxation, Items in kopecks}; the Token, computed without it, verifies', async () => {
    const m = await fiscalMerchant('tb-fz', { ...FISCAL, tax_system_code: 1, vat_code: 4, payment_subject: 'service', payment_mode: 'full_prepayment' });
    const bill = await billCreate(m, { amount: '150.50', name: 'Консультация', payer_email: 'client@example.test' });
    expect(bill.statusCode, bill.body).toBe(200);
    const { paymentId, url } = await open(bill.json().bill_id);
    const init = tb.receipts.find((x) => x.op === 'Init' && tb.payments.get(x.paymentId)?.OrderId === paymentId)!;
    expect(init.receipt).toEqual({
      FfdVersion: '1.05', Email: 'client@example.test', Taxation: 'osn',
      Items: [{ Name: 'Консультация', Price: 15050, Quantity: 1, Amount: 15050, Tax: 'vat20', PaymentMethod: 'full_prepayment', PaymentObject: 'service' }],
    });
    expect(tb.requests.filter((x) => x.op === 'Init').at(-1)!.errorCode).toBe('0');
    // The payer on T-Bank's form.
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect((await fetch(`${url}/pay`, formPost('card=4300000000000777'))).status).toBe(303);
    expect(await settle(paymentId)).toBe('SUCCESS');
    expect(await refund(m, paymentId, '50.50')).toMatchObject({ status: 'SUCCESS' });
    const cancel = tb.receipts.filter((x) => x.op === 'Cancel').at(-1)!;
    expect(cancel.receipt).toEqual({
      FfdVersion: '1.05', Email: 'client@example.test', Taxation: 'osn',
      Items: [{ Name: 'Консультация', Price: 5050, Quantity: 1, Amount: 5050, Tax: 'vat20', PaymentMethod: 'full_prepayment', PaymentObject: 'service' }],
    });
    expect(await refund(m, paymentId)).toMatchObject({ status: 'SUCCESS' });
    expect(tb.payments.get(init.paymentId)!.Status).toBe('REFUNDED');
  });

  it('Receipt is left out of the Token: the same Token with or without it (ours and the emulator\'s)', () => {
    const body = { TerminalKey: 'T', Amount: 15050, OrderId: 'o1', Description: 'd' };
    const withReceipt = { ...body, Receipt: { Email: 'a@b.test', Taxation: 'osn', Items: [{ Name: 'x', Price: 15050, Quantity: 1, Amount: 15050, Tax: 'none' }] } };
    expect(ourToken(withReceipt, 'pw')).toBe(ourToken(body, 'pw'));
    expect(ourToken(withReceipt, 'pw')).toBe(tbankToken(body, 'pw'));
  });

  it('the emulator is strict: Init without Receipt is 309, with a sum that differs 308', async () => {
    const init = (extra: object) => fetch(`${tb.apiUrl}/Init`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(tb.sign({ TerminalKey: tb.terminalKey, Amount: 1000, OrderId: `o-${Date.now()}`, ...extra }) ),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);
    expect(await init({})).toMatchObject({ Success: false, ErrorCode: '309', Message: 'Неверные параметры.', Details: '{request.validate.expected.receipt}' });
    const item = { Name: 'x', Price: 900, Quantity: 1, Amount: 900, Tax: 'none' };
    expect(await init({ Receipt: { Email: 'a@b.test', Taxation: 'osn', Items: [item] } })).toMatchObject({ Success: false, ErrorCode: '308' });
    expect(await init({ Receipt: { Taxation: 'osn', Items: [{ ...item, Price: 1000, Amount: 1000 }] } })).toMatchObject({ Success: false, ErrorCode: '309' });
    expect(await init({ Receipt: { Email: 'a@b.test', Taxation: 'osn', Items: [{ ...item, Price: 1000, Amount: 1000, Tax: 'vat18' }] } })).toMatchObject({ Success: false, ErrorCode: '309' });
    expect(await init({ Receipt: { Email: 'a@b.test', Taxation: 'osn', Items: [{ ...item, Price: 1000, Amount: 1000 }] } })).toMatchObject({ Success: true });
  });
});

describe('bill/create for a fiscalized shop', () => {
  it('answers 422 errors.payer_email when neither payer_email nor request_fields email|phone gives a contact; either one is enough', async () => {
    const m = await fiscalMerchant('sandbox');
    const none = await billCreate(m, { amount: '10.00', request_fields: ['name'] });
    expect(none.statusCode).toBe(422);
    expect(none.json()).toMatchObject({ success: false, errors: { payer_email: [expect.stringContaining('fiscal receipts')] } });
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM bills WHERE shop_id = $1`, [m.shopId])).rows[0]).toEqual({ n: 0 });
    expect((await billCreate(m, { amount: '10.00', payer_email: 'a@b.test' })).statusCode).toBe(200);
    expect((await billCreate(m, { amount: '10.00', request_fields: ['phone'] })).statusCode).toBe(200);
    expect((await billCreate(m, { amount: '10.00', 'request_fields[email]': 1 })).statusCode).toBe(200);
  });

  it('an older bill of a shop that turned receipts on asks the payer for an e-mail on the page', async () => {
    const m = await createMerchant(t);
    const bill = (await billCreate(m, { amount: '10.00' })).json().bill_id as string;
    await t.app.inject({ method: 'PATCH', url: `/admin/v1/shops/${m.shopId}`, headers: admin, payload: { fiscalization: FISCAL } });
    const r = await payRequest(t, bill, { method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/39', card_cvc: '123' });
    expect(r.statusCode).toBe(422);
    expect(Object.keys(r.json().errors)).toContain('payer_email');
  });
});

describe('receipt lines add up to the payment exactly', () => {
  const fiscal: ActiveFiscal = { enabled: true, taxSystemCode: 1, vatCode: 1, paymentSubject: 'commodity', paymentMode: 'full_payment', ffdVersion: '1.05' };
  const base = { fiscal, billName: 'B', billDescription: null, email: 'a@b.test', phone: null };

  it('a USD bill: items scaled to the RUB paid, rounding on the last line, a line that does not divide becomes quantity 1', () => {
    const r = paymentReceipt({
      ...base, items: [{ name: 'A', price: '3.33', quantity: '3' }, { name: 'B', price: '1.00', quantity: '1' }],
      totalRub: new Decimal('1001.17'), payerCommission: new Decimal(0), rate: new Decimal('91.23'), rub: false,
    })!;
    expect(receiptTotal(r).toFixed(2)).toBe('1001.17');
    for (const l of r.lines) expect(l.price.mul(l.quantity).eq(l.amount)).toBe(true);
    for (const l of r.lines) expect(l.price.decimalPlaces()).toBeLessThanOrEqual(2);
  });

  it('items that do not add up to the amount are scaled to it; without items one line of the bill', () => {
    const odd = paymentReceipt({ ...base, items: [{ name: 'A', price: '10.00', quantity: '1' }], totalRub: new Decimal('7.00'), payerCommission: new Decimal(0), rate: new Decimal(1), rub: true })!;
    expect(odd.lines.map((l) => [l.name, l.amount.toFixed(2)])).toEqual([['A', '7.00']]);
    const one = paymentReceipt({ ...base, billName: null, items: [], totalRub: new Decimal('5.00'), payerCommission: new Decimal(0), rate: new Decimal(1), rub: true })!;
    expect(one.lines.map((l) => [l.name, l.quantity.toString(), l.amount.toFixed(2)])).toEqual([['Payment', '1', '5.00']]);
    expect(paymentReceipt({ ...base, email: null, items: [], totalRub: new Decimal(1), payerCommission: new Decimal(0), rate: new Decimal(1), rub: true })).toBeNull();
    expect(refundReceipt(one, new Decimal('2.00'), 'Payment')!.lines.map((l) => l.amount.toFixed(2))).toEqual(['2.00']);
  });
});

describe('receipts on the capture of a two-stage payment (a fiscalized shop)', () => {
  /** A two-stage bill held at the provider: the payer paid there, the service read the hold. */
  async function heldPayment(m: MerchantFixture, amount: string, pay: (ref: string) => void) {
    const bill = await billCreate(m, {
      amount, capture: false, name: 'Заказ 7', payer_email: 'buyer@example.test',
      items: [{ name: 'Куртка', price: '800.00', quantity: 1 }, { name: 'Шапка', price: '100.00', quantity: 2 }],
    });
    expect(bill.statusCode, bill.body).toBe(200);
    const { paymentId } = await open(bill.json().bill_id);
    const ref = (await t.db.pool.query<{ provider_ref: string }>(`SELECT provider_ref FROM payments WHERE id = $1`, [paymentId])).rows[0]!.provider_ref;
    pay(ref);
    expect(await settle(paymentId)).toBe('PROCESS');
    const held = (await t.db.pool.query<{ a: string }>(`SELECT authorized_amount::text AS a FROM payments WHERE id = $1`, [paymentId])).rows[0]!.a;
    expect(held).toBe(amount);
    return { paymentId, ref };
  }
  const capture = (id: string, amount?: string) =>
    t.app.inject({ method: 'POST', url: `/admin/v1/payments/${id}/capture`, headers: admin, payload: amount ? { amount } : {} });
  const line = (description: string, quantity: number, value: string) =>
    ({ description, quantity, amount: { value, currency: 'RUB' }, vat_code: 1, payment_subject: 'commodity', payment_mode: 'full_payment' });

  it('YooKassa: a partial capture carries the receipt of what is taken (the items scaled to it); a full capture carries none, as YooKassa documents', async () => {
    const m = await fiscalMerchant('yk-fz');
    const part = await heldPayment(m, '1000.00', (ref) => { yk.payerAction(ref, 'pay'); });
    const r = await capture(part.paymentId, '500.00');
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'SUCCESS', amount: '500.00' });
    const sent = yk.receipts.filter((x) => x.object === 'capture' && x.id === part.ref);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.receipt).toEqual({
      customer: { email: 'buyer@example.test' }, tax_system_code: 2,
      items: [line('Куртка', 1, '400.00'), line('Шапка', 2, '50.00')],
    });
    expect(yk.payments.get(part.ref)).toMatchObject({ status: 'succeeded', amount: { value: '500.00', currency: 'RUB' } });

    const full = await heldPayment(m, '1000.00', (ref) => { yk.payerAction(ref, 'pay'); });
    const f = await capture(full.paymentId);
    expect(f.statusCode, f.body).toBe(200);
    expect(f.json()).toMatchObject({ status: 'SUCCESS', amount: '1000.00' });
    expect(yk.receipts.filter((x) => x.object === 'capture' && x.id === full.ref)).toHaveLength(0);
  });

  it('T-Bank: Confirm carries Receipt of what is taken, full or partial (the online cash register needs it on Confirm)', async () => {
    const m = await fiscalMerchant('tb-fz');
    const part = await heldPayment(m, '1000.00', (ref) => { tb.payerAction(ref, 'pay'); });
    const r = await capture(part.paymentId, '300.00');
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'SUCCESS', amount: '300.00' });
    const sent = tb.receipts.filter((x) => x.op === 'Confirm' && x.paymentId === part.ref);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.receipt).toMatchObject({ Email: 'buyer@example.test', Items: [{ Name: 'Куртка', Amount: 24000 }, { Name: 'Шапка', Quantity: 2, Amount: 6000 }] });
    expect(tb.payments.get(part.ref)).toMatchObject({ Status: 'CONFIRMED', Amount: 30000 });

    const full = await heldPayment(m, '1000.00', (ref) => { tb.payerAction(ref, 'pay'); });
    expect((await capture(full.paymentId)).statusCode).toBe(200);
    const all = tb.receipts.filter((x) => x.op === 'Confirm' && x.paymentId === full.ref);
    expect(all).toHaveLength(1);
    expect(all[0]!.receipt).toMatchObject({ Items: [{ Name: 'Куртка', Amount: 80000 }, { Name: 'Шапка', Quantity: 2, Amount: 20000 }] });
  });

  it('the emulators refuse a fiscalized capture without its receipt: YooKassa a partial one (400 "Receipt is missing or illegal"), T-Bank any Confirm (309)', async () => {
    const m = await fiscalMerchant('yk-fz');
    const h = await heldPayment(m, '1000.00', (ref) => { yk.payerAction(ref, 'pay'); });
    const auth = `Basic ${Buffer.from(`${yk.shopId}:${yk.secretKey}`).toString('base64')}`;
    const cap = (body: object, key: string) => fetch(`${yk.apiUrl}/payments/${h.ref}/capture`, {
      method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'idempotence-key': key, authorization: auth },
    });
    const none = await cap({ amount: { value: '400.00', currency: 'RUB' } }, `cap-${Date.now()}-1`);
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({ type: 'error', code: 'invalid_request', description: 'Receipt is missing or illegal', parameter: 'receipt' });
    expect(yk.payments.get(h.ref)!.status).toBe('waiting_for_capture');

    const mt = await fiscalMerchant('tb-fz');
    const ht = await heldPayment(mt, '1000.00', (ref) => { tb.payerAction(ref, 'pay'); });
    const body: Record<string, unknown> = { TerminalKey: tb.terminalKey, PaymentId: ht.ref, Amount: 100000 };
    body.Token = tbankToken(body, tb.password);
    const a = await (await fetch(`${tb.apiUrl}/Confirm`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })).json();
    expect(a).toMatchObject({ Success: false, ErrorCode: '309' });
    expect(tb.payments.get(ht.ref)!.Status).toBe('AUTHORIZED');
  });
});
