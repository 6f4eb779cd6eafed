import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createBill, payNewBill } from '../factories/payment.js';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent } from '../../src/outbox/events.js';
import { cabinetMerchant, signedIn } from './helpers.js';
import { formatMoney } from '../../src/lib/money-format.js';

let t: TestApp;
let receiver: Server;
let receiverUrl: string;
const received: string[] = [];

beforeAll(async () => {
  t = await setupTestApp();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => { received.push(body); res.writeHead(200, { 'content-type': 'text/plain' }).end('OK-from-receiver'); });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/result`;
});
afterAll(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
  await t.close();
});

const balance = async (merchantId: string) =>
  t.db.prisma.balance.findUniqueOrThrow({ where: { merchantId_currency: { merchantId, currency: 'RUB' } } });

describe('bills through the cabinet follow the API rules', () => {
  test('a bill created in the cabinet is the same as one from bill/create', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const r = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '250.50', shop_id: m.shopId, order_id: 'ord-1', type: 'multi', payer_pays_commission: '1' });
    expect(r.statusCode).toBe(303);
    const id = /\/cabinet\/bills\/([A-Za-z0-9]+)\?ok=bills.created/.exec(r.headers.location as string)![1]!;
    const bill = await t.db.prisma.bill.findUniqueOrThrow({ where: { id } });
    expect(bill.merchantId).toBe(m.merchantId);
    expect(bill.amount.toFixed(2)).toBe('250.50');
    expect(bill.type).toBe('MULTI');
    expect(bill.orderId).toBe('ord-1');
    expect(bill.payerPaysCommission).toBe(true);
    expect(bill.currencyIn).toBe('RUB');
    const page = await c.get(r.headers.location as string);
    expect(page.body).toContain('Bill created.');
    expect(page.body).toContain(`http://pay.test/pay/${id}`);
    expect(page.body).toContain(`http://pay.test/pay/${id}/qr`);
  });

  test('an invalid amount is shown next to the amount field and stores nothing', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    for (const amount of ['0', '1.234', '100000000', 'abc', '']) {
      const r = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount, shop_id: m.shopId });
      expect(r.statusCode, amount).toBe(422);
      expect(r.body, amount).toContain('id="err-amount"');
      expect(r.body).toMatch(/id="amount"[^>]*aria-invalid="true"/);
    }
    expect(await t.db.prisma.bill.count({ where: { merchantId: m.merchantId } })).toBe(0);
  });

  test("another merchant's shop is refused with access_denied next to the shop field", async () => {
    const a = await cabinetMerchant(t);
    const b = await cabinetMerchant(t);
    const c = await signedIn(t, a);
    const r = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '10', shop_id: b.shopId });
    expect(r.statusCode).toBe(422);
    expect(r.body).toMatch(/id="err-shop_id">No access to this shop\./);
    expect(await t.db.prisma.bill.count({ where: { shopId: b.shopId } })).toBe(0);
  });

  test('a USD bill without an operator rate is refused with rate-not-found, in Russian for a Russian user', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    await c.get('/cabinet?lang=ru');
    await t.db.prisma.fxRate.deleteMany({ where: { currency: 'USD' } });
    const r = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '10', shop_id: m.shopId, currency_in: 'USD' });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('Нет курса для этой валюты.');
  });

  test('toggling activity goes through the bill service; a paid NORMAL bill shows bill_is_finished and stays as it was', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const open = await createBill(t, m);
    const off = await c.submit(`/cabinet/bills/${open}`, `/cabinet/bills/${open}/toggle`, { active: '0' });
    expect(off.statusCode).toBe(303);
    expect((await t.db.prisma.bill.findUniqueOrThrow({ where: { id: open } })).active).toBe(false);
    const { billId } = await payNewBill(t, m);
    const r = await c.submit(`/cabinet/bills/${billId}`, `/cabinet/bills/${billId}/toggle`, { active: '0' });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('This bill is already paid and cannot be toggled.');
    expect((await t.db.prisma.bill.findUniqueOrThrow({ where: { id: billId } })).active).toBe(true);
  });

  test('an inactive subscription refuses bill creation and toggling, as bill/create does', async () => {
    const m = await cabinetMerchant(t);
    // A bill made while the subscription was active, then the subscription lapses.
    const bill = await createBill(t, m);
    await t.db.prisma.merchant.update({ where: { id: m.merchantId }, data: { subscription: 'INACTIVE' } });
    const c = await signedIn(t, m);
    const r = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '10', shop_id: m.shopId });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('Subscription is not active.');
    expect(await t.db.prisma.bill.count({ where: { merchantId: m.merchantId } })).toBe(1);
    const tg = await c.submit(`/cabinet/bills/${bill}`, `/cabinet/bills/${bill}/toggle`, { active: '0' });
    expect(tg.statusCode).toBe(422);
    expect((await t.db.prisma.bill.findUniqueOrThrow({ where: { id: bill } })).active).toBe(true);
  });

  test('bill list filters by status and shop and pages', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const ids = [];
    for (let i = 0; i < 22; i++) ids.push(await createBill(t, m));
    const { billId: paid } = await payNewBill(t, m);
    const p1 = await c.get('/cabinet/bills');
    expect(p1.body).toContain('rel="next"');
    const p2 = await c.get('/cabinet/bills?page=2');
    const count = (html: string) => (html.match(/href="\/cabinet\/bills\/[A-Za-z0-9]{10}"/g) ?? []).length;
    expect(count(p1.body) + count(p2.body)).toBe(23);
    const success = await c.get('/cabinet/bills?status=SUCCESS');
    expect(count(success.body)).toBe(1);
    expect(success.body).toContain(paid);
    const other = await t.app.services.shops.create(m.merchantId, { name: 'Second shop' });
    const inOther = await createBill(t, { ...m, shopId: other.id });
    const byShop = await c.get(`/cabinet/bills?shop_id=${other.id}`);
    expect(count(byShop.body)).toBe(1);
    expect(byShop.body).toContain(inOther);
    const bad = await c.get('/cabinet/bills?from=2026-13-45');
    expect(bad.statusCode).toBe(200);
    expect(bad.body).toContain('id="err-from"');
  });
});

