import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { PLACEHOLDERS } from '../../src/http/openapi/examples.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { createMerchant } from '../factories/merchant.js';

/** payment-api.md part 7: the meaning the spec gives each key it defines. */
const SPEC_MEANINGS: [string, string][] = [
  ['Unauthenticated.', 'Invalid or missing API token'], ['This action is unauthorized.', 'Merchant has no access to this API'],
  ['api:error.invalid_amount', 'Invalid amount'], ['api:error.merchant_banned', 'Merchant is blocked'], ['api:error.merchant_not_found', 'Merchant not found'],
  ['api:error.merchant_subscription_inactive', 'Subscription not active'], ['api:error.merchant_subscription_not_found', 'Merchant has no subscription'],
  ['api:error.merchant_not_verified', 'Merchant does not have Verified status'], ['api:error.shop_not_found', 'Shop not found'],
  ['api:error.shop_not_enabled', 'Shop or merchant deactivated'], ['api:error.access_denied', 'Merchant has no access to the shop'],
  ['api:error.rate-not-found', 'Invalid currency or country'], ['api:error.bill_not_found', 'Bill not found'],
  ['api:error.bill_is_finished', 'NORMAL bill is already paid, cannot be toggled'], ['api:error.payment_not_found', 'Payment not found'],
  ['api:error.too_many_payments', 'Too many payments requested at once'], ['api:error.payout_not_found', 'Payout not found'],
  ['api:error.payout_account_not_found', 'Payout account not found'], ['api:error.payout_account_banned', 'Payout account blocked'],
  ['api:error.daily_payout_limit_exceeded', 'Daily payout limit exceeded'], ['api:error.monthly_payout_limit_exceeded', 'Monthly payout limit exceeded'],
  ['api:error.balance_not_enough', 'Not enough balance (payout or refund)'], ['api:error.direction_not_available', 'Account cannot be used for this payout'],
  ['api:error.general_error', 'Internal error (500)'],
];

/**
 * Issue 30 item 5: /docs is what a merchant integrates from and the operator API has a document
 * of its own. Walks both: every operation has request examples, error responses that name their
 * keys with an example body, no generator placeholders, typed answers, no admin path for merchants.
 */
let t: TestApp;
let merchant: any; // eslint-disable-line @typescript-eslint/no-explicit-any
let operator: any; // eslint-disable-line @typescript-eslint/no-explicit-any
beforeAll(async () => {
  t = await setupTestApp();
  merchant = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
  operator = (await t.app.inject({ method: 'GET', url: '/admin/docs/json' })).json();
});
afterAll(async () => { await t.close(); });

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const ops = (doc: any): [string, any][] => // eslint-disable-line @typescript-eslint/no-explicit-any
  Object.entries(doc.paths).flatMap(([p, item]: [string, any]) => METHODS.filter((m) => item[m]).map((m) => [`${m.toUpperCase()} ${p}`, item[m]] as [string, any])); // eslint-disable-line @typescript-eslint/no-explicit-any
const KEY = /^(api:error\.[a-z_-]+|Unauthenticated\.|This action is unauthorized\.|The given data was invalid\.|Too Many Attempts\.|Not Found\.|A request with this Idempotency-Key is in progress\.|Outgoing mail is not configured \(SMTP_URL\): no reset link can be sent\.)$/;

/** Every value given as an example (or examples) anywhere in a document, as JSON text. */
function examplesText(doc: unknown): string {
  const out: unknown[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === 'example' || k === 'examples') out.push(v);
        else walk(v);
      }
    }
  };
  walk(doc);
  return JSON.stringify(out);
}

function hasRequestExamples(op: any): boolean { // eslint-disable-line @typescript-eslint/no-explicit-any
  const params = (op.parameters ?? []).every((p: { example?: unknown }) => p.example !== undefined);
  const bodies = Object.values(op.requestBody?.content ?? {}).every((m: any) => m.example !== undefined || m.examples !== undefined); // eslint-disable-line @typescript-eslint/no-explicit-any
  return params && bodies;
}

