import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, expect422, insertPayment } from './support.js';

let t: TestApp;
let m: MerchantFixture;
let other: MerchantFixture;
let secondShop: string;
const DAY = 86400_000;

// Bills of merchant m at known instants (UTC); the service zone is Europe/Moscow (UTC+3).
const bills: { id: string; at: string }[] = [];
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  other = await createMerchant(t);
  secondShop = (await t.app.services.shops.create(m.merchantId, { name: 'Second' })).id;
  const instants = [
    '2026-03-01 20:59:59+00', // 2026-03-01 23:59:59 Moscow
    '2026-03-01 21:00:00+00', // 2026-03-02 00:00:00 Moscow
    '2026-03-02 12:00:00+00',
    '2026-03-02 20:59:59+00', // 2026-03-02 23:59:59 Moscow
    '2026-03-02 21:00:00+00', // 2026-03-03 00:00:00 Moscow
  ];
  for (const at of instants) {
    const id = await createBill(t, m);
    await t.db.pool.query('UPDATE bills SET created_at = $2 WHERE id = $1', [id, at]);
    bills.push({ id, at });
  }
  await createBill(t, other); // never seen by m
});
afterAll(async () => { await t.close(); });

const get = (url: string, auth = m.auth) => t.app.inject({ method: 'GET', url, headers: auth });
const ids = (body: { data: { id: string }[] }) => body.data.map((b) => b.id);

describe('bill/search dates', () => {
  it('a date alone covers its whole day in the service time zone', async () => {
    const r = await get('/api/v1/bill/search?start_date=2026-03-02&finish_date=2026-03-02');
    expect(r.statusCode, r.body).toBe(200);
    expect(ids(r.json())).toEqual([bills[3]!.id, bills[2]!.id, bills[1]!.id]);
  });

  it('date-times bound the window to the second, both ends included', async () => {
    const r = await get('/api/v1/bill/search?start_date=2026-03-02%2015:00:00&finish_date=2026-03-02%2023:59:59');
    expect(ids(r.json())).toEqual([bills[3]!.id, bills[2]!.id]);
  });

  it('answers data newest first with the page shape: data, links, meta, success', async () => {
    const r = await get('/api/v1/bill/search?start_date=2026-03-01&finish_date=2026-03-03');
    const body = r.json();
    expect(ids(body)).toEqual([...bills].reverse().map((b) => b.id));
    expect(body.success).toBe(true);
    expect(body.links).toEqual({ prev: null, next: null });
    expect(body.meta).toEqual({ path: 'http://pay.test/api/v1/bill/search', per_page: 15, next_cursor: null, prev_cursor: null });
    expect(Object.keys(body.data[0]).sort()).toEqual(['active', 'amount', 'created_at', 'currency_in', 'expires_at', 'id', 'order_id', 'status', 'ttl', 'type']);
    expect(body.data[0].created_at).toBe('2026-03-03 00:00:00');
  });

  it('without dates it covers the last 30 days', async () => {
    const recent = await createBill(t, m);
    const old = await createBill(t, m);
    await t.db.pool.query('UPDATE bills SET created_at = $2 WHERE id = $1', [old, new Date(Date.now() - 31 * DAY)]);
    const got = ids((await get('/api/v1/bill/search')).json());
    expect(got).toContain(recent);
    expect(got).not.toContain(old);
    expect(got).not.toContain(bills[0]!.id);
  });

  it('filters by shop_id', async () => {
    const inSecond = await createBill(t, m, { shop_id: secondShop });
    const got = ids((await get(`/api/v1/bill/search?shop_id=${secondShop}`)).json());
    expect(got).toEqual([inSecond]);
  });

  it('merchant B never sees merchant A\'s bills', async () => {
    const got = ids((await get('/api/v1/bill/search?start_date=2026-03-01&finish_date=2026-03-03', other.auth)).json());
    expect(got).toEqual([]);
  });

  it.each([
    ['start_date', '2026-13-01'], ['start_date', '01.03.2026'], ['finish_date', '2026-02-30'], ['finish_date', "2026-03-01' OR 1=1"],
    ['start_date', '2026-03-01 25:00:00'],
  ])('a malformed %s (%s) is 422 naming it', async (field, value) => {
    expect422(await get(`/api/v1/bill/search?${field}=${encodeURIComponent(value)}`), field);
  });

  it('a finish_date before start_date is 422', async () => {
    expect422(await get('/api/v1/bill/search?start_date=2026-03-05&finish_date=2026-03-01'), 'finish_date');
  });
});

