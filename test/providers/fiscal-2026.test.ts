import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { formPost } from './connector-calls.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { payRequest } from '../factories/payment.js';
import { enrolledOperator } from '../operator/helpers.js';
import { startReceiver, waitFor, type Receiver } from '../outbox/receiver.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { TBankEmulator } from '../emulators/tbank.js';
import { tbankSettingsOf } from '../../src/domain/providers/connectors/tbank/settings.js';
import { TBANK_NOTIFICATION_SOURCES } from '../../src/domain/providers/connectors/tbank/index.js';

// The fiscal tables as they stand in 2026 (docs/connectors/fiscal.md), receipts frozen with their
// operation, and register failures put before an operator: through the service's HTTP faces
// against the emulators on 127.0.0.1, both of which refuse what their provider refuses.

let t: TestApp;
let yk: YooKassaEmulator;
let yk12: YooKassaEmulator;
let tb: TBankEmulator;
let tb12: TBankEmulator;
let hook: Receiver;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const FISCAL = { enabled: true, tax_system_code: 1, vat_code: 11, payment_subject: 'commodity', payment_mode: 'full_payment' };

beforeAll(async () => {
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '3000' });
  hook = await startReceiver();
  yk = await YooKassaEmulator.start({ notifyUrl: `${hook.url}/yookassa`, fiscalization: true });
  yk12 = await YooKassaEmulator.start({ notifyUrl: `${hook.url}/yookassa12`, fiscalization: true, ffd12: true });
  tb = await TBankEmulator.start({ notifyUrl: `${hook.url}/tbank`, fiscalization: true });
  tb12 = await TBankEmulator.start({ notifyUrl: `${hook.url}/tbank12`, fiscalization: true, ffd12: true });
  const put = (name: string, payload: object) => t.app.inject({ method: 'PUT', url: `/admin/v1/connectors/${name}`, headers: admin, payload });
  expect((await put('yk-26', { kind: 'yookassa', mode: 'test', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey } })).statusCode).toBe(201);
  expect((await put('yk-26-12', { kind: 'yookassa', mode: 'test', settings: { base_url: yk12.apiUrl, shop_id: yk12.shopId, secret_key: yk12.secretKey } })).statusCode).toBe(201);
  expect((await put('tb-26', { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } })).statusCode).toBe(201);
  expect((await put('tb-26-12', { kind: 'tbank', mode: 'test', settings: { base_url: tb12.apiUrl, terminal_key: tb12.terminalKey, password: tb12.password } })).statusCode).toBe(201);
});
afterAll(async () => { await yk.stop(); await yk12.stop(); await tb.stop(); await tb12.stop(); await hook.close(); await t.close(); });

const patchShop = (m: MerchantFixture, fiscalization: Record<string, unknown>) =>
  t.app.inject({ method: 'PATCH', url: `/admin/v1/shops/${m.shopId}`, headers: admin, payload: { fiscalization } });

async function fiscalMerchant(connector: string, fiscal: Record<string, unknown> = FISCAL): Promise<MerchantFixture> {
  const m = await createMerchant(t, { merchant: { grantRefunds: true } });
  const r = await patchShop(m, fiscal);
  expect(r.statusCode, r.body).toBe(200);
  expect((await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing: { payment_card: [connector] } } })).statusCode).toBe(200);
  return m;
}

async function openBill(m: MerchantFixture, amount = '1220.00') {
  const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, amount, name: 'Заказ 2026', payer_email: 'buyer@example.test' } });
  expect(bill.statusCode, bill.body).toBe(200);
  const r = await payRequest(t, bill.json().bill_id, { method: 'BANK_CARD' });
  expect(r.statusCode, r.body).toBe(200);
  return { paymentId: r.json().payment_id as string, url: r.json().action.url as string };
}

async function settle(paymentId: string) {
  const row = (await t.db.pool.query<{ connector: string; provider_ref: string; provider_data: Record<string, unknown> | null }>(`SELECT connector, provider_ref, provider_data FROM payments WHERE id = $1`, [paymentId])).rows[0]!;
  await t.app.services.payments.askProvider({ id: paymentId, connector: row.connector, ref: row.provider_ref, data: row.provider_data });
  return (await t.db.pool.query<{ status: string }>(`SELECT status::text FROM payments WHERE id = $1`, [paymentId])).rows[0]!.status;
}

