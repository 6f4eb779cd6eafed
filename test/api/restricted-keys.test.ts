import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { admin } from '../admin/helpers.js';
import { card, fund, payoutMerchant } from '../payout/helpers.js';
import { startReceiver, type Receiver } from '../outbox/receiver.js';
import { deliverUntil } from '../outbox/deliver-until.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { ENDPOINT_SCOPES } from '../../src/http/api-scopes.js';
import { count, expectKeyed } from './support.js';

/**
 * Restricted API keys (issue 27, item 3): a key acts as its live merchant only within its
 * scopes (403 api:error.insufficient_scope elsewhere), under the same allow-list, ban,
 * subscription and grants as the live token; a revoked key is a 401 at once; postbacks stay
 * signed with the live token.
 */
let t: TestApp;
let rx: Receiver;
beforeAll(async () => { t = await setupTestApp(); rx = await startReceiver(); });
afterAll(async () => { await rx?.close(); await t?.close(); });

/** A key of `m` with `scopes`, through the operator API; its bearer header. */
async function key(m: MerchantFixture, scopes: string[]): Promise<{ id: string; token: string; auth: { authorization: string } }> {
  const r = await admin(t, 'POST', `/merchants/${m.merchantId}/keys`, { name: `key ${scopes.join(' ')}`, scopes });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.id, token: r.body.api_token, auth: { authorization: `Bearer ${r.body.api_token}` } };
}

const api = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: Record<string, unknown>, remoteAddress?: string) =>
  t.app.inject({ method, url, headers, ...(payload ? { payload } : {}), ...(remoteAddress ? { remoteAddress } : {}) });

