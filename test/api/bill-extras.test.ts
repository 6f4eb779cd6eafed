import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, DECLINED_CARD, payRequest } from '../factories/payment.js';
import { expandBrackets } from '../../src/lib/brackets.js';
import { count, expect422, expectKeyed, multipart } from './support.js';

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t, { shop: { successUrl: 'http://127.0.0.1:9/shop-ok', failUrl: 'http://127.0.0.1:9/shop-fail' } });
});
afterAll(async () => { await t.close(); });

const form = (fields: Array<[string, string]>) => ({
  headers: { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString(),
});

async function create(payload: Record<string, unknown>): Promise<string> {
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '100.00', shop_id: m.shopId, ...payload } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
}

const billRow = async (id: string) => (await t.db.pool.query('SELECT * FROM bills WHERE id = $1', [id])).rows[0];

describe('bracket notation', () => {
  it('nests items[0][name], request_fields[] and request_fields[email] keys, and ignores prototype keys', () => {
    const out = expandBrackets({
      'items[0][name]': 'Tea', 'items[0][price]': '10', 'items[1][name]': 'Cup', 'request_fields[]': ['email', 'phone'],
      'flags[email]': '1', '__proto__[x]': '1', 'a[constructor][y]': '1', plain: 'x',
    });
    expect(out).toEqual({ items: { 0: { name: 'Tea', price: '10' }, 1: { name: 'Cup' } }, request_fields: ['email', 'phone'], flags: { email: '1' }, plain: 'x' });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('bill/create extras', () => {
  it('takes items and request_fields as urlencoded bracket fields', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', ...form([
      ['amount', '150.50'], ['shop_id', m.shopId], ['items[0][name]', 'Wool scarf'], ['items[0][price]', '140.5'], ['items[0][quantity]', '1'],
      ['items[1][name]', 'Delivery'], ['items[1][price]', '10'], ['items[1][quantity]', '1'],
      ['request_fields[]', 'phone'], ['request_fields[]', 'email'],
    ]) });
    expect(r.statusCode, r.body).toBe(200);
    const b = await billRow(r.json().bill_id);
    expect(b.items).toEqual([{ name: 'Wool scarf', price: '140.50', quantity: '1' }, { name: 'Delivery', price: '10.00', quantity: '1' }]);
    expect(b.request_fields).toEqual(['email', 'phone']);
  });

  it('takes request_fields[email]=1 in multipart, and a false flag leaves a field out', async () => {
    const mp = multipart({ amount: '100', shop_id: m.shopId, 'request_fields[email]': '1', 'request_fields[name]': '1', 'request_fields[phone]': '0' });
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, ...mp.headers }, payload: mp.payload });
    expect(r.statusCode, r.body).toBe(200);
    expect((await billRow(r.json().bill_id)).request_fields).toEqual(['email', 'name']);
  });

  it('takes request_fields and items as JSON arrays and objects, and bracket fields in the query string', async () => {
    const a = await create({ request_fields: ['comment'], items: [{ name: 'Tea', price: 99.9, quantity: 2 }] });
    expect((await billRow(a)).request_fields).toEqual(['comment']);
    expect((await billRow(a)).items).toEqual([{ name: 'Tea', price: '99.90', quantity: '2' }]);
    const b = await create({ request_fields: { phone: true, email: false } });
    expect((await billRow(b)).request_fields).toEqual(['phone']);
    const r = await t.app.inject({
      method: 'POST', url: `/api/v1/bill/create?${new URLSearchParams({ 'items[0][name]': 'Q', 'items[0][price]': '5', 'items[0][quantity]': '0.5' })}`,
      headers: m.auth, payload: { amount: '100', shop_id: m.shopId },
    });
    expect(r.statusCode, r.body).toBe(200);
    expect((await billRow(r.json().bill_id)).items).toEqual([{ name: 'Q', price: '5.00', quantity: '0.5' }]);
  });

  it.each([
    [{ items: [{ name: 'x', price: 'abc', quantity: 1 }] }, 'items'],
    [{ items: [{ name: 'x', price: '1.001', quantity: 1 }] }, 'items'],
    [{ items: [{ name: 'x', price: '1', quantity: 0 }] }, 'items'],
    [{ items: [{ price: '1', quantity: 1 }] }, 'items'],
    [{ items: 'scarf' }, 'items'],
    [{ request_fields: ['email', 'passport'] }, 'request_fields'],
    [{ request_fields: { email: 'maybe' } }, 'request_fields'],
    [{ ttl: 0 }, 'ttl'],
    [{ ttl: 'soon' }, 'ttl'],
    [{ locale: 'de' }, 'locale'],
    [{ payer_email: 'not-an-email' }, 'payer_email'],
    [{ success_url: 'javascript:alert(1)' }, 'success_url'],
    [{ fail_url: 'ftp://shop.example/fail' }, 'fail_url'],
    [{ return_url: 'javascript:alert(1)' }, 'return_url'],
  ])('refuses %j with a 422 on the field, and stores nothing', async (extra, field) => {
    const before = await count(t, 'bills');
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '100', shop_id: m.shopId, ...extra } });
    expect422(r, field);
    expect(await count(t, 'bills')).toBe(before);
  });

  it('bill/status carries ttl, order_id and expires_at (null without a ttl)', async () => {
    const id = await create({ ttl: 3600, order_id: 'ord-77' });
    const s = (await t.app.inject({ method: 'GET', url: `/api/v1/bill/status?id=${id}`, headers: m.auth })).json();
    expect(s).toMatchObject({ id, ttl: 3600, order_id: 'ord-77' });
    const b = await billRow(id);
    expect(Math.round((b.expires_at.getTime() - b.created_at.getTime()) / 1000)).toBe(3600);
    expect(s.expires_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const plain = (await t.app.inject({ method: 'GET', url: `/api/v1/bill/status?id=${await create({})}`, headers: m.auth })).json();
    expect(plain).toMatchObject({ ttl: null, order_id: null, expires_at: null });
  });

  it('an expired bill takes no payment: POST /pay is 403 api:error.bill_expired, nothing stored, the page says it expired', async () => {
    const id = await create({ ttl: 60, return_url: 'https://shop.example/cart' });
    await t.db.pool.query(`UPDATE bills SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const before = await count(t, 'payments');
    expectKeyed(await payRequest(t, id), 403, 'bill_expired');
    expect(await count(t, 'payments')).toBe(before);
    expect((await billRow(id)).status).toBe('NEW');
    const page = await t.app.inject({ method: 'GET', url: `/pay/${id}`, headers: { 'accept-language': 'en' } });
    expect(page.statusCode).toBe(403);
    expect(page.body).toContain('data-testid="expired"');
    expect(page.body).toContain('This bill has expired');
    expect(page.body).toContain('href="https://shop.example/cart"');
  });

  it('a bill past its ttl answers active: false in bill/status, bill/search and toggle_activity (issue 30)', async () => {
    const id = await create({ ttl: 60 });
    const live = await create({ ttl: 600 });
    await t.db.pool.query(`UPDATE bills SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const status = async (bill: string) => (await t.app.inject({ method: 'GET', url: `/api/v1/bill/status?id=${bill}`, headers: m.auth })).json();
    expect(await status(id)).toMatchObject({ id, status: 'NEW', active: false, ttl: 60 });
    expect(await status(live)).toMatchObject({ id: live, active: true });
    const search = (await t.app.inject({ method: 'GET', url: '/api/v1/bill/search?per_page=1000', headers: m.auth })).json();
    const active = Object.fromEntries(search.data.map((b: { id: string; active: boolean }) => [b.id, b.active]));
    expect([active[id], active[live]]).toEqual([false, true]);
    const toggled = await t.app.inject({ method: 'POST', url: '/api/v1/bill/toggle_activity', headers: m.auth, payload: { id, active: 1 } });
    expect(toggled.statusCode, toggled.body).toBe(200);
    expect(toggled.json()).toMatchObject({ id, active: false, success: true });
  });

  it('a bill within its ttl is paid as usual', async () => {
    const id = await create({ ttl: 600 });
    const r = await payRequest(t, id);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().status).toBe('SUCCESS');
  });

  it("success_url and fail_url override the shop's for the customer redirect", async () => {
    const ok = await create({ success_url: 'http://127.0.0.1:9/bill-ok', fail_url: 'http://127.0.0.1:9/bill-fail' });
    expect((await payRequest(t, ok)).json().redirect.url).toBe('http://127.0.0.1:9/bill-ok');
    const bad = await create({ success_url: 'http://127.0.0.1:9/bill-ok', fail_url: 'http://127.0.0.1:9/bill-fail' });
    expect((await payRequest(t, bad, cardForm(DECLINED_CARD))).json().redirect.url).toBe('http://127.0.0.1:9/bill-fail');
    const shops = await create({});
    expect((await payRequest(t, shops)).json().redirect.url).toBe('http://127.0.0.1:9/shop-ok');
  });

  it('locale sets the page language unless ?lang= is given', async () => {
    const id = await create({ locale: 'ru' });
    const ru = await t.app.inject({ method: 'GET', url: `/pay/${id}`, headers: { 'accept-language': 'en-US' } });
    expect(ru.body).toContain('<html lang="ru">');
    const en = await t.app.inject({ method: 'GET', url: `/pay/${id}?lang=en`, headers: { 'accept-language': 'ru' } });
    expect(en.body).toContain('<html lang="en">');
    const none = await t.app.inject({ method: 'GET', url: `/pay/${await create({})}`, headers: { 'accept-language': 'en-US' } });
    expect(none.body).toContain('<html lang="en">');
  });

  it('the page shows the items, the return link and the payer fields asked for, e-mail prefilled', async () => {
    const id = await create({
      payer_email: 'buyer@example.test', request_fields: ['email', 'phone'], return_url: 'https://shop.example/cart',
      items: [{ name: 'Wool <scarf>', price: '45.00', quantity: 2 }, { name: 'Delivery', price: '10', quantity: 1 }],
    });
    const page = (await t.app.inject({ method: 'GET', url: `/pay/${id}`, headers: { 'accept-language': 'en' } })).body;
    expect(page).toContain('data-testid="items"');
    expect(page).toContain('Wool &#60;scarf&#62;');
    expect(page).toContain('RUB\u00a090.00');
    expect(page).toMatch(/name="payer_email"[^>]*value="buyer@example.test"[^>]*required/);
    expect(page).toMatch(/name="payer_phone"[^>]*required/);
    expect(page).not.toContain('name="payer_name"');
    expect(page).toContain('href="https://shop.example/cart"');
  });

  it('the payer must fill the requested fields; they are stored on the payment and read back', async () => {
    const id = await create({ request_fields: ['email', 'phone', 'name', 'comment'] });
    const before = await count(t, 'payments');
    const missing = await payRequest(t, id, { ...cardForm(), payer_email: 'bad' });
    expect(missing.statusCode).toBe(422);
    expect(Object.keys(missing.json().errors).sort()).toEqual(['payer_comment', 'payer_email', 'payer_name', 'payer_phone']);
    expect(await count(t, 'payments')).toBe(before);
    const r = await payRequest(t, id, { ...cardForm(), payer_email: 'buyer@example.test', payer_phone: '+7 (900) 123-45-67', payer_name: 'Anna', payer_comment: 'Ring twice' });
    expect(r.statusCode, r.body).toBe(200);
    const p = (await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${r.json().payment_id}`, headers: m.auth })).json();
    expect(p).toMatchObject({ payer_email: 'buyer@example.test', payer_phone: '+79001234567', payer_name: 'Anna', payer_comment: 'Ring twice' });
  });

  it('payment objects carry error_code/error_message for a declined card, and null payer fields and account_bank when absent', async () => {
    const id = await create({});
    const r = await payRequest(t, id, cardForm(DECLINED_CARD));
    const p = (await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${r.json().payment_id}`, headers: m.auth })).json();
    expect(p).toMatchObject({ status: 'FAIL', error_code: 'card_declined', error_message: 'The card was declined by the issuer.',
      account_bank: null, payer_email: null, payer_phone: null, payer_name: null, payer_comment: null });
    const list = (await t.app.inject({ method: 'GET', url: `/api/v1/bill/payments?id=${id}`, headers: m.auth })).json();
    expect(list.data[0]).toMatchObject({ error_code: 'card_declined' });
    const ok = await payRequest(t, id);
    const p2 = (await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${ok.json().payment_id}`, headers: m.auth })).json();
    expect(p2).toMatchObject({ status: 'SUCCESS', error_code: null, error_message: null });
  });

  it('the payer form shows a missing required field next to it (HTML, 422)', async () => {
    const id = await create({ request_fields: ['phone'] });
    const pg = await t.app.inject({ method: 'GET', url: `/pay/${id}`, headers: { 'accept-language': 'en' } });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(pg.body)![1]!;
    const r = await t.app.inject({
      method: 'POST', url: `/pay/${id}`, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ ...cardForm(), _csrf: csrf, lang: 'en' }).toString(),
    });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('Enter your phone number.');
  });

  it('payer_email alone is stored on the payment when the payer leaves it as prefilled', async () => {
    const id = await create({ payer_email: 'pre@example.test' });
    const r = await payRequest(t, id);
    const row = (await t.db.pool.query('SELECT payer_email FROM payments WHERE id = $1', [r.json().payment_id])).rows[0];
    expect(row.payer_email).toBe('pre@example.test');
  });

  it('custom sent as a JSON object is kept as its JSON text and given back as such in the redirect', async () => {
    const id = await create({ custom: { user_id: 1, language: 'ru' } });
    expect((await billRow(id)).custom).toBe('{"user_id":1,"language":"ru"}');
    const r = await payRequest(t, id);
    expect(r.json().redirect.fields.custom).toBe('{"user_id":1,"language":"ru"}');
    const text = await create({ custom: '{"a":1}' });
    expect((await billRow(text)).custom).toBe('{"a":1}');
  });
});