async function paid(m: MerchantFixture, card: string) {
  const { paymentId, url } = await openBill(m);
  expect((await fetch(`${url}/pay`, formPost(`card=${card}`))).status).toBe(303);
  expect(await settle(paymentId)).toBe('SUCCESS');
  return paymentId;
}

async function refund(m: MerchantFixture, paymentId: string, amount?: string) {
  const r = await t.app.inject({
    method: 'POST', url: `/api/v1/refund/${amount ? 'partial' : 'full'}/create`, headers: m.auth, payload: { payment_id: paymentId, ...(amount ? { amount } : {}) },
  });
  expect(r.statusCode, r.body).toBe(200);
  await t.db.pool.query(`UPDATE refunds SET process_after = now() - interval '1 second' WHERE payment_id = $1`, [paymentId]);
  await t.app.services.refunds.processDue();
  return (await t.db.pool.query<{ id: string; status: string }>(`SELECT id, status::text FROM refunds WHERE payment_id = $1 ORDER BY created_at DESC LIMIT 1`, [paymentId])).rows[0]!;
}

/**
 * The emulator's RECEIPT notification, as T-Bank posts it (caught by the receiver, the service's
 * notification URL not being a listening server here), handed to the service's endpoint as received.
 */
async function relayReceipt(paymentId: string, o: Parameters<TBankEmulator['notifyReceipt']>[1]) {
  const path = `/tbank-receipt-${Math.random().toString(36).slice(2)}`;
  tb.notifyReceipt(paymentId, { ...o, url: `${hook.url}${path}` });
  await waitFor(() => hook.received.some((x) => x.path === path));
  const raw = hook.received.find((x) => x.path === path)!.body;
  return t.app.inject({ method: 'POST', url: '/providers/tb-26/notifications', headers: { 'content-type': 'application/json' }, payload: String(raw) });
}

const tbPaymentOf = (e: TBankEmulator, ourId: string) => [...e.payments.values()].find((p) => p.OrderId === ourId)!;