describe('payments and refunds', () => {
  test('the payment and its credit appear in the cabinet; the dashboard shows the new balance', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const { paymentId } = await payNewBill(t, m, { amount: '700.00' });
    const list = await c.get('/cabinet/payments');
    expect(list.body).toContain(paymentId);
    const dash = await c.get('/cabinet');
    const bal = await balance(m.merchantId);
    expect(bal.available.gt(0)).toBe(true);
    // Money as people read it (issue 16): the ruble sign, thousands separators, two decimals.
    expect(dash.body).toContain(`data-testid="available-RUB">${formatMoney(bal.available.toString(), 'en', 'RUB')}<`);
    expect(dash.body).toContain('<svg class="chart"');
  });

  test('without the refund grant there is no refund button and a forged refund is refused', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const { paymentId } = await payNewBill(t, m);
    const page = await c.get(`/cabinet/payments/${paymentId}`);
    expect(page.body).toContain('Refunds are available on request through support.');
    expect(page.body).not.toContain('name="mode" value="full"');
    const r = await c.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'full' });
    expect(r.statusCode).toBe(403);
    expect(r.body).toContain('This action is unauthorized.');
    expect(await t.db.prisma.refund.count({ where: { paymentId } })).toBe(0);
  });

  test('a partial refund over what is left is shown next to the amount; a full refund refunds the rest and locks it', async () => {
    const m = await cabinetMerchant(t, { merchant: { grantRefunds: true } });
    const c = await signedIn(t, m);
    const { paymentId } = await payNewBill(t, m, { amount: '300.00' });
    const before = await balance(m.merchantId);
    const over = await c.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'partial', amount: '300.01' });
    expect(over.statusCode).toBe(422);
    expect(over.body).toContain('id="err-amount"');
    const missing = await c.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'partial', amount: '' });
    expect(missing.statusCode).toBe(422);
    expect(missing.body).toContain('id="err-amount"');
    expect(await t.db.prisma.refund.count({ where: { paymentId } })).toBe(0);
    const part = await c.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'partial', amount: '100' });
    expect(part.statusCode).toBe(303);
    const full = await c.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'full' });
    expect(full.statusCode).toBe(303);
    const refunds = await t.db.prisma.refund.findMany({ where: { paymentId }, orderBy: { createdAt: 'asc' } });
    expect(refunds.map((r) => r.amount.toFixed(2))).toEqual(['100.00', '200.00']);
    const after = await balance(m.merchantId);
    expect(after.available.toFixed(8)).toBe(before.available.minus(300).toFixed(8));
    expect(after.locked.toFixed(8)).toBe(before.locked.plus(300).toFixed(8));
    const page = await c.get(`/cabinet/payments/${paymentId}`);
    expect(page.body).not.toContain('name="mode" value="full"');
  });
});

