import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { cardForm, createBill, payRequest } from '../factories/payment.js';
import type { MerchantFixture } from '../factories/merchant.js';

/**
 * The operator API answers through its documented schemas (docs/adr/0072): Fastify serializes
 * each answer with the route's `response` schema, which drops a field the schema does not list
 * and coerces a value of another type. This walks every operator route with real calls and
 * checks, for each answer, that what the client got equals what the handler returned (nothing
 * dropped, nothing coerced), and that what the handler returned is exactly what /admin/docs
 * documents for that status (every field listed, no field unlisted, types and required fields).
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const ajv = new Ajv({ strict: false, allErrors: true });

let t: TestApp;
let doc: Json;
let shopServer: Server;
let shopUrl = '';
/** What the last operator handler returned (before serialization), as JSON would carry it. */
let lastRaw: { route: string; method: string; payload: unknown } | null = null;
/** Documented (operation, status) pairs each answered by a real call. */
const answered = new Set<string>();

beforeAll(async () => {
  // A shop's Result URL that answers OK, for postbacks and the test postback.
  shopServer = createServer((req, res) => { req.resume(); req.on('end', () => res.end('OK')); });
  await new Promise<void>((r) => shopServer.listen(0, '127.0.0.1', r));
  shopUrl = `http://127.0.0.1:${(shopServer.address() as AddressInfo).port}/result`;
  t = await setupTestApp({}, {
    beforeReady: (app) => app.addHook('preSerialization', async (req, _reply, payload) => {
      if (req.url.startsWith('/admin/v1/')) lastRaw = { route: req.routeOptions.url ?? '', method: req.method, payload: JSON.parse(JSON.stringify(payload)) };
      return payload;
    }),
  });
  doc = (await t.app.inject({ method: 'GET', url: '/admin/docs/json' })).json();
});
afterAll(async () => {
  await t?.close();
  await new Promise<void>((r) => shopServer.close(() => r()));
});

/** The schema with every object closed (`additionalProperties: false` unless it says otherwise). */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (!node || typeof node !== 'object') return node;
  const o: Json = {};
  for (const [k, v] of Object.entries(node as Json)) o[k] = k === 'example' || k === 'examples' ? v : closed(v);
  if ((o.type === 'object' || o.properties) && o.additionalProperties === undefined && o.patternProperties === undefined) o.additionalProperties = false;
  return o;
}

const docPath = (route: string) => route.replace(/:([a-z_]+)/g, '{$1}');

/**
 * One operator call: the answer must have `status`, equal what its handler returned, and match
 * the schema /admin/docs documents for that status.
 */
