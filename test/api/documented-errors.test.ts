import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, setMerchant } from './support.js';

/**
 * The merchants' /docs lists each operation's errors (status, `x-error-keys`, an example body)
 * from the spec (src/http/openapi/errors.ts). Here each operation is called the way a client
 * gets it wrong: without a token (401), and with one mistake reachable without elaborate setup
 * (a 403, 404 or 422 key, or a 400 key where that is the operation's). The answer's status and
 * `message` must be an entry the document lists for that operation, so the document cannot drift
 * from the code.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let t: TestApp;
let doc: Json;
let m: MerchantFixture;
let banned: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
  m = await createMerchant(t);
  banned = await createMerchant(t);
  await setMerchant(t, banned, { status: 'BANNED' });
});
afterAll(async () => { await t?.close(); });

interface Mistake {
  /** Who calls: the merchant, a banned merchant, or nobody (the payment page). */
  as?: 'merchant' | 'banned' | 'nobody';
  query?: Record<string, string>;
  body?: Json;
  /** Path parameters of the operation's path. */
  params?: Record<string, string>;
  status: number;
  message: string;
}

const INVALID = 'The given data was invalid.';
const UNAUTHORIZED = 'This action is unauthorized.';
const BAD_DATE = { start_date: 'yesterday' };

/** One mistake per merchant operation: what is sent, and the documented answer it must get. */
const MISTAKES: Record<string, () => Promise<Mistake> | Mistake> = {
  'post /api/v1/bill/create': () => ({ body: { amount: '100.00', shop_id: 'NoSuchShop000000' }, status: 403, message: 'api:error.shop_not_found' }),
  'post /api/v1/bill/toggle_activity': () => ({ body: { id: 'NoSuchBill', active: 0 }, status: 422, message: 'api:error.bill_not_found' }),
  'get /api/v1/bill/status': () => ({ query: { id: 'NoSuchBill' }, status: 422, message: 'api:error.bill_not_found' }),
  'get /api/v1/bill/search': () => ({ query: BAD_DATE, status: 422, message: INVALID }),
  'get /api/v1/bill/payments': () => ({ query: { id: 'NoSuchBill' }, status: 403, message: 'api:error.bill_not_found' }),
  'get /api/v1/payment/status': () => ({ query: { id: 'NoSuchPayment000' }, status: 422, message: 'api:error.payment_not_found' }),
  'get /api/v1/payment/search': () => ({ query: BAD_DATE, status: 422, message: INVALID }),
  'get /api/v1/merchant/balance': () => ({ as: 'banned', status: 403, message: 'api:error.merchant_banned' }),
  'post /api/v1/payment/charge': () => ({ body: { payment_method_id: 'NoSuchMethod0000', amount: '10.00' }, status: 422, message: 'api:error.payment_method_not_found' }),
  'get /api/v1/payment/methods': () => ({ as: 'banned', status: 403, message: 'api:error.merchant_banned' }),
  'post /api/v1/payment/methods/revoke': () => ({ body: { payment_method_id: 'NoSuchMethod0000' }, status: 422, message: 'api:error.payment_method_not_found' }),
  'post /api/v1/payout/personal/create': () => ({ body: { amount: 100, payout_account_id: 'NoSuchAccount00', order_id: 'doc-1' }, status: 400, message: 'api:error.merchant_not_verified' }),
  'post /api/v1/payout/regular/create': () => ({
    body: { amount: 10, currency: 'RUB', account_type: 'sbp', account_identifier: '+79161234567', account_bank: 100000000111, order_id: 'doc-2' }, status: 403, message: UNAUTHORIZED,
  }),
  'get /api/v1/payout/status': () => ({ query: { id: 'NoSuchPayout000' }, status: 422, message: 'api:error.payout_not_found' }),
  'get /api/v1/payout/search': () => ({ query: BAD_DATE, status: 422, message: INVALID }),
  'get /api/v1/payout/dictionaries/sbp_banks': () => ({ as: 'banned', status: 403, message: 'api:error.merchant_banned' }),
  'post /api/v1/refund/full/create': () => ({ body: { payment_id: 'NoSuchPayment000' }, status: 403, message: UNAUTHORIZED }),
  'post /api/v1/refund/partial/create': () => ({ body: { payment_id: 'NoSuchPayment000', amount: 10 }, status: 403, message: UNAUTHORIZED }),
  'get /api/v1/refund/status': () => ({ query: { payment_id: 'NoSuchPayment000' }, status: 403, message: UNAUTHORIZED }),
  'get /api/v1/refund/search': () => ({ query: BAD_DATE, status: 403, message: UNAUTHORIZED }),
  'post /pay/{bill_id}': () => ({ as: 'nobody', params: { bill_id: 'NoSuchBill' }, body: { method: 'BANK_CARD' }, status: 404, message: 'api:error.bill_not_found' }),
  'get /pay/{bill_id}/payments/{payment_id}': async () => ({
    as: 'nobody', params: { bill_id: await createBill(t, m), payment_id: 'NoSuchPayment000' }, status: 404, message: 'api:error.payment_not_found',
  }),
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Every merchant operation that answers errors (the probes but /metrics answer none). */
const operations = (): [string, string, Json][] => Object.entries(doc.paths as Json).flatMap(([path, item]) =>
  METHODS.filter((x) => item[x] && !['/health', '/ready'].includes(path)).map((x) => [x, path, item[x]] as [string, string, Json]));

const urlOf = (path: string, params: Record<string, string> = {}, query?: Record<string, string>) =>
  path.replace(/\{([a-z_]+)\}/g, (_, k: string) => params[k] ?? 'Zx8Wq2LmN4pR7tYv') + (query ? `?${new URLSearchParams(query)}` : '');

/** The keys the document lists for an operation's status (none when it lists no such status). */
const documented = (op: Json, status: number): string[] => op.responses[String(status)]?.['x-error-keys'] ?? [];

describe('each merchant operation answers the errors /docs lists for it', () => {
  it('every operation has a mistake here (a new operation must bring one)', () => {
    const keys = operations().map(([x, path]) => `${x} ${path}`).filter((k) => k !== 'get /metrics');
    expect(keys.length).toBeGreaterThan(15);
    expect(keys.filter((k) => !MISTAKES[k])).toEqual([]);
    expect(Object.keys(MISTAKES).filter((k) => !keys.includes(k))).toEqual([]);
  });

  it('without a token: 401 Unauthenticated., as each authenticated operation documents it', async () => {
    const checked: string[] = [];
    for (const [x, path, op] of operations()) {
      if (path.startsWith('/pay/')) continue; // the payment page needs no token
      const r = await t.app.inject({ method: x.toUpperCase() as 'GET', url: urlOf(path) });
      expect(r.statusCode, `${x} ${path}: ${r.body}`).toBe(401);
      expect(documented(op, 401), `${x} ${path}: documented 401`).toContain(r.json().message);
      expect(r.json()).toMatchObject({ success: false, message: 'Unauthenticated.' });
      checked.push(path);
    }
    expect(checked).toContain('/metrics');
    expect(checked.length).toBeGreaterThan(15);
  });

  it('a wrong token is the same documented 401 (never a 403 or 500)', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: 'Bearer not-a-token' } });
    expect(r.statusCode).toBe(401);
    expect(documented(doc.paths['/api/v1/merchant/balance'].get, 401)).toContain(r.json().message);
    // The operator token is not a merchant's.
    const admin = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(admin.statusCode).toBe(401);
  });

  it('one mistake per operation: the status and message it answers are an entry the document lists for it', async () => {
    const wrong: string[] = [];
    for (const [x, path, op] of operations()) {
      const key = `${x} ${path}`;
      if (key === 'get /metrics') continue;
      const mk = await MISTAKES[key]!();
      const who = mk.as ?? 'merchant';
      const headers = who === 'nobody' ? { accept: 'application/json' } : who === 'banned' ? banned.auth : m.auth;
      const r = await t.app.inject({
        method: x.toUpperCase() as 'GET', url: urlOf(path, mk.params, mk.query), headers,
        ...(mk.body === undefined ? {} : { payload: mk.body }),
      });
      // The document lists what this case expects, and the service answers it.
      if (!documented(op, mk.status).includes(mk.message)) wrong.push(`${key}: /docs does not list ${mk.status} ${mk.message}`);
      const body = r.json();
      if (r.statusCode !== mk.status || body.success !== false || body.message !== mk.message) wrong.push(`${key}: expected ${mk.status} ${mk.message}, got ${r.statusCode} ${r.body}`);
      else if (mk.message === INVALID && Object.keys(body.errors ?? {}).length === 0) wrong.push(`${key}: a 422 without its fields`);
    }
    expect(wrong).toEqual([]);
  });
});