describe('payouts and payout accounts', () => {
  test('a payout account is added through the same validation; the full card number is never shown', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const bad = await c.submit('/cabinet/accounts', '/cabinet/accounts', { type: 'card', identifier: '4111111111111112', card_holder: 'IVAN IVANOV' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('id="err-identifier"');
    expect(bad.body).not.toContain('4111111111111112');
    const noHolder = await c.submit('/cabinet/accounts', '/cabinet/accounts', { type: 'card', identifier: '4111111111111111', card_holder: '' });
    expect(noHolder.body).toContain('id="err-card_holder"');
    const ok = await c.submit('/cabinet/accounts', '/cabinet/accounts', { type: 'card', identifier: '4111 1111 1111 1111', card_holder: 'IVAN IVANOV' });
    expect(ok.statusCode).toBe(303);
    const list = await c.get('/cabinet/accounts');
    expect(list.body).toContain('411111******1111');
    expect(list.body).not.toContain('4111111111111111');
    const row = await t.db.prisma.payoutAccount.findFirstOrThrow({ where: { merchantId: m.merchantId } });
    expect(row.identifierEnc).not.toContain('4111111111111111');
  });

  test('a payout from the cabinet follows the payout rules: unverified refused, then balance_not_enough, then created and locked', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    await payNewBill(t, m, { amount: '1000.00' });
    const acc = await t.app.services.payoutAccounts.create(m.merchantId, { type: 'card', identifier: '4111111111111111', cardHolder: 'IVAN IVANOV' });
    const unverified = await c.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '100' });
    expect(unverified.statusCode).toBe(422);
    expect(unverified.body).toContain('The merchant is not verified.');
    await t.db.prisma.merchant.update({ where: { id: m.merchantId }, data: { verified: true } });
    const c2 = await signedIn(t, m);
    const tooMuch = await c2.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '5000' });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.body).toMatch(/id="err-amount">Not enough balance\./);
    expect(await t.db.prisma.payout.count({ where: { merchantId: m.merchantId } })).toBe(0);
    const before = await balance(m.merchantId);
    const ok = await c2.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '100' });
    expect(ok.statusCode).toBe(303);
    const payouts = await t.db.prisma.payout.findMany({ where: { merchantId: m.merchantId } });
    expect(payouts).toHaveLength(1);
    expect(payouts[0]!.amount.toFixed(2)).toBe('100.00');
    const after = await balance(m.merchantId);
    expect(after.locked.minus(before.locked).toFixed(8)).toBe('100.00000000');
    const list = await c2.get('/cabinet/payouts');
    expect(list.body).toContain(payouts[0]!.id);
    expect(list.body).toContain('411111******1111');
  });

  test('a cabinet payout to a card number routed only to a YooKassa gateway without PCI DSS is refused on the account field (direction_not_available): nothing stored, nothing locked', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const put = await t.app.inject({ method: 'PUT', url: '/admin/v1/connectors/yk-cab-nopci', headers: admin, payload: { kind: 'yookassa', mode: 'test', settings: {
      base_url: 'http://127.0.0.1:9/api/v3', shop_id: '1', secret_key: 'test_s', payout_agent_id: '2', payout_secret_key: 'test_p',
    } } });
    expect(put.statusCode, put.body).toBe(201);
    const m = await cabinetMerchant(t, { merchant: { verified: true } });
    await payNewBill(t, m, { amount: '1000.00' });
    const acc = await t.app.services.payoutAccounts.create(m.merchantId, { type: 'card', identifier: '4111111111111111', cardHolder: 'IVAN IVANOV' });
    const route = await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing: { payout_card: ['yk-cab-nopci'] } } });
    expect(route.statusCode, route.body).toBe(200);
    const before = await balance(m.merchantId);
    const c = await signedIn(t, m);
    const r = await c.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '100' });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('This account cannot be used for this payout.');
    expect(await t.db.prisma.payout.count({ where: { merchantId: m.merchantId } })).toBe(0);
    const after = await balance(m.merchantId);
    expect([after.available.toFixed(8), after.locked.toFixed(8)]).toEqual([before.available.toFixed(8), before.locked.toFixed(8)]);
  });
});