/** Each 2xx answer says what it is (never "Default Response") and shows an example of each media type. */
function successesShown(name: string, op: any): void { // eslint-disable-line @typescript-eslint/no-explicit-any
  const ok = Object.entries(op.responses).filter(([s]) => s.startsWith('2')) as [string, any][]; // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(ok.length, `${name}: a 2xx answer`).toBeGreaterThan(0);
  for (const [status, r] of ok) {
    expect(r.description, `${name} ${status}`).not.toBe('Default Response');
    const media = Object.entries(r.content ?? {}) as [string, any][]; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(media.length, `${name} ${status}: content`).toBeGreaterThan(0);
    for (const [type, m] of media) {
      expect(m.schema, `${name} ${status} ${type}: schema`).toBeDefined();
      expect(m.example !== undefined || m.examples !== undefined, `${name} ${status} ${type}: example`).toBe(true);
    }
  }
}

function errorsNameKeys(name: string, op: any): void { // eslint-disable-line @typescript-eslint/no-explicit-any
  const errors = Object.entries(op.responses).filter(([s]) => /^[45]/.test(s));
  expect(errors.length, `${name}: error responses`).toBeGreaterThan(0);
  for (const [status, r] of errors as [string, any][]) { // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r['x-error-keys']?.length, `${name} ${status}: keys`).toBeGreaterThan(0);
    for (const k of r['x-error-keys']) expect(k, `${name} ${status}`).toMatch(KEY);
    const examples = r.content['application/json'].examples;
    for (const k of r['x-error-keys']) expect(examples[k].value, `${name} ${status} ${k}`).toMatchObject({ success: false, message: k });
  }
}