async function call(method: string, url: string, status: number, payload?: unknown): Promise<Json> {
  lastRaw = null;
  const r = await t.app.inject({
    method: method as 'GET', url: `/admin/v1${url}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
  expect(r.statusCode, `${method} ${url}: ${r.body}`).toBe(status);
  const raw = lastRaw as { route: string; method: string; payload: unknown } | null;
  expect(raw, `${method} ${url}: the handler's answer was seen`).not.toBeNull();
  const body = r.json();
  // Through the schema equals without it: nothing dropped, nothing coerced.
  expect(body, `${method} ${url}: the answer as serialized`).toEqual(raw!.payload);
  const path = docPath(raw!.route);
  const op = doc.paths[path]?.[method.toLowerCase()];
  expect(op, `${method} ${path} documented`).toBeDefined();
  const schema = op.responses[String(status)]?.content?.['application/json']?.schema;
  expect(schema, `${method} ${path} ${status}: a documented schema`).toBeDefined();
  const validate = ajv.compile(closed(schema) as Json);
  expect(validate(raw!.payload) ? [] : validate.errors, `${method} ${url} ${status} against /admin/docs: ${JSON.stringify(raw!.payload).slice(0, 400)}`).toEqual([]);
  answered.add(`${method.toLowerCase()} ${path} ${status}`);
  return body;
}

/** The documented 2xx answers no real call could reach here, each with why. */
const NOT_REACHED: Record<string, string> = {
  'post /admin/v1/merchants/{id}/test-token 201': 'every merchant created today has its test-mode token from the start (201 is for merchants from before test mode)',
};

describe('the operator API answers through its documented schemas, unchanged', () => {
  const ids: Json = {};

  it('merchants, shops, payout accounts, adjustments, keys, team: every field the handler returned reaches the client and is documented', async () => {
    const m = await call('POST', '/merchants', 201, { name: 'Schema walk', email: `walk-${Date.now()}@shop.test`, password: 'correct horse battery staple' });
    ids.merchant = m.id;
    ids.token = m.api_token;
    await call('GET', '/merchants?limit=5', 200);
    await call('PATCH', `/merchants/${m.id}`, 200, {
      verified: true, moderation_threshold: '500', payout_daily_limit: '100000', grants: { refunds: true },
      fees: { payout_card_percent: '1', payout_card_fixed: '0' }, api_ip_allowlist: ['127.0.0.1', '198.51.100.0/24'], routing: { payment_card: ['sandbox'] },
    });
    await call('PUT', `/merchants/${m.id}/payout-webhook`, 200, { url: shopUrl });
    ids.token = (await call('POST', `/merchants/${m.id}/token`, 200)).api_token;
    const again = await call('POST', `/merchants/${m.id}/test-token`, 200);
    expect(again.api_token).toEqual(expect.any(String));
    await call('GET', `/merchants/${m.id}/team`, 200);
    await call('POST', `/merchants/${m.id}/password-reset`, 202, {});
    await call('POST', `/merchants/${m.id}/two-factor-reset`, 200, { reason: 'Identified by a video call and the contract number' });

    const shop = await call('POST', `/merchants/${m.id}/shops`, 201, {
      name: 'Walk shop', result_url: shopUrl, success_url: 'https://shop.example/s', fiscalization: { enabled: true, tax_system_code: 1, vat_code: 4 },
    });
    ids.shop = shop.id;
    await call('GET', `/merchants/${m.id}/shops`, 200);
    await call('GET', `/shops/${shop.id}`, 200);
    await call('PATCH', `/shops/${shop.id}`, 200, { fail_url: null, default_currency: 'RUB', fiscalization: { enabled: false } });

    const banks = await call('GET', '/sbp-banks', 200);
    const bank = banks.data[0].member_id as number;
    await call('PATCH', `/sbp-banks/${bank}`, 200, { active: true });
    const card = await call('POST', `/merchants/${m.id}/payout-accounts`, 201, { type: 'card', identifier: '4242 4242 4242 4242', card_holder: 'IVAN PETROV' });
    ids.card = card.id;
    const sbp = await call('POST', `/merchants/${m.id}/payout-accounts`, 201, { type: 'sbp', identifier: '+79161234567', bank_member_id: bank });
    await call('GET', `/merchants/${m.id}/payout-accounts`, 200);
    await call('GET', `/payout-accounts/${sbp.id}`, 200);
    await call('PATCH', `/payout-accounts/${sbp.id}`, 200, { status: 'banned' });

    await call('POST', `/merchants/${m.id}/balance-adjustments`, 201, { currency: 'RUB', amount: '5000', reason: 'Opening float' });
    await call('GET', `/merchants/${m.id}/balance-adjustments`, 200);

    const key = await call('POST', `/merchants/${m.id}/keys`, 201, { name: 'export', scopes: ['payments:read', 'balance:read'] });
    await call('GET', `/merchants/${m.id}/keys`, 200);
    await call('DELETE', `/merchants/${m.id}/keys/${key.id}`, 200);
  });

  it('payments, chargebacks, events, payouts, attention: the money paths answer unchanged', async () => {
    const m: MerchantFixture = { merchantId: ids.merchant, token: ids.token, shopId: ids.shop, auth: { authorization: `Bearer ${ids.token}` } };
    const paid = await payRequest(t, await createBill(t, m, { amount: '300.00' }), cardForm());
    expect(paid.json().status).toBe('SUCCESS');
    const paymentId = paid.json().payment_id as string;
    await call('POST', `/payments/${paymentId}/chargebacks`, 201, { amount: '50.00', reason: 'fraud: card not present' });
    await call('GET', `/payments/${paymentId}/chargebacks`, 200);
    await call('GET', '/merchants/' + ids.merchant, 200);

    await call('POST', `/shops/${ids.shop}/test-postback`, 200);
    const events = await call('GET', `/events?merchant_id=${ids.merchant}&limit=1`, 200);
    expect(events.links.next).toEqual(expect.any(String));
    const eventId = events.data[0].id as string;
    await call('GET', `/events/${eventId}`, 200);
    await call('POST', `/events/${eventId}/redeliver`, 200);
    await call('POST', `/merchants/${ids.merchant}/events/redeliver-dead`, 200);

    for (const order of ['walk-1', 'walk-2']) {
      const r = await t.app.inject({
        method: 'POST', url: '/api/v1/payout/personal/create', headers: m.auth, payload: { amount: 600, payout_account_id: ids.card, order_id: order },
      });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().data[0].status).toBe('MODERATING');
      ids[order] = r.json().data[0].id;
    }
    // Two-stage payments: one captured in part, one cancelled.
    const held: string[] = [];
    for (const amount of ['120.00', '80.00']) {
      const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount, shop_id: ids.shop, capture: false } });
      expect(bill.statusCode, bill.body).toBe(200);
      const p = await payRequest(t, bill.json().bill_id, cardForm());
      expect(p.json().status).toBe('PROCESS');
      held.push(p.json().payment_id);
    }
    await call('POST', `/payments/${held[0]}/capture`, 200, { amount: '100.00' });
    await call('POST', `/payments/${held[1]}/cancel`, 200);

    await call('GET', `/payouts?merchant_id=${ids.merchant}&status=MODERATING`, 200);
    await call('POST', `/payouts/${ids['walk-1']}/approve`, 200);
    await call('POST', `/payouts/${ids['walk-2']}/decline`, 200, { reason: 'The account holder differs from the merchant' });

    // A card payment left waiting for 3-D Secure, given up on by reconciliation.
    const stuck = await payRequest(t, await createBill(t, m, { amount: '88.00' }), cardForm('4000002760003184'));
    const stuckId = stuck.json().payment_id as string;
    await t.app.services.attention.raise({
      objectType: 'payment', objectId: stuckId, merchantId: ids.merchant, connector: 'sandbox', providerRef: `ref-${stuckId}`,
      reason: 'reconciliation gave up', lastHeard: { status: 'unknown', reason: 'no answer' },
    });
    const open = await call('GET', '/attention', 200);
    const item = open.data.find((i: Json) => i.object_id === stuckId);
    await call('POST', `/attention/${item.id}/resolve`, 200, { outcome: 'FAIL', note: 'The acquirer has no such operation' });
  });

  it('operators, connectors, rates, the ledger, the audit trail and the deployment answer unchanged', async () => {
    const o = await call('POST', '/operators', 201, { email: `support-${Date.now()}@pay.test`, role: 'support', password: 'a long enough password' });
    await call('GET', '/operators', 200);
    const tok = await call('POST', `/operators/${o.id}/tokens`, 201, { name: 'ci' });
    await call('GET', `/operators/${o.id}`, 200);
    await call('DELETE', `/operators/${o.id}/tokens/${tok.id}`, 200);
    await call('PATCH', `/operators/${o.id}`, 200, { role: 'finance' });
    await call('POST', `/operators/${o.id}/password-reset`, 202);
    await call('POST', `/operators/${o.id}/totp-reset`, 200);

    await call('PUT', '/connectors/sbx-walk', 201, { kind: 'sandbox', mode: 'test', settings: {} });
    await call('PUT', '/connectors/sbx-walk', 200, { kind: 'sandbox', mode: 'test', enabled: true, settings: {} });
    await call('PATCH', '/connectors/sbx-walk', 200, { enabled: false });
    await call('GET', '/connectors', 200);
    await call('GET', '/connectors/sandbox', 200);

    await call('PUT', '/rates/USD', 200, { rub_per_unit: '92.5' });
    await call('GET', '/rates', 200);
    await call('DELETE', '/rates/USD', 200);

    await call('GET', '/ledger/verify', 200);
    await call('GET', `/ledger/accounts?merchant_id=${ids.merchant}`, 200);
    await call('GET', '/ledger/accounts?currency=RUB', 200);

    const trail = await call('GET', '/audit?limit=3', 200);
    expect(trail.next_before_id).toEqual(expect.any(String));
    const csv = await t.app.inject({ method: 'GET', url: '/admin/v1/audit.csv?limit=3', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.body.split('\n')[0]).toBe(doc.paths['/admin/v1/audit.csv'].get.responses['200'].description.replaceAll(', ', ','));
    answered.add('get /admin/v1/audit.csv 200');

    const deployment = await call('GET', '/deployment', 200);
    expect(deployment.sandbox_money.length).toBeGreaterThan(0);
    const cleared = await call('POST', '/deployment/sandbox-money/clear', 200, { merchant_id: ids.merchant, reason: 'Going live' });
    expect(cleared.cleared.length).toBeGreaterThan(0);
  });

  it('every documented operator answer was reached by a real call above (or says why not)', () => {
    const documented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      if (!path.startsWith('/admin/v1/')) continue;
      for (const [method, op] of Object.entries(item as Json)) {
        for (const status of Object.keys(op.responses)) if (status.startsWith('2')) documented.push(`${method} ${path} ${status}`);
      }
    }
    expect(documented.length).toBeGreaterThan(50);
    expect(documented.filter((k) => !answered.has(k) && !NOT_REACHED[k])).toEqual([]);
    expect(Object.keys(NOT_REACHED).filter((k) => answered.has(k) || !documented.includes(k))).toEqual([]);
  });
});