describe('shops, webhooks and the delivery log', () => {
  test('shop settings are saved through the shop service and a bad URL is shown next to its field, storing nothing', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const bad = await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}`, { result_url: 'ftp://example.com/x', success_url: 'https://ok.example/s', fail_url: '', default_currency: 'EUR' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('id="err-result_url"');
    let shop = await t.db.prisma.shop.findUniqueOrThrow({ where: { id: m.shopId } });
    expect(shop.successUrl).toBeNull();
    expect(shop.defaultCurrency).toBe('RUB');
    const ok = await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}`, { result_url: receiverUrl, success_url: 'https://ok.example/s', fail_url: 'https://ok.example/f', default_currency: 'EUR' });
    expect(ok.statusCode).toBe(303);
    shop = await t.db.prisma.shop.findUniqueOrThrow({ where: { id: m.shopId } });
    expect([shop.resultUrl, shop.successUrl, shop.failUrl, shop.defaultCurrency]).toEqual([receiverUrl, 'https://ok.example/s', 'https://ok.example/f', 'EUR']);
  });

  test('fiscal receipts are set in the shop settings form: enabled without a tax system is an error next to the field; saved, the form shows them', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const base = { result_url: '', success_url: '', fail_url: '', default_currency: 'RUB' };
    const bad = await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}`, { ...base, fiscal_enabled: '1', tax_system_code: '', vat_code: '4' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('id="err-tax_system_code"');
    expect((await t.db.prisma.shop.findUniqueOrThrow({ where: { id: m.shopId } })).fiscalization).toBeNull();
    const ok = await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}`, {
      ...base, fiscal_enabled: '1', tax_system_code: '2', vat_code: '1', payment_subject: 'service', payment_mode: 'full_prepayment',
    });
    expect(ok.statusCode).toBe(303);
    expect((await t.db.prisma.shop.findUniqueOrThrow({ where: { id: m.shopId } })).fiscalization).toEqual({
      enabled: true, tax_system_code: 2, vat_code: 1, payment_subject: 'service', payment_mode: 'full_prepayment', ffd_version: '1.05',
    });
    const page = await c.get(`/cabinet/shops/${m.shopId}?lang=ru`);
    expect(page.body).toContain('Фискальные чеки (54-ФЗ)');
    expect(page.body).toMatch(/id="fiscal_enabled"[^>]*checked/);
    expect(page.body).toContain('<option value="2" selected>');
    // The 2026 rates in words, and no ENVD to choose.
    expect(page.body).toContain('11 · НДС 22%');
    expect(page.body).toContain('12 · НДС 22/122');
    expect(page.body).not.toContain('ЕНВД');
    expect((await c.get(`/cabinet/shops/${m.shopId}?lang=en`)).body).toContain('11 · VAT 22%');
    // Payment subject and mode in words too (the one fiscal dictionary the console shares).
    expect(page.body).toContain('<option value="service" selected>Услуга</option>');
    expect(page.body).toContain('<option value="full_prepayment" selected>Предоплата 100%</option>');
  });

  test("the test postback is sent to the shop's Result URL and the receiver's answer is shown", async () => {
    const m = await cabinetMerchant(t, { shop: { resultUrl: receiverUrl } });
    const c = await signedIn(t, m);
    const n = received.length;
    const sent = await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}/test-postback`, {});
    expect(sent.statusCode).toBe(303);
    const r = await c.get(sent.headers.location as string);
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('data-testid="test-result"');
    expect(r.body).toContain('HTTP 200');
    expect(r.body).toContain('OK-from-receiver');
    expect(received.length).toBe(n + 1);
    expect(received.at(-1)).toContain('SignatureValue=');
  });

  test('a test postback without a Result URL is explained, not a 500', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const r = await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}/test-postback`, {});
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('The shop has no Result URL.');
  });

  test('the payout webhook URL goes through the URL guard; the delivery log lists events with attempts and redelivers', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const bad = await c.submit('/cabinet/webhooks', '/cabinet/webhooks', { url: 'javascript:alert(1)' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('id="err-url"');
    expect((await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).payoutWebhookUrl).toBeNull();
    const ok = await c.submit('/cabinet/webhooks', '/cabinet/webhooks', { url: 'https://hooks.example/payouts' });
    expect(ok.statusCode).toBe(303);
    expect((await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).payoutWebhookUrl).toBe('https://hooks.example/payouts');
    // One audit entry, by the merchant, for the saved URL; none for the refused one (issue 17).
    const trail = await t.db.pool.query("SELECT actor, action, before, after FROM audit_log WHERE object_id = $1 AND action = 'merchant.payout_webhook.set'", [m.merchantId]);
    expect(trail.rows).toEqual([{ actor: `merchant:${m.merchantId}`, action: 'merchant.payout_webhook.set', before: { payout_webhook_url: null }, after: { payout_webhook_url: 'https://hooks.example/payouts' } }]);

    await withPgTx(t.db.pool, (cl) => enqueueEvent(cl, {
      merchantId: m.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: `pay-${m.merchantId}`, url: null,
      fields: { InvId: '1', OutSum: '10.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: `pay-${m.merchantId}`, Status: 'SUCCESS', custom: '' },
    }));
    const ev = await t.db.prisma.outboxEvent.findFirstOrThrow({ where: { merchantId: m.merchantId, aggregateId: `pay-${m.merchantId}` } });
    await t.db.prisma.deliveryAttempt.create({ data: { eventId: ev.id, httpStatus: 503, latencyMs: 12, responseHead: 'busy, try later' } });
    const log = await c.get('/cabinet/webhooks');
    expect(log.body).toContain(`pay-${m.merchantId}`);
    expect(log.body).toContain('busy, try later');
    expect(log.body).toContain('503');
    const r = await c.submit('/cabinet/webhooks', `/cabinet/webhooks/events/${ev.id}/redeliver`, {});
    expect(r.statusCode).toBe(303);
    expect((await t.db.prisma.outboxEvent.findUniqueOrThrow({ where: { id: ev.id } })).status).toBe('PENDING');
  });
});