describe('fiscal tables as they stand in 2026', () => {
  it('a 22% shop\'s payment carries vat_code 11 to YooKassa', async () => {
    const m = await fiscalMerchant('yk-26');
    const { paymentId } = await openBill(m);
    const sent = yk.receipts.find((x) => x.object === 'payment' && yk.payments.get(x.id)?.metadata.payment_id === paymentId)!;
    expect(sent.receipt).toMatchObject({ tax_system_code: 1, items: [{ amount: { value: '1220.00', currency: 'RUB' }, vat_code: 11 }] });
  });

  it('a 22% shop\'s payment carries Tax vat22 to T-Bank, FfdVersion 1.05 and no unit', async () => {
    const m = await fiscalMerchant('tb-26');
    const { paymentId } = await openBill(m);
    const init = tb.receipts.find((x) => x.op === 'Init' && tb.payments.get(x.paymentId)?.OrderId === paymentId)!;
    expect(init.receipt).toEqual({
      FfdVersion: '1.05', Email: 'buyer@example.test', Taxation: 'osn',
      Items: [{ Name: 'Заказ 2026', Price: 122000, Quantity: 1, Amount: 122000, Tax: 'vat22', PaymentMethod: 'full_payment', PaymentObject: 'commodity' }],
    });
  });

  it('each of vat_code 1..12 is accepted, and reaches T-Bank in its own word', async () => {
    const words = ['none', 'vat0', 'vat10', 'vat20', 'vat110', 'vat120', 'vat5', 'vat7', 'vat105', 'vat107', 'vat22', 'vat122'];
    const m = await fiscalMerchant('tb-26');
    for (const [i, word] of words.entries()) {
      expect((await patchShop(m, { vat_code: i + 1 })).statusCode).toBe(200);
      const { paymentId } = await openBill(m, '100.00');
      expect(tb.receipts.find((x) => x.op === 'Init' && tb.payments.get(x.paymentId)?.OrderId === paymentId)!.receipt.Items).toMatchObject([{ Tax: word }]);
    }
    expect((await patchShop(m, { vat_code: 13 })).json().errors).toEqual({ 'fiscalization.vat_code': [expect.stringContaining('1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12')] });
  });

  it('tax_system_code 4 (ENVD) is refused with a 422 that says why, and nothing stored changes', async () => {
    const m = await fiscalMerchant('tb-26');
    const r = await patchShop(m, { tax_system_code: 4 });
    expect(r.statusCode).toBe(422);
    expect(r.json().errors['fiscalization.tax_system_code'][0]).toMatch(/ENVD.*abolished in 2021/);
    const shop = await t.app.inject({ method: 'GET', url: `/admin/v1/shops/${m.shopId}`, headers: admin });
    expect(shop.json().fiscalization).toMatchObject({ tax_system_code: 1, vat_code: 11, ffd_version: '1.05' });
  });

  it('the emulator refuses envd and a rate T-Bank does not know (309), and takes vat22', async () => {
    const init = (Receipt: object) => fetch(`${tb.apiUrl}/Init`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(tb.sign({ TerminalKey: tb.terminalKey, Amount: 1000, OrderId: `o-${Date.now()}-${Math.random()}`, Receipt })),
    }).then((x) => x.json() as Promise<Record<string, unknown>>);
    const item = { Name: 'x', Price: 1000, Quantity: 1, Amount: 1000, Tax: 'vat22' };
    expect(await init({ Email: 'a@b.test', Taxation: 'envd', Items: [item] })).toMatchObject({ Success: false, ErrorCode: '309' });
    expect(await init({ Email: 'a@b.test', Taxation: 'osn', Items: [{ ...item, Tax: 'vat18' }] })).toMatchObject({ Success: false, ErrorCode: '309' });
    expect(await init({ Email: 'a@b.test', Taxation: 'osn', Items: [item] })).toMatchObject({ Success: true });
  });

  it('FFD 1.2: T-Bank gets FfdVersion 1.2 and MeasurementUnit on every line, YooKassa `measure`; registers on 1.2 refuse a receipt without them', async () => {
    const tm = await fiscalMerchant('tb-26-12', { ...FISCAL, ffd_version: '1.2' });
    const { paymentId } = await openBill(tm);
    const init = tb12.receipts.find((x) => x.op === 'Init' && tb12.payments.get(x.paymentId)?.OrderId === paymentId)!;
    expect(init.receipt).toMatchObject({ FfdVersion: '1.2', Items: [{ Tax: 'vat22', MeasurementUnit: 'шт' }] });
    const ym = await fiscalMerchant('yk-26-12', { ...FISCAL, ffd_version: '1.2' });
    const y = await openBill(ym);
    const sent = yk12.receipts.find((x) => x.object === 'payment' && yk12.payments.get(x.id)?.metadata.payment_id === y.paymentId)!;
    expect(sent.receipt).toMatchObject({ items: [{ vat_code: 11, measure: 'piece' }] });
    // The same shop on FFD 1.05: both registers on 1.2 refuse it, and the payer is told the method is unavailable.
    expect((await patchShop(tm, { ffd_version: '1.05' })).statusCode).toBe(200);
    const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: tm.auth, payload: { shop_id: tm.shopId, amount: '10.00', payer_email: 'a@example.test' } });
    const r = await payRequest(t, bill.json().bill_id, { method: 'BANK_CARD' });
    expect(tb12.requests.filter((x) => x.op === 'Init').at(-1)!.errorCode).toBe('309');
    expect(r.json().payment_id).toBeDefined();
    expect((await t.db.pool.query(`SELECT status::text, failure_reason FROM payments WHERE id = $1`, [r.json().payment_id])).rows[0])
      .toEqual({ status: 'FAIL', failure_reason: 'provider_unavailable' });
  });
});

