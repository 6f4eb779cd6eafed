import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentSignature, payoutSignature, refundSignature } from '../../src/outbox/events.js';
import { buildCall } from '../../src/admin/cli.js';
import { newApiToken, sha256Hex, encrypt } from '../../src/lib/crypto.js';
import { newId } from '../../src/lib/ids.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { card } from '../payout/helpers.js';
import { startReceiver, type Receiver } from '../outbox/receiver.js';
import { deliverUntil } from '../outbox/deliver-until.js';
import { expectKeyed } from './support.js';

/**
 * Test mode (PROVIDERS.md "Test mode", issue 14 item 6), through HTTP: a merchant's test token
 * works on test objects only, always on the sandbox, with its own balances and postbacks
 * signed with the test token.
 */

let t: TestApp;
let rx: Receiver;
beforeAll(async () => {
  t = await setupTestApp();
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
  await t.close();
});

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const adminReq = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
  t.app.inject({ method, url: `/admin/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });
const get = (url: string, token: string) => t.app.inject({ method: 'GET', url, headers: bearer(token) });
const post = (url: string, token: string, payload: object) => t.app.inject({ method: 'POST', url, headers: bearer(token), payload });
const one = async (sql: string, v: unknown[]) => (await t.db.pool.query(sql, v)).rows[0];

/** A merchant made by the operator API: its live and test tokens and one enabled RUB shop. */
async function merchantWithTokens(extra: Record<string, unknown> = {}, shop: Record<string, unknown> = {}) {
  const m = await createMerchant(t, { merchant: { verified: true, grantRefunds: true, grantRegularPayouts: true, ...extra }, shop });
  const r = await adminReq('POST', `/merchants/${m.merchantId}/test-token`);
  expect(r.statusCode, r.body).toBe(200);
  return { ...m, live: m.token, test: r.json().api_token as string };
}

const rubBalance = async (token: string) => {
  const r = await get('/api/v1/merchant/balance', token);
  expect(r.statusCode, r.body).toBe(200);
  return r.json().balances.find((b: { currency: string }) => b.currency === 'RUB').balance_available as string;
};

async function billFor(token: string, shopId: string, amount = '100.00'): Promise<string> {
  const r = await post('/api/v1/bill/create', token, { amount, shop_id: shopId });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
}

async function paidBill(token: string, shopId: string, amount = '100.00') {
  const billId = await billFor(token, shopId, amount);
  const r = await payRequest(t, billId, cardForm());
  expect(r.statusCode, r.body).toBe(200);
  return { billId, paymentId: r.json().payment_id as string, status: r.json().status as string };
}

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86400_000).toISOString().slice(0, 10);
const window = `start_date=${day(-2)}&finish_date=${day(2)}`;

describe('admin: the live and the test token', () => {
  it('a new merchant is answered with both tokens; each one authenticates', async () => {
    const r = await adminReq('POST', '/merchants', { name: 'Both', email: 'both-tokens@example.test' });
    expect(r.statusCode, r.body).toBe(201);
    const { api_token: live, test_api_token: test } = r.json();
    expect(typeof test).toBe('string');
    expect(test).not.toBe(live);
    expect((await get('/api/v1/merchant/balance', live)).statusCode).toBe(200);
    expect((await get('/api/v1/merchant/balance', test)).statusCode).toBe(200);
  });

  it('POST test-token answers {api_token}: the old test token dies at once, the live token is unaffected; and the reverse', async () => {
    const m = await merchantWithTokens();
    const r = await adminReq('POST', `/merchants/${m.merchantId}/test-token`);
    expect(r.statusCode, r.body).toBe(200);
    expect(Object.keys(r.json()).sort()).toEqual(['api_token', 'success']);
    const test2 = r.json().api_token as string;
    expect((await get('/api/v1/merchant/balance', m.test)).statusCode).toBe(401);
    expect((await get('/api/v1/merchant/balance', test2)).statusCode).toBe(200);
    expect((await get('/api/v1/merchant/balance', m.live)).statusCode).toBe(200);

    const l = await adminReq('POST', `/merchants/${m.merchantId}/token`);
    expect(l.statusCode).toBe(200);
    const live2 = l.json().api_token as string;
    expect((await get('/api/v1/merchant/balance', m.live)).statusCode).toBe(401);
    expect((await get('/api/v1/merchant/balance', live2)).statusCode).toBe(200);
    expect((await get('/api/v1/merchant/balance', test2)).statusCode).toBe(200);
  });

  it('a merchant from before test mode gets its first test token with 201, then refreshes with 200', async () => {
    // A merchants row as the service wrote them before test mode: no test twin.
    const id = newId();
    const token = newApiToken();
    await t.db.pool.query(
      `INSERT INTO merchants (id, name, email, api_token_hash, api_token_enc) VALUES ($1, 'Old', 'old-merchant@example.test', $2, $3)`,
      [id, sha256Hex(token), encrypt(t.config.tokenEncryptionKey, token)],
    );
    expect((await adminReq('GET', `/merchants/${id}`)).json().test_mode).toBeNull();
    const first = await adminReq('POST', `/merchants/${id}/test-token`);
    expect(first.statusCode, first.body).toBe(201);
    expect((await get('/api/v1/merchant/balance', first.json().api_token)).statusCode).toBe(200);
    const again = await adminReq('POST', `/merchants/${id}/test-token`);
    expect(again.statusCode).toBe(200);
    expect((await get('/api/v1/merchant/balance', first.json().api_token)).statusCode).toBe(401);
    const shown = (await adminReq('GET', `/merchants/${id}`)).json();
    expect(shown.test_mode).toMatchObject({ api_token_issued_at: expect.any(String) });
    expect(shown.test_mode.balances.map((b: { currency: string }) => b.currency).sort()).toEqual(['EUR', 'RUB', 'USD']);
  });

  it('an unknown merchant is 404 and the test twin is no merchant of its own: not listed, not found, not counted', async () => {
    expect((await adminReq('POST', '/merchants/nope-nope/test-token')).statusCode).toBe(404);
    const m = await merchantWithTokens();
    const twin = await one('SELECT id, email FROM merchants WHERE live_merchant_id = $1', [m.merchantId]);
    expect(twin).toBeTruthy();
    expect((await adminReq('GET', `/merchants/${twin.id}`)).statusCode).toBe(404);
    expect((await adminReq('POST', `/merchants/${twin.id}/test-token`)).statusCode).toBe(404);
    expect((await adminReq('POST', `/merchants/${twin.id}/token`)).statusCode).toBe(404);
    expect((await adminReq('PATCH', `/merchants/${twin.id}`, { status: 'banned' })).statusCode).toBe(404);
    const list = (await adminReq('GET', '/merchants?limit=1000')).json().data as { id: string }[];
    expect(list.map((x) => x.id)).toContain(m.merchantId);
    expect(list.map((x) => x.id)).not.toContain(twin.id);
    expect((await adminReq('GET', `/merchants?email=${encodeURIComponent(twin.email)}`)).json().data).toEqual([]);
  });

  it('the CLI verb merchants:test-token calls the route', async () => {
    const m = await merchantWithTokens();
    const c = buildCall(['merchants:test-token', m.merchantId]);
    expect(c).toEqual({ method: 'POST', path: `/merchants/${m.merchantId}/test-token` });
    const r = await adminReq('POST', (c as { path: string }).path);
    expect(r.statusCode).toBe(200);
    expect((await get('/api/v1/merchant/balance', r.json().api_token)).statusCode).toBe(200);
  });
});

describe('test objects and balances are apart from live ones', () => {
  it('a test-token bill paid on the page (sandbox) credits only the test balance and is invisible to the live token', async () => {
    const m = await merchantWithTokens();
    const p = await paidBill(m.test, m.shopId, '100.00');
    expect(p.status).toBe('SUCCESS');
    expect(await one('SELECT connector FROM payments WHERE id = $1', [p.paymentId])).toEqual({ connector: 'sandbox' });
    expect(await rubBalance(m.test)).toBe('100.00000000');
    expect(await rubBalance(m.live)).toBe('0.00000000');

    // The live token does not see it: unknown as the spec answers for unknown objects, searches empty.
    expectKeyed(await get(`/api/v1/bill/status?id=${p.billId}`, m.live), 422, 'bill_not_found');
    expectKeyed(await get(`/api/v1/payment/status?id=${p.paymentId}`, m.live), 422, 'payment_not_found');
    expectKeyed(await get(`/api/v1/bill/payments?id=${p.billId}`, m.live), 403, 'bill_not_found');
    expect((await get(`/api/v1/bill/search?${window}`, m.live)).json().data).toEqual([]);
    expect((await get(`/api/v1/payment/search?${window}`, m.live)).json().data).toEqual([]);
    // The test token does.
    expect((await get(`/api/v1/bill/status?id=${p.billId}`, m.test)).json().status).toBe('SUCCESS');
    expect((await get(`/api/v1/bill/search?${window}`, m.test)).json().data.map((b: { id: string }) => b.id)).toEqual([p.billId]);
  });

  it('a live bill is invisible to the test token, and credits only the live balance', async () => {
    const m = await merchantWithTokens();
    const p = await paidBill(m.live, m.shopId, '70.00');
    expect(await rubBalance(m.live)).toBe('70.00000000');
    expect(await rubBalance(m.test)).toBe('0.00000000');
    expectKeyed(await get(`/api/v1/bill/status?id=${p.billId}`, m.test), 422, 'bill_not_found');
    expectKeyed(await get(`/api/v1/payment/status?id=${p.paymentId}`, m.test), 422, 'payment_not_found');
    expect((await get(`/api/v1/bill/search?${window}`, m.test)).json().data).toEqual([]);
    expect((await get(`/api/v1/payment/search?${window}`, m.test)).json().data).toEqual([]);
    // Toggling the live bill with the test token: unknown, and nothing changes.
    expectKeyed(await post('/api/v1/bill/toggle_activity', m.test, { id: p.billId, active: 0 }), 422, 'bill_not_found');
  });

  it("the test token bills only for its merchant's own shops", async () => {
    const m = await merchantWithTokens();
    const other = await createMerchant(t);
    expectKeyed(await post('/api/v1/bill/create', m.test, { amount: '10.00', shop_id: other.shopId }), 403, 'access_denied');
    expectKeyed(await post('/api/v1/bill/create', m.test, { amount: '10.00', shop_id: 'no-such-shop' }), 403, 'shop_not_found');
  });

  it('the live merchant settings hold for its test token: a ban, an IP allow-list', async () => {
    const m = await merchantWithTokens();
    expect((await adminReq('PATCH', `/merchants/${m.merchantId}`, { api_ip_allowlist: ['203.0.113.7'] })).statusCode).toBe(200);
    expectKeyed(await get('/api/v1/merchant/balance', m.test), 403, 'ip_access_denied');
    expect((await adminReq('PATCH', `/merchants/${m.merchantId}`, { api_ip_allowlist: null, status: 'banned' })).statusCode).toBe(200);
    expectKeyed(await post('/api/v1/bill/create', m.test, { amount: '10.00', shop_id: m.shopId }), 403, 'merchant_banned');
    expect((await adminReq('PATCH', `/merchants/${m.merchantId}`, { status: 'active' })).statusCode).toBe(200);
    expect((await post('/api/v1/bill/create', m.test, { amount: '10.00', shop_id: m.shopId })).statusCode).toBe(200);
  });
});

describe('the test token never reaches a live connector', () => {
  it('the database keeps a twin on the sandbox, never a twin of a twin, and its settings equal to the live ones', async () => {
    const m = await merchantWithTokens();
    const twin = await one('SELECT id FROM merchants WHERE live_merchant_id = $1', [m.merchantId]);
    await expect(t.db.pool.query(`UPDATE merchants SET routing = '{"payment_card":["refuser"]}' WHERE id = $1`, [twin.id])).rejects.toThrow(/merchants_test_twin_sandbox_only/);
    await expect(t.db.pool.query(
      `INSERT INTO merchants (id, live_merchant_id, name, email, api_token_hash, api_token_enc) VALUES ($1, $2, 'x', 'x@x.invalid', $3, 'x')`,
      [newId(), twin.id, sha256Hex(newApiToken())],
    )).rejects.toThrow(/live merchant/);
    const patch = { verified: false, subscription: 'inactive', grants: { refunds: false }, payout_daily_limit: '1234.5', fees: { payment_card_percent: '3.3' } };
    expect((await adminReq('PATCH', `/merchants/${m.merchantId}`, patch)).statusCode).toBe(200);
    const cols = 'name, status, verified, subscription, grant_refunds, grant_regular_payouts, payout_daily_limit::text, payment_card_percent::text, api_ip_allowlist';
    const [a, b] = await Promise.all([one(`SELECT ${cols} FROM merchants WHERE id = $1`, [m.merchantId]), one(`SELECT ${cols} FROM merchants WHERE id = $1`, [twin.id])]);
    expect(b).toEqual(a);
    expect(b).toMatchObject({ verified: false, subscription: 'INACTIVE', grant_refunds: false, payout_daily_limit: '1234.50000000' });
    expectKeyed(await post('/api/v1/bill/create', m.test, { amount: '10.00', shop_id: m.shopId }), 403, 'merchant_subscription_inactive');
    // A change of nothing the twin copies (the live token) leaves the twin's row alone.
    const before = await one('SELECT updated_at FROM merchants WHERE id = $1', [twin.id]);
    expect((await adminReq('POST', `/merchants/${m.merchantId}/token`)).statusCode).toBe(200);
    expect(await one('SELECT updated_at FROM merchants WHERE id = $1', [twin.id])).toEqual(before);
  });

  it('with the live routing on a refusing connector, test payments, refunds and payouts still go through the sandbox', async () => {
    const put = await adminReq('PUT', '/connectors/refuser', { kind: 'sandbox', mode: 'test', settings: { refuse: true } });
    expect([200, 201]).toContain(put.statusCode);
    const m = await merchantWithTokens();
    const routing = { payment_card: ['refuser'], payment_sbp: ['refuser'], payout_card: ['refuser'], payout_sbp: ['refuser'] };
    const routed = await adminReq('PATCH', `/merchants/${m.merchantId}`, { routing });
    expect(routed.statusCode, routed.body).toBe(200);

    // Live: the refusing connector takes it (and refuses).
    const live = await paidBill(m.live, m.shopId, '50.00');
    expect(await one('SELECT status::text, connector FROM payments WHERE id = $1', [live.paymentId])).toEqual({ status: 'FAIL', connector: 'refuser' });

    // Test: the sandbox, whatever the live routing says.
    const test = await paidBill(m.test, m.shopId, '300.00');
    expect(await one('SELECT status::text, connector FROM payments WHERE id = $1', [test.paymentId])).toEqual({ status: 'SUCCESS', connector: 'sandbox' });

    const refund = await post('/api/v1/refund/partial/create', m.test, { payment_id: test.paymentId, amount: '40.00' });
    expect(refund.statusCode, refund.body).toBe(200);
    await t.db.pool.query(`UPDATE refunds SET process_after = now() - interval '1 second' WHERE payment_id = $1`, [test.paymentId]);
    await t.app.services.refunds.processDue();
    expect(await one('SELECT status::text, connector FROM refunds WHERE payment_id = $1', [test.paymentId])).toEqual({ status: 'SUCCESS', connector: 'sandbox' });

    const payout = await post('/api/v1/payout/regular/create', m.test, card('100'));
    expect(payout.statusCode, payout.body).toBe(200);
    const payoutId = payout.json().data[0].id as string;
    await t.db.pool.query(`UPDATE payouts SET process_after = now() - interval '1 second' WHERE id = $1`, [payoutId]);
    await t.app.services.payouts.processDue();
    expect(await one('SELECT status::text, connector FROM payouts WHERE id = $1', [payoutId])).toEqual({ status: 'SUCCESS', connector: 'sandbox' });

    // The live balance never moved; the test payout and refund came out of the test balance.
    expect(await rubBalance(m.live)).toBe('0.00000000');
    expect((await get(`/api/v1/payout/search?${window}`, m.live)).json().data).toEqual([]);
    expectKeyed(await get(`/api/v1/payout/status?id=${payoutId}`, m.live), 422, 'payout_not_found');
    expect((await get(`/api/v1/refund/search?${window}`, m.live)).json().data).toEqual([]);
    expect((await get(`/api/v1/refund/search?${window}`, m.test)).json().data).toHaveLength(1);
    // Refunding the test payment with the live token: an unknown payment, nothing created.
    expect((await post('/api/v1/refund/partial/create', m.live, { payment_id: test.paymentId, amount: '1.00' })).statusCode).toBe(422);
    expect(await one('SELECT count(*)::int AS n FROM refunds WHERE payment_id = $1', [test.paymentId])).toEqual({ n: 1 });
  });
});

describe('postbacks of test objects', () => {
  it('a test payment postback goes to the shop Result URL signed with the test token', async () => {
    const m = await merchantWithTokens({}, { resultUrl: `${rx.url}/result` });
    rx.received.length = 0;
    await t.db.pool.query(`UPDATE outbox_events SET status = 'DEAD' WHERE status = 'PENDING'`);
    const p = await paidBill(m.test, m.shopId, '25.00');
    await deliverUntil(t, () => rx.received.length > 0);
    expect(rx.received).toHaveLength(1);
    const f = rx.received[0]!.fields;
    expect(rx.received[0]!.path).toBe('/result');
    expect(f.TrsId).toBe(p.paymentId);
    expect(f.SignatureValue).toBe(paymentSignature({ OutSum: f.OutSum!, InvId: f.InvId! }, m.test));
    expect(f.SignatureValue).not.toBe(paymentSignature({ OutSum: f.OutSum!, InvId: f.InvId! }, m.live));
  });

  it('a test refund postback and a test payout webhook (the live merchant URLs) are signed with the test token', async () => {
    const m = await merchantWithTokens({}, { resultUrl: `${rx.url}/result` });
    expect((await adminReq('PUT', `/merchants/${m.merchantId}/payout-webhook`, { url: `${rx.url}/payouts` })).statusCode).toBe(200);
    const p = await paidBill(m.test, m.shopId, '500.00');
    expect((await post('/api/v1/refund/partial/create', m.test, { payment_id: p.paymentId, amount: '10.00' })).statusCode).toBe(200);
    const payoutId = (await post('/api/v1/payout/regular/create', m.test, card('100'))).json().data[0].id as string;

    rx.received.length = 0;
    const refundPostback = () => rx.received.find((r) => r.path === '/result' && r.fields.PaymentId === p.paymentId && r.fields.Id);
    const payoutWebhook = () => rx.received.find((r) => r.path === '/payouts' && r.fields.TrsId === payoutId);
    // Until both arrived, not one pass of each worker: under load a sandbox call can time out and
    // leave the refund or payout for the worker's next pass (issue 28 item 8).
    await deliverUntil(t, () => !!refundPostback() && !!payoutWebhook(), {
      before: async () => {
        await t.db.pool.query(`UPDATE refunds SET process_after = now(), next_check_at = NULL WHERE payment_id = $1 AND status IN ('NEW', 'PROCESS')`, [p.paymentId]);
        await t.app.services.refunds.processDue();
        await t.db.pool.query(`UPDATE payouts SET process_after = now(), next_check_at = NULL WHERE id = $1 AND status = 'PROCESS'`, [payoutId]);
        await t.app.services.payouts.processDue();
      },
    });
    const refund = refundPostback();
    expect(refund, JSON.stringify(rx.received.map((r) => r.path))).toBeTruthy();
    expect(refund!.fields.SignatureValue).toBe(refundSignature(refund!.fields as never, m.test));
    const payout = payoutWebhook();
    expect(payout).toBeTruthy();
    expect(payout!.fields.SignatureValue).toBe(payoutSignature(payout!.fields as never, m.test));
    expect(payout!.fields.SignatureValue).not.toBe(payoutSignature(payout!.fields as never, m.live));
  });
});
