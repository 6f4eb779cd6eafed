import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { count, createBill, multipart } from './support.js';

let t: TestApp;
let m: MerchantFixture;
let billId: string;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  billId = await createBill(t, m);
});
afterAll(async () => { await t.close(); });

const BAD_VALUES: [string, unknown][] = [
  ['empty', ''], ['huge', '9'.repeat(5000)], ['negative', '-5'], ['NaN', 'NaN'], ['1e309', '1e309'], ['three decimals', '1.005'],
  ['SQL injection', "'; DROP TABLE bills; --"], ['NUL byte', 'a\u0000b'], ['unicode', '١٢٣'], ['array', ['1', '2']],
  ['object', { $gt: '' }], ['boolean', false], ['JSON number 1e309', 1e309],
];

/** Sends `fields` in every form clients use; each answer must be a 4xx JSON error. */
async function everyForm(method: 'GET' | 'POST', url: string, fields: Record<string, unknown>) {
  const answers = [];
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) flat[k] = typeof v === 'string' ? v : JSON.stringify(v);
  answers.push(await t.app.inject({ method, url, headers: { ...m.auth, 'content-type': 'application/json' }, payload: JSON.stringify(fields) }));
  answers.push(await t.app.inject({ method, url, headers: { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(flat).toString() }));
  const mp = multipart(flat);
  answers.push(await t.app.inject({ method, url, headers: { ...m.auth, ...mp.headers }, payload: mp.payload }));
  answers.push(await t.app.inject({ method, url: `${url}?${new URLSearchParams(flat).toString()}`, headers: m.auth }));
  return answers;
}

function expectClientError(r: { statusCode: number; body: string; headers: Record<string, unknown> }) {
  expect(r.statusCode, r.body).toBeGreaterThanOrEqual(400);
  expect(r.statusCode, r.body).toBeLessThan(500);
  expect(String(r.headers['content-type'])).toMatch(/application\/json/);
  const body = JSON.parse(r.body);
  expect(body.success).toBe(false);
  expect(typeof body.message).toBe('string');
}

describe('bad input never gives a 500 and never stores anything', () => {
  it.each(BAD_VALUES)('bill/create with an amount that is %s: 4xx JSON in every form, no bill stored', async (_n, amount) => {
    const before = await count(t, 'bills');
    for (const r of await everyForm('POST', '/api/v1/bill/create', { amount, shop_id: m.shopId })) expectClientError(r);
    expect(await count(t, 'bills')).toBe(before);
  });

  it.each(BAD_VALUES)('bill/create with a shop_id that is %s: 4xx JSON, no bill stored', async (_n, shopId) => {
    const before = await count(t, 'bills');
    for (const r of await everyForm('POST', '/api/v1/bill/create', { amount: '10', shop_id: shopId })) expectClientError(r);
    expect(await count(t, 'bills')).toBe(before);
  });

  it.each(BAD_VALUES)('GET endpoints with an id, dates, per_page or cursor that is %s: 4xx JSON', async (_n, value) => {
    for (const url of ['/api/v1/bill/status', '/api/v1/bill/payments', '/api/v1/payment/status']) {
      for (const r of await everyForm('GET', url, { id: value })) expectClientError(r);
    }
    for (const field of ['start_date', 'finish_date', 'per_page', 'cursor']) {
      for (const r of await everyForm('GET', '/api/v1/bill/search', { [field]: value })) {
        // An empty value, or a JSON number JSON cannot carry (sent as null), counts as absent:
        // the default window; anything else is refused.
        if (value === '' || value === Infinity) expect([200, 422]).toContain(r.statusCode);
        else expectClientError(r);
      }
    }
  });

  it.each(BAD_VALUES.filter(([, v]) => typeof v !== 'boolean'))('toggle_activity with active that is %s: 4xx JSON and the flag is unchanged', async (_n, value) => {
    for (const r of await everyForm('POST', '/api/v1/bill/toggle_activity', { id: billId, active: value })) {
      // JSON cannot carry 1e309: JSON.stringify sends null, so active is missing: still a 4xx.
      expectClientError(r);
    }
    expect((await t.db.pool.query('SELECT active FROM bills WHERE id = $1', [billId])).rows[0].active).toBe(true);
  });

  it('a body of another content type is ignored: 422 naming the missing fields, nothing stored', async () => {
    const before = await count(t, 'bills');
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': 'text/plain' }, payload: `amount=10&shop_id=${m.shopId}` });
    expect(r.statusCode).toBe(422);
    expect(Object.keys(r.json().errors).sort()).toEqual(['amount', 'shop_id']);
    const x = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': 'application/xml' }, payload: '<amount>10</amount>' });
    expect(x.statusCode).toBe(422);
    expect(await count(t, 'bills')).toBe(before);
  });

  it('malformed JSON is 422, never 500', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': 'application/json' }, payload: '{"amount": 10,' });
    expectClientError(r);
    expect(r.statusCode).toBe(422);
  });

  it('a field sent twice (urlencoded or query) is 422 for that field, nothing stored', async () => {
    const before = await count(t, 'bills');
    const u = await t.app.inject({
      method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `amount=10&amount=20&shop_id=${m.shopId}`,
    });
    expect(u.statusCode).toBe(422);
    expect(u.json().errors).toHaveProperty('amount');
    const q = await t.app.inject({ method: 'GET', url: `/api/v1/bill/status?id=${billId}&id=${billId}`, headers: m.auth });
    expect(q.statusCode).toBe(422);
    expect(await count(t, 'bills')).toBe(before);
  });

  it('unknown extra fields are ignored', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '10', shop_id: m.shopId, extra: 'x', merchant_id: 'someone-else' } });
    expect(r.statusCode, r.body).toBe(200);
    expect((await t.db.pool.query('SELECT merchant_id FROM bills WHERE id = $1', [r.json().bill_id])).rows[0].merchant_id).toBe(m.merchantId);
  });
});