describe('YooKassa\'s own receipts ("Чеки от ЮKassa")', () => {
  it('go by e-mail only: the phone is not sent, and a payer who gave only a phone is refused before anything is sent', async () => {
    const own = await YooKassaEmulator.start({ fiscalization: true, ownReceipts: true });
    try {
      const put = await t.app.inject({
        method: 'PUT', url: '/admin/v1/connectors/yk-own', headers: admin,
        payload: { kind: 'yookassa', mode: 'test', settings: { base_url: own.apiUrl, shop_id: own.shopId, secret_key: own.secretKey, own_receipts: true } },
      });
      expect(put.statusCode, put.body).toBe(201);
      const m = await fiscalMerchant('yk-own');
      const both = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, amount: '100.00', payer_email: 'a@example.test', request_fields: ['phone'] } });
      const r1 = await payRequest(t, both.json().bill_id, { method: 'BANK_CARD', payer_phone: '+7 900 123-45-67' });
      expect(r1.statusCode, r1.body).toBe(200);
      expect(own.receipts.find((x) => own.payments.get(x.id)?.metadata.payment_id === r1.json().payment_id)!.receipt.customer).toEqual({ email: 'a@example.test' });
      const phoneOnly = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, amount: '100.00', request_fields: ['phone'] } });
      expect(phoneOnly.statusCode, phoneOnly.body).toBe(200);
      const posts = own.posts.length;
      const r2 = await payRequest(t, phoneOnly.json().bill_id, { method: 'BANK_CARD', payer_phone: '+7 900 123-45-67' });
      expect(own.posts.length).toBe(posts);
      expect((await t.db.pool.query(`SELECT status::text, failure_reason, failure_message FROM payments WHERE id = $1`, [r2.json().payment_id])).rows[0])
        .toMatchObject({ status: 'FAIL', failure_reason: 'provider_unavailable', failure_message: expect.stringContaining('yookassa:receipt_email_required') });
    } finally {
      await own.stop();
    }
  });
});

