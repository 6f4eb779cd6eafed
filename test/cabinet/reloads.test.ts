import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { payNewBill } from '../factories/payment.js';
import { CabinetClient, cabinetMerchant, signedIn } from './helpers.js';

/**
 * Issue 16 item 1, cabinet side: every form posts, then redirects (303) to a page that can be
 * reloaded; a form token works once. Each test submits, reloads the page it landed on, sends
 * the same POST again (Back and resubmit, a double click) and checks nothing happened twice.
 */
let t: TestApp;
let receiver: Server;
let receiverUrl: string;
let received = 0;

beforeAll(async () => {
  t = await setupTestApp();
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => { received++; res.writeHead(200, { 'content-type': 'text/plain' }).end('OK'); });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/result`;
});
afterAll(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
  await t.close();
});

/** Submits a form of `from` once, then reloads where it went twice and re-sends the same form. */
async function submitReloadResend(c: CabinetClient, from: string, url: string, form: Record<string, string>) {
  const token = await c.csrf(from);
  const first = await c.post(url, { _csrf: token, ...form }, { referer: `http://localhost${from}` });
  expect(first.statusCode, 'a POST answers 303').toBe(303);
  const landing = first.headers.location as string;
  const reload1 = await c.get(landing);
  const reload2 = await c.get(landing);
  expect(reload1.statusCode).toBe(200);
  expect(reload2.statusCode).toBe(200);
  const again = await c.post(url, { _csrf: token, ...form }, { referer: `http://localhost${from}` });
  return { first, reload1, reload2, again };
}

function expectRefusedReplay(again: LightMyRequestResponse, from: string) {
  expect(again.statusCode).toBe(303);
  expect(again.headers.location).toBe(`${from}?ok=common.already_sent`);
}

const tokenHash = async (id: string) => (await t.db.prisma.merchant.findUniqueOrThrow({ where: { id } })).apiTokenHash;