describe('a key acts only within its scopes', () => {
  it('a bills:read key reads bill/status, bill/search and bill/payments; bill/create, toggle and payout/regular/create are 403 insufficient_scope and change nothing', async () => {
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '5000.00');
    const k = await key(m, ['bills:read']);
    const bill = await api('POST', '/api/v1/bill/create', m.auth, { amount: '100.00', shop_id: m.shopId });
    const billId = bill.json().bill_id as string;

    const status = await api('GET', `/api/v1/bill/status?id=${billId}`, k.auth);
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json()).toMatchObject({ id: billId, success: true });
    expect((await api('GET', '/api/v1/bill/search', k.auth)).statusCode).toBe(200);
    expect((await api('GET', `/api/v1/bill/payments?id=${billId}`, k.auth)).statusCode).toBe(200);

    const bills = await count(t, 'bills');
    expectKeyed(await api('POST', '/api/v1/bill/create', k.auth, { amount: '100.00', shop_id: m.shopId }), 403, 'insufficient_scope');
    // Also with an Idempotency-Key (that path authenticates before the handler) and with bad input (no 422 leak first).
    expectKeyed(await api('POST', '/api/v1/bill/create', { ...k.auth, 'idempotency-key': 'k-1' }, { amount: '100.00', shop_id: m.shopId }), 403, 'insufficient_scope');
    expectKeyed(await api('POST', '/api/v1/bill/create', k.auth, { amount: 'x' }), 403, 'insufficient_scope');
    expectKeyed(await api('POST', '/api/v1/bill/toggle_activity', k.auth, { id: billId, active: 0 }), 403, 'insufficient_scope');
    expect(await count(t, 'bills')).toBe(bills);
    expect((await t.db.pool.query('SELECT active FROM bills WHERE id = $1', [billId])).rows[0].active).toBe(true);

    const payouts = await count(t, 'payouts');
    expectKeyed(await api('POST', '/api/v1/payout/regular/create', k.auth, card('100.00')), 403, 'insufficient_scope');
    expect(await count(t, 'payouts')).toBe(payouts);
    for (const url of ['/api/v1/payment/search', '/api/v1/payout/search', '/api/v1/merchant/balance', '/api/v1/refund/search']) {
      expectKeyed(await api('GET', url, k.auth), 403, 'insufficient_scope');
    }
    // The dictionary takes any valid key.
    expect((await api('GET', '/api/v1/payout/dictionaries/sbp_banks', k.auth)).statusCode).toBe(200);
  });

  it('a payouts:write key pays out with the merchant grant, reads its payouts; without the grant it is 403 "This action is unauthorized."', async () => {
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '5000.00');
    const k = await key(m, ['payouts:write']);
    const r = await api('POST', '/api/v1/payout/regular/create', k.auth, card('100.00', { order_id: 'key-po-1' }));
    expect(r.statusCode, r.body).toBe(200);
    const payoutId = r.json().data[0].id as string;
    expect((await t.db.pool.query('SELECT merchant_id FROM payouts WHERE id = $1', [payoutId])).rows[0].merchant_id).toBe(m.merchantId);
    expect((await api('GET', `/api/v1/payout/status?id=${payoutId}`, k.auth)).statusCode).toBe(200);
    expectKeyed(await api('GET', '/api/v1/merchant/balance', k.auth), 403, 'insufficient_scope');

    const noGrant = await payoutMerchant(t, { grantRegularPayouts: false });
    await fund(t, noGrant.merchantId, '5000.00');
    const k2 = await key(noGrant, ['payouts:write']);
    const refused = await api('POST', '/api/v1/payout/regular/create', k2.auth, card('100.00'));
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ success: false, message: 'This action is unauthorized.' });
  });

  it('a refunds:write key still needs the merchant refund grant; with it, it refunds and reads the refund', async () => {
    const m = await createMerchant(t, { merchant: { verified: true } });
    const { paymentId } = await createPaidPayment(t, m, { amount: '300.00' });
    const k = await key(m, ['refunds:write']);
    const refused = await api('POST', '/api/v1/refund/full/create', k.auth, { payment_id: paymentId });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe('This action is unauthorized.');
    await admin(t, 'PATCH', `/merchants/${m.merchantId}`, { grants: { refunds: true } });
    const ok = await api('POST', '/api/v1/refund/full/create', k.auth, { payment_id: paymentId });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await api('GET', `/api/v1/refund/status?payment_id=${paymentId}`, k.auth)).statusCode).toBe(200);
    expectKeyed(await api('GET', `/api/v1/payment/status?id=${paymentId}`, k.auth), 403, 'insufficient_scope');
    // The audit trail names the key that moved the money, not the merchant's live token.
    const trail = (await admin(t, 'GET', `/audit?action=refund.create&object_id=${ok.json().id}`)).body.data;
    expect(trail).toEqual([expect.objectContaining({ actor_id: `api-key:${k.id}`, actor: expect.stringMatching(/^api-key ".+" of /) })]);
  });

  it("a key sees only its own merchant's objects", async () => {
    const a = await createMerchant(t);
    const b = await createMerchant(t);
    const billId = (await api('POST', '/api/v1/bill/create', a.auth, { amount: '100.00', shop_id: a.shopId })).json().bill_id;
    const kb = await key(b, ['bills:read', 'bills:write']);
    expectKeyed(await api('GET', `/api/v1/bill/status?id=${billId}`, kb.auth), 422, 'bill_not_found');
    expectKeyed(await api('POST', '/api/v1/bill/create', kb.auth, { amount: '100.00', shop_id: a.shopId }), 403, 'access_denied');
    const own = await api('POST', '/api/v1/bill/create', kb.auth, { amount: '100.00', shop_id: b.shopId });
    expect(own.statusCode, own.body).toBe(200);
    expect((await t.db.pool.query('SELECT merchant_id FROM bills WHERE id = $1', [own.json().bill_id])).rows[0].merchant_id).toBe(b.merchantId);
  });
});

