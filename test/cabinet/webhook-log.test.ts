import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent } from '../../src/outbox/events.js';
import { CabinetClient, cabinetMerchant, signedIn } from './helpers.js';
import { seedDemo } from '../../src/entry/seed.js';
import { deliverUntil } from '../outbox/deliver-until.js';
import { cardForm, payRequest } from '../factories/payment.js';

/** Issue 16 item 5 (the webhook log tells the truth) and item 7 (a first visit is not "expired"). */
let t: TestApp;
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  t = await setupTestApp();
  receiver = createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end('OK')); });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/result`;
});
afterAll(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
  await t.close();
});

const fields = (id: string) => ({ InvId: '1', OutSum: '10.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: id, Status: 'SUCCESS', custom: '' });
const statuses = (html: string) => [...html.matchAll(/data-status="([a-z_]+)"/g)].map((x) => x[1]);
const trsIds = (html: string) => [...html.matchAll(/<code>(ev-[a-z-]+)<\/code>/g)].map((x) => x[1]);

describe('the webhook log', () => {
  test('newest first; not configured apart from dead; next retry time; the URL of each attempt; filters', async () => {
    const m = await cabinetMerchant(t, { shop: { resultUrl: receiverUrl } });
    const c = await signedIn(t, m);
    const enq = (id: string, url: string | null) => withPgTx(t.db.pool, (cl) => enqueueEvent(cl, { merchantId: m.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: id, url, fields: fields(id) }));
    await enq('ev-unset', null);
    await enq('ev-dead', 'https://gone.example/hook');
    await enq('ev-retry', 'https://slow.example/hook');
    await t.db.pool.query("UPDATE outbox_events SET status = 'DEAD', last_error = 'HTTP 500', attempts = 8 WHERE aggregate_id = 'ev-dead'");
    await t.db.pool.query("UPDATE outbox_events SET attempts = 1, next_attempt_at = '2030-01-02T03:04:05Z' WHERE aggregate_id = 'ev-retry'");
    // A real delivery: the attempt records where it went.
    const sent = await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}/test-postback`, {});
    expect(sent.statusCode).toBe(303);

    const log = await c.get('/cabinet/webhooks');
    expect(log.statusCode).toBe(200);
    expect(trsIds(log.body)).toEqual(['ev-retry', 'ev-dead', 'ev-unset']);
    expect(statuses(log.body)).toEqual(['delivered', 'pending', 'dead', 'not_configured']);
    expect(log.body).toContain('>Not configured<');
    expect(log.body).toContain('Not sent: no URL was configured for it.');
    expect(log.body).toMatch(/data-testid="next-retry">Next try: 2030-01-02 \d\d:\d\d:05</);
    expect(log.body).toContain(`data-testid="attempt-url">${receiverUrl}<`);

    expect(statuses((await c.get('/cabinet/webhooks?status=not_configured')).body)).toEqual(['not_configured']);
    expect(statuses((await c.get('/cabinet/webhooks?status=dead')).body)).toEqual(['dead']);
    expect(statuses((await c.get('/cabinet/webhooks?kind=TEST_POSTBACK')).body)).toEqual(['delivered']);
    expect(statuses((await c.get('/cabinet/webhooks?from=2099-01-01')).body)).toEqual([]);
    const bad = await c.get('/cabinet/webhooks?from=nonsense&kind=<script>');
    expect(bad.statusCode).toBe(200);
    expect(bad.body).toContain('id="err-from"');

    const other = await signedIn(t, await cabinetMerchant(t));
    expect(statuses((await other.get('/cabinet/webhooks')).body)).toEqual([]);
  });
});

describe('first hour', () => {
  test('a first visit to the cabinet asks to sign in without saying the session expired; a lost session does say it', async () => {
    const fresh = new CabinetClient(t);
    const first = await fresh.get('/cabinet');
    expect(first.statusCode).toBe(303);
    const login = await fresh.get(first.headers.location as string);
    expect(login.body).not.toContain('Your session has expired');
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    await t.db.pool.query('DELETE FROM cabinet_sessions WHERE merchant_id = $1', [m.merchantId]);
    const again = await c.get('/cabinet/payments');
    expect(again.headers.location).toMatch(/expired=1/);
    expect((await c.get(again.headers.location as string)).body).toContain('Your session has expired');
  });
});

describe('the demo shop', () => {
  test("comes with the built-in sandbox receiver: the first payment's postback is delivered and the payer returns to the shop", async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const demo = await seedDemo(t.app.services, t.db, address);
    const shop = await t.db.prisma.shop.findUniqueOrThrow({ where: { id: demo.shopId } });
    expect([shop.resultUrl, shop.successUrl, shop.failUrl]).toEqual([`${address}/sandbox/shop/result`, `${address}/sandbox/shop/success`, `${address}/sandbox/shop/fail`]);
    // A second start keeps what is there.
    await seedDemo(t.app.services, t.db, 'http://elsewhere.test');
    expect((await t.db.prisma.shop.findUniqueOrThrow({ where: { id: demo.shopId } })).resultUrl).toBe(`${address}/sandbox/shop/result`);

    const created = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { authorization: `Bearer ${demo.apiToken}` }, payload: { amount: '100', shop_id: demo.shopId } });
    expect(created.statusCode).toBe(200);
    const paid = await payRequest(t, created.json().bill_id, cardForm());
    expect(paid.json().redirect.url).toBe(`${address}/sandbox/shop/success`);
    const back = await t.app.inject({ method: 'POST', url: '/sandbox/shop/success', payload: new URLSearchParams(paid.json().redirect.fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(back.statusCode).toBe(200);
    expect(back.body).toContain('The payment is received.');

    // Until the demo shop's receiver took the postback, not one pass (a pass under load may time out).
    await deliverUntil(t, async () => (await t.db.pool.query(
      `SELECT 1 FROM outbox_events e JOIN shops s ON s.merchant_id = e.merchant_id
        WHERE s.id = $1 AND e.kind = 'PAYMENT_POSTBACK' AND e.status = 'DELIVERED'`, [demo.shopId])).rowCount! > 0);
    const c = new CabinetClient(t);
    expect((await c.login(demo.email, demo.password)).statusCode).toBe(303);
    const log = await c.get('/cabinet/webhooks?kind=PAYMENT_POSTBACK');
    expect(statuses(log.body)).toEqual(['delivered']);
    expect(log.body).toContain(`data-testid="attempt-url">${address}/sandbox/shop/result<`);
  });
});