describe('T-Bank refunds and the register', () => {
  it('a full refund\'s Cancel carries no Receipt; a partial one lists the returned line', async () => {
    const m = await fiscalMerchant('tb-26');
    const whole = await paid(m, '4300000000000777');
    expect(await refund(m, whole)).toMatchObject({ status: 'SUCCESS' });
    const p = tbPaymentOf(tb, whole);
    expect(tb.cancelsSeen.filter((c) => c.paymentId === p.PaymentId)).toEqual([{ paymentId: p.PaymentId, amount: 122000, full: true, receipt: false }]);
    expect(p.Status).toBe('REFUNDED');

    const part = await paid(m, '4300000000000777');
    expect(await refund(m, part, '220.00')).toMatchObject({ status: 'SUCCESS' });
    const q = tbPaymentOf(tb, part);
    expect(tb.cancelsSeen.filter((c) => c.paymentId === q.PaymentId)).toEqual([{ paymentId: q.PaymentId, amount: 22000, full: false, receipt: true }]);
    expect(tb.receipts.filter((x) => x.op === 'Cancel' && x.paymentId === q.PaymentId).at(-1)!.receipt)
      .toMatchObject({ Items: [{ Name: 'Заказ 2026', Price: 22000, Amount: 22000, Tax: 'vat22' }] });
  });

  it('the emulator refuses a Receipt on a full Cancel (309)', async () => {
    const m = await fiscalMerchant('tb-26');
    const id = await paid(m, '4300000000000777');
    const p = tbPaymentOf(tb, id);
    const a = await fetch(`${tb.apiUrl}/Cancel`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(tb.sign({ TerminalKey: tb.terminalKey, PaymentId: p.PaymentId, Receipt: { Email: 'a@b.test', Taxation: 'osn', Items: [] } })),
    }).then((x) => x.json() as Promise<Record<string, unknown>>);
    expect(a).toMatchObject({ Success: false, ErrorCode: '309' });
    expect(p.Status).toBe('CONFIRMED');
  });

  it('a failed RECEIPT notification is on the attention list naming the payment, with the register\'s message, and in /metrics', async () => {
    const m = await fiscalMerchant('tb-26');
    const id = await paid(m, '4300000000000777');
    const p = tbPaymentOf(tb, id);
    const deliver = (o: Parameters<TBankEmulator['notifyReceipt']>[1]) => relayReceipt(p.PaymentId, o);
    // A receipt registered: acknowledged, nothing for the operator.
    const ok = await deliver({ type: 'Income' });
    expect([ok.statusCode, ok.body]).toEqual([200, 'OK']);
    const list = async () => (await t.app.inject({ method: 'GET', url: '/admin/v1/attention', headers: admin })).json().data as Array<Record<string, unknown>>;
    expect((await list()).filter((i) => i.object_id === id)).toEqual([]);
    // The register's failure: an item naming the payment, with its message.
    const failed = await deliver({ type: 'Income', errorCode: '3008', errorMessage: 'ФН переполнен' });
    expect([failed.statusCode, failed.body]).toEqual([200, 'OK']);
    const item = (await list()).find((i) => i.object_id === id && i.kind === 'receipt_failed')!;
    expect(item).toMatchObject({ object_type: 'payment', connector: 'tb-26', kind: 'receipt_failed', reason: expect.stringContaining('ФН переполнен') });
    expect(item.last_heard).toMatchObject({ register_error_code: '3008', register_message: 'ФН переполнен' });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics', headers: admin });
    expect(metrics.body).toMatch(/payments_receipt_failures_total\{object_type="payment"\} [1-9]/);
    // The console's attention view shows it, with the register's message and its one outcome.
    const op = await enrolledOperator(t, 'admin');
    const page = (await op.client.get('/operator/attention')).body;
    expect(page).toContain(`data-attention="${String(item.id)}" data-kind="receipt_failed"`);
    expect(page).toContain('data-testid="receipt-failed-badge"');
    expect(page).toContain('ФН переполнен');
    expect(page).toContain('<option value="CORRECTED">');
    // It is closed as corrected, never as a payment's outcome.
    const bad = await t.app.inject({ method: 'POST', url: `/admin/v1/attention/${String(item.id)}/resolve`, headers: admin, payload: { outcome: 'FAIL' } });
    expect(bad.statusCode).toBe(422);
    const done = await t.app.inject({ method: 'POST', url: `/admin/v1/attention/${String(item.id)}/resolve`, headers: admin, payload: { outcome: 'CORRECTED', note: 'correction receipt 17' } });
    expect(done.statusCode, done.body).toBe(200);
    expect((await t.db.pool.query(`SELECT status::text FROM payments WHERE id = $1`, [id])).rows[0]!.status).toBe('SUCCESS');
  });

  it('a failed refund receipt (IncomeReturn) names the refund', async () => {
    const m = await fiscalMerchant('tb-26');
    const id = await paid(m, '4300000000000777');
    const r = await refund(m, id, '220.00');
    const p = tbPaymentOf(tb, id);
    expect((await relayReceipt(p.PaymentId, { type: 'IncomeReturn', amount: 22000, errorCode: '1', errorMessage: 'Касса недоступна' })).body).toBe('OK');
    const items = (await t.app.inject({ method: 'GET', url: '/admin/v1/attention', headers: admin })).json().data as Array<Record<string, unknown>>;
    expect(items.find((i) => i.object_id === r.id)).toMatchObject({ object_type: 'refund', kind: 'receipt_failed', reason: expect.stringContaining('Касса недоступна') });
  });
});

describe('one receipt per operation, frozen', () => {
  it('a refund repeated after a lost answer sends the receipt it was created with, byte for byte, though the shop\'s vat_code changed between', async () => {
    const m = await fiscalMerchant('yk-26');
    const { paymentId, url } = await openBill(m);
    expect((await fetch(`${url}/pay`, formPost('card=5555555555554444'))).status).toBe(303);
    expect(await settle(paymentId)).toBe('SUCCESS');
    yk.misbehave({ op: 'refunds.create', timeoutAfterApply: 'drop' });
    const first = await refund(m, paymentId, '220.00');
    expect(first.status).toBe('PROCESS');
    expect((await patchShop(m, { vat_code: 4 })).statusCode).toBe(200);
    await t.db.pool.query(`UPDATE refunds SET next_check_at = now() - interval '1 second', lease_until = NULL WHERE id = $1`, [first.id]);
    await t.app.services.refunds.processDue();
    const sent = yk.posts.filter((x) => x.key === first.id);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.raw).toBe(sent[0]!.raw);
    expect(JSON.parse(sent[0]!.raw).receipt.items[0].vat_code).toBe(11);
    expect((await t.db.pool.query(`SELECT status::text FROM refunds WHERE id = $1`, [first.id])).rows[0]!.status).toBe('SUCCESS');
  });
});