describe('cabinet forms are post/redirect/get with single-use tokens', () => {
  test('Refresh API token: the token is shown once after the redirect; reloads and a resent form issue nothing', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const { first, reload1, reload2, again } = await submitReloadResend(c, '/cabinet/api/refresh', '/cabinet/api/refresh', {});
    expect(first.headers.location).toMatch(/^\/cabinet\/api\?flash=[A-Za-z0-9_-]+$/);
    const token = /id="new-token" readonly value="([^"]+)"/.exec(reload1.body)?.[1];
    expect(token).toBeTruthy();
    expect(reload2.body).not.toContain('id="new-token"');
    expectRefusedReplay(again, '/cabinet/api/refresh');
    const shownAgain = await c.get(again.headers.location as string);
    expect(shownAgain.body).toContain('This form was already sent; nothing was done again.');
    // The token shown is the one that works: nothing re-issued it.
    const ok = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${token}` } });
    expect(ok.statusCode).toBe(200);
    const trail = await t.db.pool.query("SELECT count(*)::int AS n FROM audit_log WHERE object_id = $1 AND action = 'merchant.token.refresh'", [m.merchantId]);
    expect(trail.rows[0].n).toBe(1);
  });

  test("another session cannot take a token flash, and a flash's id is useless once shown", async () => {
    const m = await cabinetMerchant(t);
    const a = await signedIn(t, m);
    const b = await signedIn(t, m);
    const r = await a.submit('/cabinet/api/refresh', '/cabinet/api/refresh', {});
    const loc = r.headers.location as string;
    expect((await b.get(loc)).body).not.toContain('id="new-token"');
    const hash = await tokenHash(m.merchantId);
    expect((await a.get(loc)).body).toContain('id="new-token"');
    expect((await a.get(loc)).body).not.toContain('id="new-token"');
    expect(await tokenHash(m.merchantId)).toBe(hash);
  });

  test('a partial refund: reload and resend make no second refund', async () => {
    const m = await cabinetMerchant(t, { merchant: { grantRefunds: true } });
    const c = await signedIn(t, m);
    const { paymentId } = await payNewBill(t, m, { amount: '300.00' });
    const from = `/cabinet/payments/${paymentId}`;
    const { reload1, again } = await submitReloadResend(c, from, `${from}/refund`, { mode: 'partial', amount: '100' });
    expect(reload1.body).toContain('Refund created.');
    expectRefusedReplay(again, from);
    const refunds = await t.db.prisma.refund.findMany({ where: { paymentId } });
    expect(refunds.map((r) => r.amount.toFixed(2))).toEqual(['100.00']);
  });

  test('a payout: reload and resend make no second payout', async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true } });
    const c = await signedIn(t, m);
    await payNewBill(t, m, { amount: '1000.00' });
    const acc = await t.app.services.payoutAccounts.create(m.merchantId, { type: 'card', identifier: '4111111111111111', cardHolder: 'IVAN IVANOV' });
    const { reload1, again } = await submitReloadResend(c, '/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '100' });
    expect(reload1.body).toContain('Payout created.');
    expectRefusedReplay(again, '/cabinet/payouts/new');
    expect(await t.db.prisma.payout.count({ where: { merchantId: m.merchantId } })).toBe(1);
  });

  test('shop settings: reload and resend save once (one audit entry)', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const from = `/cabinet/shops/${m.shopId}`;
    const { reload1, again } = await submitReloadResend(c, from, from, { default_currency: 'RUB', result_url: 'https://shop.example/r', success_url: '', fail_url: '' });
    expect(reload1.body).toContain('Saved.');
    expectRefusedReplay(again, from);
    const trail = await t.db.pool.query("SELECT count(*)::int AS n FROM audit_log WHERE object_id = $1 AND action = 'shop.update'", [m.shopId]);
    expect(trail.rows[0].n).toBe(1);
  });

  test("the test postback: its answer survives reloads, which send nothing; a resent form sends nothing", async () => {
    const m = await cabinetMerchant(t, { shop: { resultUrl: receiverUrl } });
    const c = await signedIn(t, m);
    const n = received;
    const from = `/cabinet/shops/${m.shopId}`;
    const { first, reload1, reload2, again } = await submitReloadResend(c, from, `${from}/test-postback`, {});
    expect(first.headers.location).toMatch(new RegExp(`^${from}\\?test=\\d+$`));
    for (const page of [reload1, reload2]) {
      expect(page.body).toContain('data-testid="test-result"');
      expect(page.body).toContain('HTTP 200');
    }
    expectRefusedReplay(again, from);
    expect(received).toBe(n + 1);
    expect(await t.db.prisma.outboxEvent.count({ where: { merchantId: m.merchantId, kind: 'TEST_POSTBACK' } })).toBe(1);
    // Another merchant's test event is not shown through ?test=.
    const other = await cabinetMerchant(t);
    const oc = await signedIn(t, other);
    const peek = await oc.get(`/cabinet/shops/${other.shopId}?test=${/test=(\d+)/.exec(first.headers.location as string)![1]}`);
    expect(peek.statusCode).toBe(200);
    expect(peek.body).not.toContain('data-testid="test-result"');
  });

  test('a new bill: a resent form creates no second bill', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const { again } = await submitReloadResend(c, '/cabinet/bills/new', '/cabinet/bills', { amount: '10', shop_id: m.shopId });
    expectRefusedReplay(again, '/cabinet/bills/new');
    expect(await t.db.prisma.bill.count({ where: { merchantId: m.merchantId } })).toBe(1);
  });

  test('a form answered with errors can be corrected and sent again with the same token; then it is spent', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const token = await c.csrf('/cabinet/bills/new');
    const bad = await c.post('/cabinet/bills', { _csrf: token, amount: 'abc', shop_id: m.shopId });
    expect(bad.statusCode).toBe(422);
    const good = await c.post('/cabinet/bills', { _csrf: token, amount: '12.50', shop_id: m.shopId });
    expect(good.statusCode).toBe(303);
    expect(good.headers.location).toMatch(/ok=bills\.created/);
    const twice = await c.post('/cabinet/bills', { _csrf: token, amount: '12.50', shop_id: m.shopId });
    expect(twice.headers.location).toBe('/cabinet?ok=common.already_sent');
    expect(await t.db.prisma.bill.count({ where: { merchantId: m.merchantId } })).toBe(1);
  });

  test("a forged or another session's form token is refused with 403", async () => {
    const m = await cabinetMerchant(t);
    const a = await signedIn(t, m);
    const b = await signedIn(t, m);
    const tokenOfB = await b.csrf('/cabinet/bills/new');
    for (const tok of [tokenOfB, 'x.y', '', `${tokenOfB.split('.')[0]}.forged`]) {
      const r = await a.post('/cabinet/bills', { _csrf: tok, amount: '10', shop_id: m.shopId });
      expect(r.statusCode, tok).toBe(403);
    }
    expect(await t.db.prisma.bill.count({ where: { merchantId: m.merchantId } })).toBe(0);
  });
});