describe('the merchants\' /docs', () => {
  it('is OpenAPI 3.1 and holds no operator path', () => {
    expect(merchant.openapi).toBe('3.1.0');
    expect(Object.keys(merchant.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
    expect(Object.keys(merchant.paths).filter((p) => p.startsWith('/providers'))).toEqual([]);
  });

  it('documents the merchant API, the /pay JSON API, /health, /ready and /metrics', () => {
    for (const p of ['/api/v1/bill/create', '/api/v1/payment/status', '/api/v1/refund/partial/create', '/pay/{bill_id}', '/pay/{bill_id}/payments/{payment_id}', '/health', '/ready', '/metrics']) {
      expect(merchant.paths[p], p).toBeDefined();
    }
  });

  it('every operation has request examples and (but the probes) error responses with their api:error keys and an example body', () => {
    for (const [name, op] of ops(merchant)) {
      expect(hasRequestExamples(op), name).toBe(true);
      if (!/\/(health|ready)$/.test(name)) errorsNameKeys(name, op);
      successesShown(name, op);
    }
    expect(JSON.stringify(merchant)).not.toContain('Default Response');
    const create = merchant.paths['/api/v1/bill/create'].post;
    expect(create.responses['403']['x-error-keys']).toEqual(expect.arrayContaining(['api:error.shop_not_found', 'api:error.merchant_banned', 'api:error.rate-not-found']));
    expect(merchant.paths['/api/v1/bill/status'].get.responses['422']['x-error-keys']).toEqual(['api:error.bill_not_found']);
  });

  it('shows no generator placeholder ("string", additionalProp1) in any example; bill/create\'s example is a real bill', () => {
    const text = examplesText(merchant);
    for (const p of PLACEHOLDERS) expect(text, p).not.toContain(p);
    const example = merchant.paths['/api/v1/bill/create'].post.requestBody.content['application/json'].example;
    expect(example).toMatchObject({ amount: 1500.5, shop_id: expect.any(String), type: 'normal' });
  });

  it('says what each error key means: every key an operation lists has its sentence there, and ErrorKey lists every key the service answers with', () => {
    const glossary = new Map<string, string>(merchant.components.schemas.ErrorKey.oneOf.map((k: { const: string; description: string }) => [k.const, k.description]));
    // /metrics takes the operator's token, not the merchant's: its 401 says so in its own words.
    for (const [name, op] of ops(merchant).filter(([n]) => n !== 'GET /metrics')) {
      for (const [status, r] of Object.entries(op.responses) as [string, any][]) { // eslint-disable-line @typescript-eslint/no-explicit-any
        for (const k of r['x-error-keys'] ?? []) {
          expect(glossary.get(k), `${name} ${status} ${k}`).toMatch(/^[A-Z].{10,}\.$/);
          expect(r.description, `${name} ${status} ${k}`).toContain(`\`${k}\`: ${glossary.get(k)}`);
          expect(r.content['application/json'].examples[k].description).toBe(glossary.get(k));
        }
      }
    }
    for (const code of Object.keys(ERROR_STATUS)) expect(glossary.has(`api:error.${code}`), code).toBe(true);
    expect(glossary.has('api:error.general_error')).toBe(true);
    // The spec's own words open the sentence of each key it defines (payment-api.md part 7).
    for (const [k, words] of SPEC_MEANINGS) expect(glossary.get(k), k).toMatch(new RegExp(`^${words.replace(/[.()]/g, '\\$&')}`));
  });

  it('documents Idempotency-Key on every POST of the merchant API: what it dedupes, for how long, what a repeat answers, which key to send', () => {
    const posts = ops(merchant).filter(([name]) => name.startsWith('POST /api/v1/'));
    expect(posts.length).toBeGreaterThanOrEqual(8);
    for (const [name, op] of posts) {
      const header = op.parameters.find((p: { name: string; in: string }) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(header, name).toBeDefined();
      expect(header.description, name).toContain(`kept ${t.config.idempotencyTtlHours} hours`);
      expect(header.description, name).toContain('`Idempotent-Replayed: true`');
      expect(op.responses['409']['x-error-keys'], name).toEqual(['A request with this Idempotency-Key is in progress.']);
      expect(op.responses['200'].headers['Idempotent-Replayed'], name).toBeDefined();
    }
    for (const p of ['bill/create', 'payment/charge', 'payout/personal/create', 'payout/regular/create', 'refund/full/create', 'refund/partial/create']) {
      const header = merchant.paths[`/api/v1/${p}`].post.parameters.find((x: { name: string }) => x.name === 'Idempotency-Key');
      expect(header.description, p).toContain('One key per operation you intend: e.g. your order id and attempt number');
      expect(header.description, p).toContain('Send the same key again on every retry');
    }
    const charge = merchant.paths['/api/v1/payment/charge'].post.parameters.find((x: { name: string }) => x.name === 'Idempotency-Key');
    expect(charge.description).toContain('Charges are deduplicated **only** by this key');
  });

  it('the replay header /docs names is the one a repeated request gets', async () => {
    const m = await createMerchant(t);
    const send = () => t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'idempotency-key': 'order-7-attempt-1' }, payload: { amount: '10.00', shop_id: m.shopId } });
    const first = await send();
    const again = await send();
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const documented = Object.keys(merchant.paths['/api/v1/bill/create'].post.responses['200'].headers)[0]!;
    expect(again.headers[documented.toLowerCase()]).toBe('true');
    expect(again.json().bill_id).toBe(first.json().bill_id);
  });

  it('says that only Idempotency-Key deduplicates a charge, and what key to send (one per intended charge, the same on a retry)', () => {
    const charge = merchant.paths['/api/v1/payment/charge'].post;
    expect(charge.description).toContain('deduplicated **only by the `Idempotency-Key` header**');
    expect(charge.description).toContain('one key per intended charge, e.g. your order id and attempt number');
    expect(charge.description).toContain('send the same key again');
    expect(merchant.info.description).toContain('Idempotency-Key');
  });

  it('documents type as the spec and README write it (MULTI / NORMAL accepted, either case)', () => {
    const type = merchant.paths['/api/v1/bill/create'].post.requestBody.content['application/json'].schema.properties.type;
    expect(type.enum).toEqual(expect.arrayContaining(['MULTI', 'NORMAL', 'multi', 'normal']));
  });

  it('describes the payment postback and the payout webhook as OpenAPI webhooks', () => {
    const pb = merchant.webhooks.paymentPostback.post.requestBody.content['application/x-www-form-urlencoded'];
    expect(Object.keys(pb.schema.properties)).toEqual(expect.arrayContaining(['InvId', 'OutSum', 'Commission', 'TrsId', 'Status', 'custom', 'SignatureValue']));
    expect(pb.example.Status).toBe('SUCCESS');
    const pw = merchant.webhooks.payoutWebhook.post.requestBody.content['application/x-www-form-urlencoded'];
    expect(Object.keys(pw.schema.properties)).toEqual(expect.arrayContaining(['TrsId', 'Amount', 'IsAuto', 'Status', 'BalanceAmount', 'CommissionApplyType', 'SignatureValue']));
    // The service posts them to you, signed, with no bearer token of yours.
    expect([merchant.webhooks.paymentPostback.post.security, merchant.webhooks.payoutWebhook.post.security]).toEqual([[], []]);
  });

  it('the Swagger UI at /docs still opens', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    expect(r.statusCode).toBe(200);
    const css = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' });
    expect(css.statusCode).toBe(200);
  });
});