describe('transport', () => {
  it('a provider whose certificate is not trusted is never-sent: the payment goes to the next connector of the route', async () => {
    const dir = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
    // A T-Bank address whose certificate chains to no root Node trusts (as T-Bank's would without the Russian Trusted Root CA).
    const tls = https.createServer({ key: readFileSync(`${dir}self-signed.key`), cert: readFileSync(`${dir}self-signed.crt`) }, (_q, s) => { s.end('{}'); });
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', () => r()));
    let reached = 0;
    tls.on('request', () => { reached += 1; });
    try {
      const port = (tls.address() as AddressInfo).port;
      const put = await t.app.inject({
        method: 'PUT', url: '/admin/v1/connectors/tb-untrusted', headers: admin,
        payload: { kind: 'tbank', mode: 'test', settings: { base_url: `https://127.0.0.1:${port}/v2`, terminal_key: tb.terminalKey, password: tb.password } },
      });
      expect(put.statusCode, put.body).toBe(201);
      const m = await fiscalMerchant('tb-26');
      expect((await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing: { payment_card: ['tb-untrusted', 'tb-26'] } } })).statusCode).toBe(200);
      const { paymentId } = await openBill(m);
      expect((await t.db.pool.query(`SELECT status::text, connector FROM payments WHERE id = $1`, [paymentId])).rows[0]).toEqual({ status: 'PROCESS', connector: 'tb-26' });
      expect(tbPaymentOf(tb, paymentId)).toBeDefined();
      expect(reached).toBe(0);
    } finally {
      await new Promise<void>((r) => tls.close(() => r()));
    }
  });

  it('T-Bank notifications are taken only from T-Bank\'s published networks when allowed_ips is not set', async () => {
    const m = await fiscalMerchant('tb-26');
    const id = await paid(m, '4300000000000777');
    const p = tbPaymentOf(tb, id);
    const body = tb.sign({ TerminalKey: tb.terminalKey, OrderId: id, Success: true, Status: 'CONFIRMED', PaymentId: Number(p.PaymentId), ErrorCode: '0', Amount: p.Amount });
    const from = (ip: string) => t.app.inject({ method: 'POST', url: '/providers/tb-26/notifications', remoteAddress: ip, payload: body });
    expect((await from('203.0.113.9')).statusCode).toBeGreaterThanOrEqual(400);
    for (const ip of ['91.194.227.10', '91.218.135.200', '212.49.24.1', '212.233.83.254']) {
      const r = await from(ip);
      expect([ip, r.statusCode, r.body]).toEqual([ip, 200, 'OK']);
    }
    expect(tbankSettingsOf({ name: 'x', kind: 'tbank', mode: 'live', enabled: true, settings: {}, secrets: {} } as never, 'production').allowedIps).toBe(TBANK_NOTIFICATION_SOURCES);
  });

  it('Init carries RedirectDueDate from the bill\'s ttl; without a ttl none is sent', async () => {
    const m = await fiscalMerchant('tb-26');
    const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, amount: '100.00', payer_email: 'a@example.test', ttl: 3600 } });
    expect(bill.statusCode, bill.body).toBe(200);
    const expires = (await t.db.pool.query<{ expires_at: Date }>(`SELECT expires_at FROM bills WHERE id = $1`, [bill.json().bill_id])).rows[0]!.expires_at;
    const r = await payRequest(t, bill.json().bill_id, { method: 'BANK_CARD' });
    const p = tbPaymentOf(tb, r.json().payment_id);
    expect(Math.abs(p.DueAt - expires.getTime())).toBeLessThan(1000);
    // Without a ttl: none is sent (T-Bank's own 24 hours).
    const { paymentId } = await openBill(m, '100.00');
    expect(Math.abs(tbPaymentOf(tb, paymentId).DueAt - (Date.now() + 24 * 3_600_000))).toBeLessThan(60_000);
  });
});
