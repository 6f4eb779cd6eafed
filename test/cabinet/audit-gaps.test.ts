import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createBill, payNewBill } from '../factories/payment.js';
import { CabinetClient, PASSWORD, cabinetMerchant, signedIn } from './helpers.js';
import { deadEvent } from '../operator/helpers.js';

/**
 * The audit gaps of issue 17's first step, closed: cabinet sign-ins and failed sign-ins, the
 * bill toggle, refunds, payouts, event redelivery and test postbacks (cabinet and operator API)
 * each leave one entry, written with the change.
 */
let t: TestApp;
let receiver: Server;
let receiverUrl: string;
beforeAll(async () => {
  t = await setupTestApp();
  receiver = createServer((req, res) => { req.resume(); req.on('end', () => res.end('OK')); });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/result`;
});
afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
  await t?.close();
});

const trail = async (objectId: string) => (await t.db.pool.query<{ actor: string; action: string; before: unknown; after: unknown }>(
  'SELECT actor, action, before, after FROM audit_log WHERE object_id = $1 ORDER BY id', [objectId],
)).rows;

describe('cabinet actions in the audit trail', () => {
  test('a sign-in and a failed sign-in of a known merchant', async () => {
    const m = await cabinetMerchant(t);
    const c = new CabinetClient(t);
    expect((await c.login(m.email, 'wrong password')).statusCode).toBe(401);
    expect((await c.login(m.email, PASSWORD)).statusCode).toBe(303);
    expect(await trail(m.merchantId)).toEqual([
      { actor: 'anonymous', action: 'merchant.sign_in.failed', before: null, after: { reason: 'invalid' } },
      { actor: `merchant:${m.merchantId}`, action: 'merchant.sign_in', before: null, after: null },
    ]);
  });

  test('the bill toggle', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const bill = await createBill(t, m);
    expect((await c.submit(`/cabinet/bills/${bill}`, `/cabinet/bills/${bill}/toggle`, { active: '0' })).statusCode).toBe(303);
    expect(await trail(bill)).toEqual([{ actor: `merchant:${m.merchantId}`, action: 'bill.toggle', before: { active: true }, after: { active: false } }]);
  });

  test('a refund', async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
    const c = await signedIn(t, m);
    const { paymentId } = await payNewBill(t, m, { amount: '300.00' });
    expect((await c.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'full' })).statusCode).toBe(303);
    const refund = await t.db.prisma.refund.findFirstOrThrow({ where: { paymentId } });
    expect(await trail(refund.id)).toEqual([{
      actor: `merchant:${m.merchantId}`, action: 'refund.create', before: null,
      after: { payment_id: paymentId, amount: refund.amount.toFixed(2), currency: refund.currency, status: expect.any(String) },
    }]);
  });

  test('a payout', async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true } });
    const c = await signedIn(t, m);
    await payNewBill(t, m, { amount: '1000.00' });
    const acc = await t.app.services.payoutAccounts.create(m.merchantId, { type: 'card', identifier: '4111111111111111', cardHolder: 'IVAN IVANOV' });
    expect((await c.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '100' })).statusCode).toBe(303);
    const p = await t.db.prisma.payout.findFirstOrThrow({ where: { merchantId: m.merchantId } });
    const entries = await trail(p.id);
    expect(entries).toMatchObject([{ actor: `merchant:${m.merchantId}`, action: 'payout.create', after: { amount: 100, currency: 'RUB' } }]);
    expect(JSON.stringify(entries)).not.toContain('4111111111111111');
  });

  test('an event redelivery and a test postback', async () => {
    const m = await cabinetMerchant(t, { shop: { resultUrl: receiverUrl } });
    const c = await signedIn(t, m);
    const ev = await deadEvent(t, m.merchantId);
    expect((await c.submit('/cabinet/webhooks', `/cabinet/webhooks/events/${ev}/redeliver`, {})).statusCode).toBe(303);
    expect(await trail(ev)).toEqual([{ actor: `merchant:${m.merchantId}`, action: 'event.redeliver', before: { status: 'dead' }, after: null }]);

    expect((await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}/test-postback`, {})).statusCode).toBe(303);
    const api = await t.app.inject({ method: 'POST', url: `/admin/v1/shops/${m.shopId}/test-postback`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(api.statusCode).toBe(200);
    expect(await trail(m.shopId)).toMatchObject([
      { actor: `merchant:${m.merchantId}`, action: 'shop.test_postback', after: { delivered: true } },
      { actor: 'admin-token', action: 'shop.test_postback', after: { delivered: true } },
    ]);
  });
});