describe('the operators\' document', () => {
  it('holds the operator API, each answer typed (no "Default Response"), with examples and error keys', async () => {
    expect(operator.openapi).toBe('3.1.0');
    const paths = Object.keys(operator.paths);
    expect(paths.filter((p) => p.startsWith('/admin/v1/')).length).toBeGreaterThan(30);
    expect(paths.filter((p) => p.startsWith('/api/'))).toEqual([]);
    expect(JSON.stringify(operator)).not.toContain('Default Response');
    for (const [name, op] of ops(operator)) {
      expect(hasRequestExamples(op), name).toBe(true);
      successesShown(name, op);
      if (name.includes(' /admin/')) errorsNameKeys(name, op);
    }
    { const text = examplesText(operator); for (const p of PLACEHOLDERS) expect(text, p).not.toContain(p); }
    expect(operator.paths['/admin/v1/payments/{id}/chargebacks'].post.responses['201']).toBeDefined();
    const page = await t.app.inject({ method: 'GET', url: '/admin/docs' });
    expect(page.body).toContain("url: '/admin/docs/json'");
  });
});

describe('the operators\' document: two-stage payments', () => {
  it('documents capture and cancel of a held payment, and the merchant\'s held amounts beside its balances; the merchant\'s balance answer has no held field', () => {
    expect(operator.paths['/admin/v1/payments/{id}/capture'].post.responses['200']).toBeDefined();
    expect(operator.paths['/admin/v1/payments/{id}/cancel'].post.responses['200']).toBeDefined();
    const view = operator.paths['/admin/v1/merchants/{id}'].get.responses['200'].content['application/json'].schema;
    expect(view.properties.held.type).toBe('array');
    expect(Object.keys(view.properties.held.items.properties).sort()).toEqual(['amount', 'currency']);
    expect(JSON.stringify(merchant.paths['/api/v1/merchant/balance'])).not.toContain('held');
  });
});

describe('the operators\' document, answer by answer', () => {
  it('types every operator answer with the route\'s own schema, not the bare {success: true} envelope', () => {
    const envelope: string[] = [];
    for (const [name, op] of ops(operator)) {
      if (!name.includes(' /admin/v1/')) continue;
      for (const [status, r] of Object.entries(op.responses) as [string, any][]) { // eslint-disable-line @typescript-eslint/no-explicit-any
        if (!status.startsWith('2')) continue;
        for (const m of Object.values(r.content) as any[]) { // eslint-disable-line @typescript-eslint/no-explicit-any
          const own = Object.keys(m.schema.properties ?? {}).filter((k) => k !== 'success');
          if (m.schema.type === 'object' && own.length === 0) envelope.push(`${name} ${status}`);
        }
      }
    }
    expect(envelope).toEqual([]);
    const merchant = operator.paths['/admin/v1/merchants/{id}'].get.responses['200'].content['application/json'];
    expect(Object.keys(merchant.schema.properties)).toEqual(expect.arrayContaining(['id', 'email', 'fees', 'routing', 'balances', 'test_mode']));
    expect(merchant.example).toMatchObject({ success: true, email: 'owner@shop.example', created_at: '2026-11-23 18:42:11' });
    expect(operator.paths['/admin/v1/connectors/{name}'].put.responses).toHaveProperty('201');
    expect(operator.paths['/admin/v1/connectors/{name}'].put.responses).toHaveProperty('200');
    expect(operator.paths['/admin/v1/audit.csv'].get.responses['200'].content).toHaveProperty('text/csv');
    expect(operator.paths['/admin/v1/payments/{id}/chargebacks'].post.responses['422']['x-error-keys']).toContain('api:error.balance_not_enough');
  });

  it('documents provider notifications as the providers see them: a text answer, refusals as {error}', () => {
    const r = operator.paths['/providers/{connector}/notifications'].post.responses;
    expect(r['200'].content).toHaveProperty('text/plain');
    for (const s of ['400', '404', '429', '503']) expect(r[s].content['application/json'].schema.required, s).toEqual(['error']);
    expect(r['401']).toBeUndefined();
  });
});