describe('bill/search pagination', () => {
  const window = 'start_date=2026-03-01&finish_date=2026-03-03';

  it('walks every bill exactly once with next cursors, and back with prev cursors', async () => {
    const all = [...bills].reverse().map((b) => b.id);
    const p1 = (await get(`/api/v1/bill/search?${window}&per_page=2`)).json();
    expect(ids(p1)).toEqual(all.slice(0, 2));
    expect(p1.meta.prev_cursor).toBeNull();
    expect(p1.meta.per_page).toBe(2);
    expect(p1.links.next).toBe(`http://pay.test/api/v1/bill/search?start_date=2026-03-01&finish_date=2026-03-03&per_page=2&cursor=${p1.meta.next_cursor}`);
    const p2 = (await get(`/api/v1/bill/search?${window}&per_page=2&cursor=${p1.meta.next_cursor}`)).json();
    expect(ids(p2)).toEqual(all.slice(2, 4));
    const p3 = (await get(p2.links.next.replace('http://pay.test', ''))).json();
    expect(ids(p3)).toEqual(all.slice(4));
    expect(p3.meta.next_cursor).toBeNull();
    expect(p3.links.next).toBeNull();
    const back = (await get(`/api/v1/bill/search?${window}&per_page=2&cursor=${p3.meta.prev_cursor}`)).json();
    expect(ids(back)).toEqual(all.slice(2, 4));
    const first = (await get(`/api/v1/bill/search?${window}&per_page=2&cursor=${back.meta.prev_cursor}`)).json();
    expect(ids(first)).toEqual(all.slice(0, 2));
    expect(first.meta.prev_cursor).toBeNull();
  });

  it('bills with the same created_at are split across pages without loss or repeat (id breaks ties)', async () => {
    const shop = (await t.app.services.shops.create(m.merchantId, { name: 'Ties' })).id;
    const same: string[] = [];
    for (let i = 0; i < 5; i++) same.push(await createBill(t, m, { shop_id: shop }));
    await t.db.pool.query(`UPDATE bills SET created_at = '2026-03-10 10:00:00+00' WHERE shop_id = $1`, [shop]);
    const seen: string[] = [];
    let url = `/api/v1/bill/search?start_date=2026-03-10&finish_date=2026-03-10&shop_id=${shop}&per_page=2`;
    for (let guard = 0; guard < 10; guard++) {
      const body = (await get(url)).json();
      seen.push(...ids(body));
      if (!body.links.next) break;
      url = body.links.next.replace('http://pay.test', '');
    }
    expect(seen.sort()).toEqual([...same].sort());
  });

  it('per_page defaults to 15, accepts 1000, and above 1000 (or 0, or text) is 422', async () => {
    expect((await get('/api/v1/bill/search')).json().meta.per_page).toBe(15);
    expect((await get('/api/v1/bill/search?per_page=1000')).json().meta.per_page).toBe(1000);
    expect422(await get('/api/v1/bill/search?per_page=1001'), 'per_page');
    expect422(await get('/api/v1/bill/search?per_page=0'), 'per_page');
    expect422(await get('/api/v1/bill/search?per_page=ten'), 'per_page');
  });

  it('a malformed cursor is 422 with errors.cursor', async () => {
    for (const c of ['%%%', 'bm9wZQ', Buffer.from('{"t":"x","i":"y","n":1}').toString('base64url'), 'a'.repeat(600)]) {
      expect422(await get(`/api/v1/bill/search?cursor=${encodeURIComponent(c)}`), 'cursor');
    }
  });

  it('accepts the search parameters as a JSON body on GET', async () => {
    const r = await t.app.inject({
      method: 'GET', url: '/api/v1/bill/search', headers: { ...m.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ start_date: '2026-03-02', finish_date: '2026-03-02', per_page: 1 }),
    });
    expect(r.statusCode, r.body).toBe(200);
    expect(ids(r.json())).toEqual([bills[3]!.id]);
  });
});

describe('GET /api/v1/payment/search', () => {
  it("lists the merchant's payments in the window, newest first, with the payment fields", async () => {
    const billId = await createBill(t, m);
    const p1 = await insertPayment(t, m, billId, { createdAt: new Date('2026-04-01T10:00:00Z'), status: 'FAIL' });
    const p2 = await insertPayment(t, m, billId, { createdAt: new Date('2026-04-01T11:00:00Z') });
    await insertPayment(t, m, billId, { createdAt: new Date('2026-04-05T11:00:00Z') });
    const ob = await createBill(t, other);
    await insertPayment(t, other, ob, { createdAt: new Date('2026-04-01T10:30:00Z') });
    const r = await get('/api/v1/payment/search?start_date=2026-04-01&finish_date=2026-04-01');
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(ids(body)).toEqual([p2, p1]);
    expect(body.data[0]).toMatchObject({ bill_id: billId, status: 'SUCCESS', amount: 100, created_at: '2026-04-01 14:00:00', account_currency_code: 'RUB' });
    expect(body.meta.path).toBe('http://pay.test/api/v1/payment/search');
    const page = (await get('/api/v1/payment/search?start_date=2026-04-01&finish_date=2026-04-01&per_page=1')).json();
    expect(ids(page)).toEqual([p2]);
    expect(ids((await get(page.links.next.replace('http://pay.test', ''))).json())).toEqual([p1]);
  });

  it('filters by shop_id and refuses bad parameters with 422', async () => {
    const billId = await createBill(t, m, { shop_id: secondShop });
    const p = await insertPayment(t, m, billId);
    await t.db.pool.query('UPDATE payments SET shop_id = $2 WHERE id = $1', [p, secondShop]);
    expect(ids((await get(`/api/v1/payment/search?shop_id=${secondShop}`)).json())).toEqual([p]);
    expect422(await get('/api/v1/payment/search?per_page=5000'), 'per_page');
    expect422(await get('/api/v1/payment/search?start_date=yesterday'), 'start_date');
  });
});
