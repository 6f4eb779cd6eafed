import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { count, expect422, expectKeyed, multipart } from './support.js';

let t: TestApp;
let m: MerchantFixture;
let other: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  other = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

const create = (payload: Record<string, unknown>, auth = m.auth) =>
  t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: auth, payload });

const billRow = async (id: string) =>
  (await t.db.pool.query('SELECT * FROM bills WHERE id = $1', [id])).rows[0];

describe('POST /api/v1/bill/create', () => {
  it('creates a bill and answers success "true", the page links and the bill id', async () => {
    const r = await create({ amount: '150.50', shop_id: m.shopId, order_id: 'ord-1', description: 'Tea', custom: 'c=1', name: 'Order 1' });
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(Object.keys(body).sort()).toEqual(['bill_id', 'link_page_url', 'link_url', 'success']);
    expect(body.success).toBe('true');
    expect(body.bill_id).toMatch(/^[0-9A-Za-z]{10}$/);
    expect(body.link_page_url).toBe(`http://pay.test/pay/${body.bill_id}`);
    expect(body.link_url).toBe(`http://pay.test/pay/${body.bill_id}/qr`);
    const b = await billRow(body.bill_id);
    expect(b).toMatchObject({
      merchant_id: m.merchantId, shop_id: m.shopId, order_id: 'ord-1', description: 'Tea', custom: 'c=1', name: 'Order 1',
      type: 'NORMAL', status: 'NEW', active: true, amount: '150.50', currency_in: 'RUB', payer_pays_commission: false, payment_method: null,
    });
  });

  it('accepts the amount as a JSON number, and every optional field in its accepted forms', async () => {
    const r = await create({ amount: 10.5, shop_id: m.shopId, type: 'multi', currency_in: 'rub', payer_pays_commission: true, payment_method: 'SBP', order_id: null });
    expect(r.statusCode, r.body).toBe(200);
    const b = await billRow(r.json().bill_id);
    expect(b).toMatchObject({ amount: '10.50', type: 'MULTI', currency_in: 'RUB', payer_pays_commission: true, payment_method: 'SBP', order_id: null });
  });

  it('accepts payer_pays_commission as 0/1 and type in any case', async () => {
    for (const [ppc, expected] of [['1', true], ['0', false], [1, true], ['false', false]] as const) {
      const r = await create({ amount: '1', shop_id: m.shopId, payer_pays_commission: ppc, type: 'MULTI' });
      expect(r.statusCode, r.body).toBe(200);
      expect((await billRow(r.json().bill_id)).payer_pays_commission).toBe(expected);
    }
  });

  it('accepts urlencoded, multipart and query-string forms', async () => {
    const u = await t.app.inject({
      method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `amount=12.34&shop_id=${m.shopId}&payer_pays_commission=1`,
    });
    expect(u.statusCode, u.body).toBe(200);
    expect((await billRow(u.json().bill_id)).amount).toBe('12.34');
    const mp = multipart({ amount: '56.78', shop_id: m.shopId });
    const mr = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, ...mp.headers }, payload: mp.payload });
    expect(mr.statusCode, mr.body).toBe(200);
    expect((await billRow(mr.json().bill_id)).amount).toBe('56.78');
    const q = await t.app.inject({ method: 'POST', url: `/api/v1/bill/create?amount=9.99&shop_id=${m.shopId}`, headers: m.auth });
    expect(q.statusCode, q.body).toBe(200);
    expect((await billRow(q.json().bill_id)).amount).toBe('9.99');
  });

  it('type defaults to normal; currency_in defaults to the shop default currency', async () => {
    const eurShop = await t.app.services.shops.create(m.merchantId, { name: 'EUR shop', defaultCurrency: 'EUR' });
    await t.db.pool.query(`INSERT INTO fx_rates (currency, rub_per_unit) VALUES ('EUR', 100) ON CONFLICT (currency) DO UPDATE SET rub_per_unit = 100`);
    const r = await create({ amount: '5', shop_id: eurShop.id });
    expect(r.statusCode, r.body).toBe(200);
    expect(await billRow(r.json().bill_id)).toMatchObject({ currency_in: 'EUR', type: 'NORMAL' });
    await t.db.pool.query(`DELETE FROM fx_rates WHERE currency = 'EUR'`);
  });

  it('a USD or EUR bill needs an operator rate: 403 api:error.rate-not-found without one, nothing stored', async () => {
    await t.db.pool.query(`DELETE FROM fx_rates`);
    const before = await count(t, 'bills');
    expectKeyed(await create({ amount: '5', shop_id: m.shopId, currency_in: 'USD' }), 403, 'rate-not-found');
    expectKeyed(await create({ amount: '5', shop_id: m.shopId, currency_in: 'EUR' }), 403, 'rate-not-found');
    expect(await count(t, 'bills')).toBe(before);
    await t.db.pool.query(`INSERT INTO fx_rates (currency, rub_per_unit) VALUES ('USD', 90.5)`);
    const ok = await create({ amount: '5', shop_id: m.shopId, currency_in: 'USD' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await billRow(ok.json().bill_id)).currency_in).toBe('USD');
  });

  it.each([
    ['zero', '0'], ['zero with decimals', '0.00'], ['above 99,999,999.99', '100000000'],
  ])('an amount in the format but %s is 403 api:error.invalid_amount, nothing stored', async (_n, amount) => {
    const before = await count(t, 'bills');
    expectKeyed(await create({ amount, shop_id: m.shopId }), 403, 'invalid_amount');
    expect(await count(t, 'bills')).toBe(before);
  });

  it.each([
    ['negative', '-1'], ['three decimals', '1.001'], ['huge exponent', '1e309'], ['negative zero point', '-0.01'],
  ])('an amount that is %s is not the amount format: 422 on the field naming it, nothing stored', async (_n, amount) => {
    const before = await count(t, 'bills');
    const r = await create({ amount, shop_id: m.shopId });
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().errors.amount[0]).toMatch(/digits with an optional dot and at most 2 decimals/);
    expect(await count(t, 'bills')).toBe(before);
  });

  it('the largest amount 99999999.99 and the smallest 0.01 are accepted', async () => {
    for (const amount of ['99999999.99', '0.01', '1.10']) {
      const r = await create({ amount, shop_id: m.shopId });
      expect(r.statusCode, r.body).toBe(200);
      expect((await billRow(r.json().bill_id)).amount).toBe(amount);
    }
  });

  it.each([
    ['missing', undefined], ['empty', ''], ['text', 'abc'], ['NaN', 'NaN'], ['Infinity', 'Infinity'],
    ['an array', ['1', '2']], ['an object', { a: 1 }], ['a boolean', true], ['SQL injection', "1; DROP TABLE bills"],
  ])('an amount that is %s is 422 with errors.amount, nothing stored', async (_n, amount) => {
    const before = await count(t, 'bills');
    expect422(await create({ amount, shop_id: m.shopId }), 'amount');
    expect(await count(t, 'bills')).toBe(before);
  });

  it('a missing shop_id is 422 with errors.shop_id', async () => {
    expect422(await create({ amount: '1' }), 'shop_id');
  });

  it.each([
    ['type', 'weird'], ['currency_in', 'GBP'], ['payment_method', 'CASH'], ['payer_pays_commission', '2'],
    ['order_id', 'x'.repeat(256)], ['description', 'x'.repeat(1001)],
  ])('a bad %s is 422 naming it', async (field, value) => {
    expect422(await create({ amount: '1', shop_id: m.shopId, [field]: value }), field);
  });

  it('an unknown shop is 403 api:error.shop_not_found', async () => {
    expectKeyed(await create({ amount: '1', shop_id: 'nope' }), 403, 'shop_not_found');
    expectKeyed(await create({ amount: '1', shop_id: "' OR 1=1 --" }), 403, 'shop_not_found');
  });

  it("another merchant's shop is 403 api:error.access_denied, nothing stored", async () => {
    const before = await count(t, 'bills');
    expectKeyed(await create({ amount: '1', shop_id: other.shopId }), 403, 'access_denied');
    expect(await count(t, 'bills')).toBe(before);
  });

  it('a disabled shop is 403 api:error.shop_not_enabled', async () => {
    const off = await t.app.services.shops.create(m.merchantId, { name: 'Off', enabled: false });
    expectKeyed(await create({ amount: '1', shop_id: off.id }), 403, 'shop_not_enabled');
  });

  it('20 concurrent creates give 20 distinct bills', async () => {
    const before = await count(t, 'bills');
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => create({ amount: `${i + 1}.00`, shop_id: m.shopId })));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(new Set(rs.map((r) => r.json().bill_id)).size).toBe(20);
    expect(await count(t, 'bills')).toBe(before + 20);
  });
});
