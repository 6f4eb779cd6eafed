import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const ROUTES: [string, string][] = [
  ['post', '/api/v1/bill/create'], ['post', '/api/v1/bill/toggle_activity'], ['get', '/api/v1/bill/status'],
  ['get', '/api/v1/bill/search'], ['get', '/api/v1/bill/payments'], ['get', '/api/v1/payment/status'],
  ['get', '/api/v1/payment/search'], ['get', '/api/v1/merchant/balance'], ['get', '/api/v1/payout/dictionaries/sbp_banks'],
  ['get', '/api/v1/refund/search'],
];

describe('OpenAPI document', () => {
  it.each(ROUTES)('/docs/json lists %s %s with tags, a summary and a 200 response schema', async (method, path) => {
    const r = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(r.statusCode).toBe(200);
    const op = r.json().paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    expect(op.tags.length).toBeGreaterThan(0);
    expect(op.summary).toBeTruthy();
    expect(op.responses['200']).toBeDefined();
  });

  it('documents the request fields of bill/create and bill/status', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
    const create = doc.paths['/api/v1/bill/create'].post;
    const props = create.requestBody.content['application/json'].schema.properties;
    expect(Object.keys(props)).toEqual(expect.arrayContaining(['amount', 'shop_id', 'order_id', 'type', 'currency_in', 'payment_method']));
    const status = doc.paths['/api/v1/bill/status'].get;
    expect(status.parameters.map((p: { name: string }) => p.name)).toContain('id');
  });

  it('responses go through their schema: nothing unlisted leaks (bill/status has no merchant_id or shop_id)', async () => {
    const m = await createMerchant(t);
    const id = await createBill(t, m);
    const body = (await t.app.inject({ method: 'GET', url: `/api/v1/bill/status?id=${id}`, headers: m.auth })).json();
    expect(body).not.toHaveProperty('merchant_id');
    expect(body).not.toHaveProperty('shop_id');
  });

  it('documents client-visible amounts as JSON numbers and balances as strings (docs/adr/0001-money-as-decimal-and-wire-amounts.md)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
    const schema = (path: string, method = 'get') => doc.paths[path][method].responses['200'].content['application/json'].schema;
    const props = (s: { properties?: Record<string, unknown>; allOf?: { properties?: Record<string, unknown> }[] }) =>
      Object.assign({}, s.properties ?? {}, ...(s.allOf ?? []).map((x) => x.properties ?? {})) as Record<string, { type?: string | string[] }>;
    expect(props(schema('/api/v1/bill/status')).amount!.type).toBe('number');
    const payment = props(schema('/api/v1/payment/status'));
    for (const f of ['amount', 'amount_received', 'commission', 'refunded_amount']) expect(payment[f]!.type, f).toBe('number');
    expect(payment.account_amount).toMatchObject({ type: ['number', 'null'] }); // OpenAPI 3.1
    const payout = props(schema('/api/v1/payout/status'));
    expect([payout.amount!.type, payout.commission!.type]).toEqual(['number', 'number']);
    expect(props(schema('/api/v1/refund/status')).amount!.type).toBe('number');
    const balance = schema('/api/v1/merchant/balance').properties.balances.items.properties;
    expect(balance.balance_available.type).toBe('string');
  });

  it('documents what the public clients send and read (issue 12): bill/create extras, payment and bill fields, paginated bill/payments, refund/search, chargebacks, the IP allow-list', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
    const create = doc.paths['/api/v1/bill/create'].post.requestBody.content['application/json'].schema.properties;
    expect(Object.keys(create)).toEqual(expect.arrayContaining(['ttl', 'success_url', 'fail_url', 'return_url', 'locale', 'payer_email', 'request_fields', 'items', 'custom']));
    expect(create.items.example[0]).toMatchObject({ name: 'Wool scarf' });
    expect(create.request_fields.example).toEqual(['email', 'phone']);
    const status = doc.paths['/api/v1/payment/status'].get;
    expect(status.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'refunds', 'chargeback']));
    const payment = status.responses['200'].content['application/json'].schema.properties;
    expect(Object.keys(payment)).toEqual(expect.arrayContaining(['account_bank', 'payer_phone', 'payer_email', 'payer_name', 'payer_comment', 'error_code', 'error_message', 'refunds', 'chargeback']));
    const bill = doc.paths['/api/v1/bill/status'].get.responses['200'].content['application/json'].schema.properties;
    expect(Object.keys(bill)).toEqual(expect.arrayContaining(['order_id', 'ttl', 'expires_at']));
    const payments = doc.paths['/api/v1/bill/payments'].get;
    expect(Object.keys(payments.responses['200'].content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['links', 'meta']));
    expect(payments.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['per_page', 'cursor']));
    expect(doc.paths['/api/v1/refund/search'].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['payment_id', 'start_date', 'cursor']));
    expect(doc.paths['/api/v1/payout/status'].get.parameters.map((p: { name: string }) => p.name)).toContain('payout_id');
    // The operator API is in the operators' document (/admin/docs/json), not the merchants'.
    const ops = (await t.app.inject({ method: 'GET', url: '/admin/docs/json' })).json();
    expect(ops.paths['/admin/v1/payments/{id}/chargebacks'].post.responses['201']).toBeDefined();
    expect(ops.paths['/admin/v1/merchants/{id}'].patch.requestBody.content['application/json'].schema.properties.api_ip_allowlist).toBeDefined();
  });
});