describe('a key obeys what the live token obeys', () => {
  it('a revoked key is 401 Unauthenticated at once; the live token and other keys keep working', async () => {
    const m = await createMerchant(t);
    const k = await key(m, ['balance:read']);
    const other = await key(m, ['balance:read']);
    expect((await api('GET', '/api/v1/merchant/balance', k.auth)).statusCode).toBe(200);
    expect((await admin(t, 'DELETE', `/merchants/${m.merchantId}/keys/${k.id}`)).status).toBe(200);
    const r = await api('GET', '/api/v1/merchant/balance', k.auth);
    expect(r.statusCode).toBe(401);
    expect(r.json()).toEqual({ success: false, message: 'Unauthenticated.' });
    expect((await api('GET', '/api/v1/merchant/balance', other.auth)).statusCode).toBe(200);
    expect((await api('GET', '/api/v1/merchant/balance', m.auth)).statusCode).toBe(200);
    // A forged key-shaped token is a 401 too.
    expect((await api('GET', '/api/v1/merchant/balance', { authorization: `Bearer rk_live_${'A'.repeat(64)}` })).statusCode).toBe(401);
  });

  it('a key from an address off the allow-list gets 403 api:error.ip_access_denied (before its scopes are looked at); from a listed one it works', async () => {
    const m = await createMerchant(t);
    const k = await key(m, ['bills:read', 'bills:write']);
    await admin(t, 'PATCH', `/merchants/${m.merchantId}`, { api_ip_allowlist: ['203.0.113.7'] });
    expectKeyed(await api('GET', '/api/v1/bill/search', k.auth, undefined, '198.51.100.1'), 403, 'ip_access_denied');
    expectKeyed(await api('GET', '/api/v1/merchant/balance', k.auth, undefined, '198.51.100.1'), 403, 'ip_access_denied');
    const bills = await count(t, 'bills');
    expectKeyed(await api('POST', '/api/v1/bill/create', k.auth, { amount: '100.00', shop_id: m.shopId }, '198.51.100.1'), 403, 'ip_access_denied');
    expect(await count(t, 'bills')).toBe(bills);
    expect((await api('GET', '/api/v1/bill/search', k.auth, undefined, '203.0.113.7')).statusCode).toBe(200);
    const created = await api('POST', '/api/v1/bill/create', k.auth, { amount: '100.00', shop_id: m.shopId }, '203.0.113.7');
    expect(created.statusCode, created.body).toBe(200);
  });

  it("a banned merchant's key is refused as its live token is (merchant_banned); an inactive subscription refuses bill/create", async () => {
    const m = await createMerchant(t);
    const k = await key(m, ['bills:read', 'bills:write']);
    await admin(t, 'PATCH', `/merchants/${m.merchantId}`, { subscription: 'inactive' });
    expectKeyed(await api('POST', '/api/v1/bill/create', k.auth, { amount: '100.00', shop_id: m.shopId }), 403, 'merchant_subscription_inactive');
    await admin(t, 'PATCH', `/merchants/${m.merchantId}`, { status: 'banned', subscription: 'active' });
    expectKeyed(await api('GET', '/api/v1/bill/search', k.auth), 403, 'merchant_banned');
    expectKeyed(await api('POST', '/api/v1/bill/create', k.auth, { amount: '100.00', shop_id: m.shopId }), 403, 'merchant_banned');
  });

  it('rate limits count each key on its own', async () => {
    const limited = await setupTestApp({ RATE_LIMIT_PER_TOKEN: '2', RATE_LIMIT_PER_IP: '0' });
    try {
      const m = await createMerchant(limited);
      const mk = async () => (await limited.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/keys`, headers: { authorization: `Bearer ${limited.config.adminApiToken}` }, payload: { name: 'k', scopes: ['balance:read'] } })).json().api_token as string;
      const [a, b] = [await mk(), await mk()];
      const call = (token: string) => limited.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${token}` } });
      expect((await call(a!)).statusCode).toBe(200);
      expect((await call(a!)).statusCode).toBe(200);
      expect((await call(a!)).statusCode).toBe(429);
      expect((await call(b!)).statusCode).toBe(200);
      expect((await call(m.token)).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('postbacks stay signed with the live token', () => {
  it('a bill created with a key is paid; its postback verifies with the live token, never with the key', async () => {
    const m = await createMerchant(t, { shop: { resultUrl: `${rx.url}/result` } });
    const k = await key(m, ['bills:write']);
    const created = await api('POST', '/api/v1/bill/create', k.auth, { amount: '150.00', shop_id: m.shopId, order_id: 'key-order-1' });
    expect(created.statusCode, created.body).toBe(200);
    const paid = await payRequest(t, created.json().bill_id, cardForm('4242 4242 4242 4242'));
    expect(paid.statusCode, paid.body).toBe(200);
    rx.received.length = 0;
    await deliverUntil(t, () => rx.received.some((x) => x.fields.InvId === 'key-order-1'));
    const got = rx.received.find((x) => x.fields.InvId === 'key-order-1');
    expect(got, 'the postback arrived').toBeDefined();
    const f = got!.fields;
    expect(f.SignatureValue).toBe(md5Upper(`${f.OutSum}:${f.InvId}:${m.token}`));
    expect(f.SignatureValue).not.toBe(md5Upper(`${f.OutSum}:${f.InvId}:${k.token}`));
  });
});

describe('the endpoint-scope table', () => {
  it('names every merchant API route the OpenAPI document lists, and only those', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, unknown> };
    const apiPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/')).sort();
    expect(apiPaths.length).toBeGreaterThan(15);
    expect(Object.keys(ENDPOINT_SCOPES).sort()).toEqual(apiPaths);
  });
});