describe('API integration', () => {
  test('Refresh API token: the old token fails at once, the new one works and is shown only once', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const confirm = await c.get('/cabinet/api/refresh');
    expect(confirm.body).toContain('the current token stops working at once');
    const sent = await c.submit('/cabinet/api/refresh', '/cabinet/api/refresh', {});
    expect(sent.statusCode).toBe(303);
    const r = await c.get(sent.headers.location as string);
    expect(r.statusCode).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    const token = /id="new-token" readonly value="([^"]+)"/.exec(r.body)![1]!;
    expect(token.length).toBeGreaterThanOrEqual(40);
    const old = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: m.auth });
    expect(old.statusCode).toBe(401);
    const fresh = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${token}` } });
    expect(fresh.statusCode).toBe(200);
    const later = await c.get('/cabinet/api');
    expect(later.body).not.toContain(token);
    // The token is not stored readable: the flash that carried it to the page is gone.
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM cabinet_flashes')).rows[0].n).toBe(0);
    // Audited as the merchant, with the issue time only, never the token (issue 17).
    const trail = await t.db.pool.query("SELECT actor, after FROM audit_log WHERE object_id = $1 AND action = 'merchant.token.refresh'", [m.merchantId]);
    expect(trail.rows).toHaveLength(1);
    expect(trail.rows[0].actor).toBe(`merchant:${m.merchantId}`);
    // The issue time is written to the second: a refresh within the second the token was issued
    // shows no changed field, but the entry (who, when, which merchant) is there either way.
    expect(Object.keys(trail.rows[0].after).every((k) => k === 'api_token_issued_at')).toBe(true);
    expect(JSON.stringify(trail.rows)).not.toContain(token);
  });
});
