import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createBill, payNewBill } from '../factories/payment.js';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent } from '../../src/outbox/events.js';
import { cabinetMerchant, signedIn, type CabinetMerchant } from './helpers.js';
import type { CabinetClient } from './helpers.js';

let t: TestApp;
let a: CabinetMerchant;
let b: CabinetMerchant;
let ca: CabinetClient;
/** Every object of merchant B. */
const B: Record<string, string> = {};
/** B's outbox event id (a small number: checked as a link, not as a substring). */
let bEventId: string;

beforeAll(async () => {
  t = await setupTestApp();
  a = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
  b = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true }, shop: { resultUrl: 'https://b.example/result' } });
  B.bill = await createBill(t, b, { orderId: 'b-order-secret' });
  const paid = await payNewBill(t, b, { amount: '500.00' });
  B.paidBill = paid.billId;
  B.payment = paid.paymentId;
  const refund = await t.app.services.refunds.createPartial({ id: b.merchantId, grantRefunds: true }, paid.paymentId, new (await import('decimal.js')).Decimal('10'));
  B.refund = refund.id;
  const acc = await t.app.services.payoutAccounts.create(b.merchantId, { type: 'card', identifier: '5555555555554444', cardHolder: 'B HOLDER' });
  B.account = acc.id;
  const payouts = await t.app.services.payouts.createPersonal({ id: b.merchantId, verified: true }, { amount: new Decimal('50'), payoutAccountId: acc.id });
  B.payout = payouts[0]!.id;
  B.shop = b.shopId;
  await withPgTx(t.db.pool, (c) => enqueueEvent(c, {
    merchantId: b.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: 'b-event-1', url: 'https://b.example/result',
    fields: { InvId: 'x', OutSum: '1.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: 'b-event-1', Status: 'SUCCESS', custom: '' },
  }));
  B.eventTrsId = 'b-event-1';
  bEventId = (await t.db.prisma.outboxEvent.findFirstOrThrow({ where: { merchantId: b.merchantId, aggregateId: 'b-event-1' } })).id.toString();
  // A has objects of its own, so its lists are not empty.
  await payNewBill(t, a);
  ca = await signedIn(t, a);
});
afterAll(async () => { await t.close(); });

test("no cabinet list page of merchant A shows any of merchant B's objects", async () => {
  const pages = ['/cabinet', '/cabinet/bills', '/cabinet/payments', '/cabinet/payouts', '/cabinet/payouts/new', '/cabinet/accounts', '/cabinet/shops', '/cabinet/webhooks', '/cabinet/api', '/cabinet/bills/new'];
  for (const url of pages) {
    const r = await ca.get(url);
    expect(r.statusCode, url).toBe(200);
    for (const [what, id] of Object.entries(B)) expect(r.body, `${url} shows B's ${what}`).not.toContain(id);
    expect(r.body).not.toContain('b-order-secret');
    expect(r.body).not.toContain('B HOLDER');
    expect(r.body).not.toContain(`/events/${bEventId}/redeliver`);
  }
  const filtered = await ca.get(`/cabinet/bills?shop_id=${B.shop}`);
  expect(filtered.body).not.toContain(B.bill);
  const pf = await ca.get(`/cabinet/payments?shop_id=${B.shop}`);
  expect(pf.body).not.toContain(B.payment);
});

test("merchant A opening merchant B's bill, payment or shop gets 404", async () => {
  for (const url of [`/cabinet/bills/${B.bill}`, `/cabinet/bills/${B.paidBill}`, `/cabinet/payments/${B.payment}`, `/cabinet/shops/${B.shop}`]) {
    const r = await ca.get(url);
    expect(r.statusCode, url).toBe(404);
    expect(r.body).not.toContain('b-order-secret');
  }
});

test("merchant A cannot act on merchant B's objects: nothing of B changes", async () => {
  const snapshot = async () => JSON.stringify(await Promise.all([
    t.db.prisma.bill.findMany({ where: { merchantId: b.merchantId }, orderBy: { id: 'asc' } }),
    t.db.prisma.shop.findMany({ where: { merchantId: b.merchantId } }),
    t.db.prisma.refund.findMany({ where: { merchantId: b.merchantId } }),
    t.db.prisma.payout.findMany({ where: { merchantId: b.merchantId } }),
    t.db.prisma.balance.findMany({ where: { merchantId: b.merchantId } }),
    t.db.prisma.outboxEvent.findMany({ where: { merchantId: b.merchantId } }),
  ]), (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  const before = await snapshot();

  const toggle = await ca.submit('/cabinet', `/cabinet/bills/${B.bill}/toggle`, { active: '0' });
  expect(toggle.statusCode).toBe(404);
  const shop = await ca.submit('/cabinet', `/cabinet/shops/${B.shop}`, { result_url: 'https://evil.example/', default_currency: 'USD' });
  expect(shop.statusCode).toBe(404);
  const test = await ca.submit('/cabinet', `/cabinet/shops/${B.shop}/test-postback`, {});
  expect(test.statusCode).toBe(404);
  const refund = await ca.submit('/cabinet', `/cabinet/payments/${B.payment}/refund`, { mode: 'full' });
  expect(refund.statusCode).toBe(404);
  const redeliver = await ca.submit('/cabinet', `/cabinet/webhooks/events/${bEventId}/redeliver`, {});
  expect(redeliver.statusCode).toBe(404);
  const payout = await ca.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: B.account!, amount: '10' });
  expect(payout.statusCode).toBe(422);
  expect(payout.body).toContain('Payout account not found.');
  const bill = await ca.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '10', shop_id: B.shop! });
  expect(bill.statusCode).toBe(422);

  expect(await snapshot()).toBe(before);
  expect(await t.db.prisma.payout.count({ where: { merchantId: a.merchantId } })).toBe(0);
  expect(await t.db.prisma.bill.count({ where: { shopId: B.shop, merchantId: a.merchantId } })).toBe(0);
});
