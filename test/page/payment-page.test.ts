import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { md5Upper } from '../../src/lib/crypto.js';
import { negotiateLang } from '../../src/lib/i18n.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, DECLINED_CARD, SUCCESS_CARD } from '../factories/payment.js';

let t: TestApp;
let m: MerchantFixture;
const SUCCESS = 'http://shop.example:8080/ok';
const FAIL = 'http://shop.example:8080/fail';

beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  m = await createMerchant(t, { shop: { name: 'Coffee & Co', successUrl: SUCCESS, failUrl: FAIL } });
});
afterAll(async () => { await t.close(); });

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers: { accept: 'text/html', ...headers } });
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const postForm = (billId: string, form: Record<string, string>, headers: Record<string, string> = {}) => t.app.inject({
  method: 'POST', url: `/pay/${billId}`,
  headers: { accept: 'text/html,application/xhtml+xml', 'content-type': 'application/x-www-form-urlencoded', ...headers },
  payload: new URLSearchParams(form).toString(),
});
/** Post/redirect/get: the form POST answers 303 to the payment's page; this follows it. */
const follow = async (r: { statusCode: number; headers: Record<string, unknown> }) => {
  expect(r.statusCode).toBe(303);
  expect(String(r.headers.location)).toMatch(/^\/pay\/\w+\/payments\/\w+/);
  return get(String(r.headers.location));
};
const countPayments = async (billId: string) => (await t.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE bill_id = $1`, [billId])).rows[0].n;

describe('GET /pay/{bill_id}', () => {
  it('shows the shop, name, description, amount and currency, with labelled card fields and a CSRF token', async () => {
    const billId = await createBill(t, m, { amount: '1250.00', name: 'Order #77', description: 'Two cappuccinos' });
    const r = await get(`/pay/${billId}`);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/html');
    const h = r.body;
    expect(h).toContain('Coffee &#38; Co');
    expect(h).toContain('Order #77');
    expect(h).toContain('Two cappuccinos');
    expect(h).toContain('<span class="cur">RUB</span>\u00a0<span class="num">1,250.00</span>');
    expect(h).toContain('RUB');
    for (const f of ['card_number', 'card_expiry', 'card_cvc']) expect(h).toContain(`<label for="${f}">`);
    expect(csrfOf(h)).toMatch(/^\d+\.[A-Za-z0-9]{16}\.[\w-]{43}$/);
    expect(h).toContain('value="BANK_CARD"');
    expect(h).toContain('value="SBP"');
    expect(h).toContain('<svg'); // the SBP QR
  });

  it('sends security headers: CSP with nonces and frame-ancestors none, nosniff, no referrer, no caching', async () => {
    const billId = await createBill(t, m);
    const r = await get(`/pay/${billId}`);
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(r.body).toContain(`<script nonce="${nonce}">`);
    expect(csp).not.toContain('unsafe-inline');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['cache-control']).toBe('no-store');
  });

  it('escapes what the merchant wrote (no HTML injection through name or description)', async () => {
    const billId = await createBill(t, m, { name: '<script>alert(1)</script>', description: '"><img src=x onerror=alert(1)>' });
    const r = await get(`/pay/${billId}`);
    expect(r.body).not.toContain('<script>alert(1)');
    expect(r.body).not.toContain('<img src=x');
    expect(r.body).toContain('&#60;script&#62;alert(1)');
  });

  it('a USD bill shows the RUB amount to pay; the commission shows when the payer pays it', async () => {
    await t.db.pool.query(`INSERT INTO fx_rates (currency, rub_per_unit) VALUES ('USD', 90) ON CONFLICT (currency) DO UPDATE SET rub_per_unit = 90`);
    const mm = await createMerchant(t, { merchant: { paymentCardPercent: '3', paymentCardFixed: '0', paymentSbpPercent: '3', paymentSbpFixed: '0' } });
    const billId = await createBill(t, mm, { amount: '20.00', currencyIn: 'USD', payerPaysCommission: true });
    const h = (await get(`/pay/${billId}`)).body;
    expect(h).toContain('20.60'); // amount + 3% in USD
    expect(h).toContain('USD\u00a00.60'); // the commission line
    expect(h).toContain('RUB\u00a01,854.00'); // 20.60 * 90
    // The same money in Russian: 1 854,00 ₽ (issue 30 item 4: one format per language).
    const ru = (await get(`/pay/${billId}`, { 'accept-language': 'ru' })).body;
    expect(ru).toContain('1\u00a0854,00\u00a0₽');
    expect(ru).toContain('0,60\u00a0$');
  });

  it('a bill created with payment_method offers only that method', async () => {
    const billId = await createBill(t, m, { paymentMethod: 'SBP' });
    const h = (await get(`/pay/${billId}`)).body;
    expect(h).toContain('value="SBP"');
    expect(h).not.toContain('value="BANK_CARD"');
    expect(h).not.toContain('id="card_number"');
  });

  it('speaks Russian by Accept-Language, English otherwise', async () => {
    const billId = await createBill(t, m);
    const ru = await get(`/pay/${billId}`, { 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.8' });
    expect(ru.body).toContain('<html lang="ru">');
    expect(ru.body).toContain('Номер карты');
    const en = await get(`/pay/${billId}`, { 'accept-language': 'de-DE,en;q=0.5' });
    expect(en.body).toContain('<html lang="en">');
    expect(en.body).toContain('Card number');
    expect(negotiateLang('en;q=0.4, ru;q=0.8')).toBe('ru');
    expect(negotiateLang(undefined)).toBe('en');
  });

  it('clear pages for an unknown (404), inactive (403) and already paid bill', async () => {
    const unknown = await get('/pay/NoSuchBill9');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('Bill not found');
    const billId = await createBill(t, m);
    await t.db.pool.query(`UPDATE bills SET active = false WHERE id = $1`, [billId]);
    const inactive = await get(`/pay/${billId}`);
    expect(inactive.statusCode).toBe(403);
    expect(inactive.body).toContain('This bill is not active');
    expect(inactive.body).not.toContain('card_number');
    const paidId = await createBill(t, m);
    await t.db.pool.query(`UPDATE bills SET status = 'SUCCESS' WHERE id = $1`, [paidId]);
    const paid = await get(`/pay/${paidId}`, { 'accept-language': 'ru' });
    expect(paid.body).toContain('Счёт уже оплачен');
    expect(paid.body).not.toContain('card_number');
  });
});

describe('GET /pay/{bill_id}/qr', () => {
  it('is a page with an SVG QR code of the payment page', async () => {
    const billId = await createBill(t, m, { amount: '99.90' });
    const r = await get(`/pay/${billId}/qr`);
    expect(r.statusCode).toBe(200);
    expect(r.body).toMatch(/<svg[^>]*viewBox/);
    expect(r.body).toContain(`href="http://pay.test/pay/${billId}"`);
    expect(r.body).toContain('99.90');
    expect((await get('/pay/Nope12345/qr')).statusCode).toBe(404);
  });
});

describe('POST /pay/{bill_id} as a browser form (no JavaScript needed)', () => {
  it('the success card lands on an auto-submitting POST form to the Success URL with the signed fields and a visible button', async () => {
    const billId = await createBill(t, m, { amount: '10.00', orderId: 'A-1', custom: 'x"y' });
    const page = await get(`/pay/${billId}`);
    const r = await follow(await postForm(billId, { _csrf: csrfOf(page.body), method: 'BANK_CARD', card_number: SUCCESS_CARD, card_expiry: '11/38', card_cvc: '321' }));
    expect(r.statusCode).toBe(200);
    const h = r.body;
    expect(h).toContain(`<form id="back" method="post" action="${SUCCESS}">`);
    expect(h).toContain('name="InvId" value="A-1"');
    expect(h).toContain('name="OutSum" value="10.00"');
    expect(h).toContain('name="CurrencyIn" value="RUB"');
    expect(h).toContain('name="custom" value="x&#34;y"');
    expect(h).toContain(`name="SignatureValue" value="${md5Upper(`10.00:A-1:${m.token}`)}"`);
    expect(h).toContain('<button class="btn" type="submit">');
    expect(String(r.headers['content-security-policy'])).toContain("form-action 'self' http://shop.example:8080");
  });

  it('the declined card comes back to the form with the reason and the Fail URL as a button (test/page/decline-on-form.test.ts)', async () => {
    const billId = await createBill(t, m);
    const page = await get(`/pay/${billId}`);
    const posted = await postForm(billId, { _csrf: csrfOf(page.body), method: 'BANK_CARD', card_number: DECLINED_CARD, card_expiry: '11/38', card_cvc: '321' });
    expect(posted.statusCode).toBe(303);
    const r = await get(String(posted.headers.location));
    expect(r.body).toContain(`action="${FAIL}"`);
    expect(r.body).toContain('data-testid="decline-reason"');
    // The NORMAL bill may be paid again; opened afresh, the page says the last attempt failed.
    const again = await get(`/pay/${billId}`);
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('The previous attempt did not go through');
    expect(again.body).toContain('id="card_number"');
  });

  it('with no Success URL set, a status page', async () => {
    const mm = await createMerchant(t);
    const billId = await createBill(t, mm);
    const page = await get(`/pay/${billId}`);
    const r = await follow(await postForm(billId, { _csrf: csrfOf(page.body), method: 'BANK_CARD', card_number: SUCCESS_CARD, card_expiry: '11/38', card_cvc: '321' }));
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('Payment received');
    expect(r.body).not.toContain('<form');
  });

  it('refuses a form without a valid CSRF token (403) and stores nothing', async () => {
    const billId = await createBill(t, m);
    const none = await postForm(billId, { method: 'BANK_CARD', card_number: SUCCESS_CARD, card_expiry: '11/38', card_cvc: '321' });
    expect(none.statusCode).toBe(403);
    expect(none.body).toContain('The form has expired');
    const other = await createBill(t, m);
    const tokenOfOther = csrfOf((await get(`/pay/${other}`)).body);
    const wrong = await postForm(billId, { _csrf: tokenOfOther, method: 'SBP' });
    expect(wrong.statusCode).toBe(403);
    expect(await countPayments(billId)).toBe(0);
  });

  it('a bad card re-renders the form with the field errors (422), in the payer\'s language, and stores nothing', async () => {
    const billId = await createBill(t, m);
    const page = await get(`/pay/${billId}`);
    const r = await postForm(billId, { _csrf: csrfOf(page.body), method: 'BANK_CARD', card_number: '4242424242424241', card_expiry: '11/38', card_cvc: '321', lang: 'ru' });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('Проверьте номер карты');
    expect(r.body).toContain('aria-invalid="true"');
    expect(r.body).not.toContain('4242424242424241');
    expect(await countPayments(billId)).toBe(0);
  });

  it('a form token is single-use: posting it again goes to the payment it opened; a fresh form on the finished bill gets the paid page', async () => {
    const billId = await createBill(t, m);
    const form = (token: string) => ({ _csrf: token, method: 'BANK_CARD', card_number: SUCCESS_CARD, card_expiry: '11/38', card_cvc: '321' });
    const token = csrfOf((await get(`/pay/${billId}`)).body);
    const first = await postForm(billId, form(token));
    expect(first.statusCode).toBe(303);
    const again = await postForm(billId, form(token));
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(first.headers.location);
    expect(await countPayments(billId)).toBe(1);
    // Reloading the payment's page shows the result again and charges nothing.
    expect((await follow(again)).body).toContain('data-status="SUCCESS"');
    expect((await follow(again)).body).toContain('data-status="SUCCESS"');
    const paid = await postForm(billId, form(csrfOf((await get(`/pay/${billId}`)).body) || token.replace(/^\d+/, String(Date.now()))));
    expect(paid.statusCode).toBe(403);
    expect(await countPayments(billId)).toBe(1);
  });
});
