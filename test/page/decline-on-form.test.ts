import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, DECLINED_CARD, payRequest, SUCCESS_CARD } from '../factories/payment.js';

/**
 * Issue 16 item 2: "A declined card keeps the payer on the form with the reason next to it."
 * The form POST of a declined card answers 303 to the form (`?declined=<payment id>`), which
 * shows the reason under the card number in the page's language; the FAIL postback still goes
 * out; the payer retries on the same bill; reloads charge nothing; JSON mode is unchanged; the
 * third decline of one payer hands them to the shop's Fail URL (docs/adr/0015-declined-card-stays-on-the-form.md).
 */
let t: TestApp;
let m: MerchantFixture;
const SUCCESS = 'http://shop.example:8080/ok';
const FAIL = 'http://shop.example:8080/fail';
const INSUFFICIENT = '4000000000009995';

beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  m = await createMerchant(t, { shop: { name: 'Coffee & Co', successUrl: SUCCESS, failUrl: FAIL, resultUrl: 'http://127.0.0.1:9/result' } });
});
afterAll(async () => { await t.close(); });

let ipSeq = 10;
/** Each test pays from its own address: the decline count is per payer address. */
const newPayer = () => `203.0.113.${ipSeq++}`;
const get = (url: string, ip: string) => t.app.inject({ method: 'GET', url, remoteAddress: ip, headers: { accept: 'text/html' } });
const post = (url: string, form: Record<string, string>, ip: string) => t.app.inject({
  method: 'POST', url, remoteAddress: ip,
  headers: { accept: 'text/html,application/xhtml+xml', 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(form).toString(),
});
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const rows = async (sql: string, v: unknown[]) => (await t.db.pool.query(sql, v)).rows;
const paymentsOf = (billId: string) => rows(`SELECT id, status::text, failure_reason FROM payments WHERE bill_id = $1 ORDER BY created_at, id`, [billId]);
const postbacksOf = async (billId: string) => (await rows(
  `SELECT e.payload FROM outbox_events e JOIN payments p ON p.id = e.aggregate_id WHERE e.kind = 'PAYMENT_POSTBACK' AND p.bill_id = $1 ORDER BY e.id`, [billId]))
  .map((r) => r.payload.fields.Status as string);
const billStatus = async (billId: string) => (await rows(`SELECT status::text FROM bills WHERE id = $1`, [billId]))[0].status as string;

/** Opens the form, pays with `card`, answers the POST's redirect. */
async function payWith(billId: string, card: string, ip: string, lang = 'en') {
  const form = await get(`/pay/${billId}?lang=${lang}`, ip);
  expect(form.statusCode).toBe(200);
  const r = await post(`/pay/${billId}`, { _csrf: csrfOf(form.body), lang, ...cardForm(card) }, ip);
  return { form, r, fields: { _csrf: csrfOf(form.body), lang, ...cardForm(card) } };
}

describe('a declined card keeps the payer on the form', () => {
  it('0002: 303 to the form, the reason under the card number, the FAIL postback queued, the Fail URL offered as a signed POST button', async () => {
    const ip = newPayer();
    const billId = await createBill(t, m, { amount: '42.00', orderId: 'D-1' });
    const { r } = await payWith(billId, DECLINED_CARD, ip);
    expect(r.statusCode).toBe(303);
    const [p] = await paymentsOf(billId);
    expect(p).toMatchObject({ status: 'FAIL', failure_reason: 'card_declined' });
    expect(r.headers.location).toBe(`/pay/${billId}?declined=${p.id}&lang=en`);

    const page = await get(String(r.headers.location), ip);
    expect(page.statusCode).toBe(200);
    const h = page.body;
    // The reason sits right after the card number input, tied to it for screen readers.
    expect(h).toMatch(/id="card_number"[^>]*aria-invalid="true" aria-describedby="card_number-decline">\s*<p class="err decline" id="card_number-decline" role="alert" data-testid="decline-reason" data-code="card_declined">Your bank declined this card\./);
    expect(h).toContain('data-testid="declined"');
    expect(h).not.toContain('The previous attempt did not go through');
    // A fresh single-use form: the payer can pay again at once.
    expect(csrfOf(h)).not.toBe('');
    // The way out is the spec's Fail URL redirect, signed like the postback.
    expect(h).toContain(`<form class="fail-back" method="post" action="${FAIL}">`);
    expect(h).toContain(`name="SignatureValue" value="${md5Upper(`0.00:D-1:${m.token}`)}"`);
    expect(String(page.headers['content-security-policy'])).toContain("form-action 'self' http://shop.example:8080");
    // Nothing of the card is echoed back.
    expect(h).not.toContain(DECLINED_CARD);

    expect(await billStatus(billId)).toBe('FAIL');
    expect(await postbacksOf(billId)).toEqual(['FAIL']);
  });

  it('9995 in Russian: "insufficient funds" in the page language', async () => {
    const ip = newPayer();
    const billId = await createBill(t, m);
    const { r } = await payWith(billId, INSUFFICIENT, ip, 'ru');
    expect(String(r.headers.location)).toMatch(new RegExp(`^/pay/${billId}\\?declined=\\w+&lang=ru$`));
    const page = await get(String(r.headers.location), ip);
    expect(page.body).toContain('<html lang="ru">');
    expect(page.body).toContain('data-code="insufficient_funds">На карте недостаточно средств. Попробуйте другую карту.</p>');
    expect(page.body).toContain('Вернуться в магазин без оплаты');
  });

  it('reload-safe: reloading the form and re-posting the used form charge nothing; a retry with 4242 pays the same bill', async () => {
    const ip = newPayer();
    const billId = await createBill(t, m, { amount: '55.00' });
    const { r, fields } = await payWith(billId, DECLINED_CARD, ip);
    const declinedAt = String(r.headers.location);
    for (let i = 0; i < 3; i++) expect((await get(declinedAt, ip)).statusCode).toBe(200);
    // The browser's "resubmit" of the first form: its token is spent, it lands on the same decline.
    const again = await post(`/pay/${billId}`, fields, ip);
    expect(again.statusCode).toBe(303);
    const via = await get(String(again.headers.location), ip);
    expect(via.statusCode).toBe(303);
    expect(via.headers.location).toBe(declinedAt);
    expect(await paymentsOf(billId)).toHaveLength(1);

    const form = await get(declinedAt, ip);
    const paid = await post(`/pay/${billId}`, { _csrf: csrfOf(form.body), lang: 'en', ...cardForm(SUCCESS_CARD) }, ip);
    expect(paid.statusCode).toBe(303);
    expect(String(paid.headers.location)).toMatch(new RegExp(`^/pay/${billId}/payments/\\w+$`));
    const done = await get(String(paid.headers.location), ip);
    expect(done.body).toContain(`<form id="back" method="post" action="${SUCCESS}">`);
    // Reloading the success page and the old decline page charges nothing more.
    await get(String(paid.headers.location), ip);
    expect((await get(declinedAt, ip)).body).toContain('data-testid="paid"');
    expect((await paymentsOf(billId)).map((p) => p.status)).toEqual(['FAIL', 'SUCCESS']);
    expect(await billStatus(billId)).toBe('SUCCESS');
    expect(await postbacksOf(billId)).toEqual(['FAIL', 'SUCCESS']);
  });

  it('the third decline of one payer on a bill goes to the Fail URL POST as before; another payer still gets the form', async () => {
    const ip = newPayer();
    const billId = await createBill(t, m, { type: 'MULTI' });
    for (let i = 0; i < 2; i++) {
      const { r } = await payWith(billId, DECLINED_CARD, ip);
      expect(String(r.headers.location)).toContain('?declined=');
    }
    const { r } = await payWith(billId, DECLINED_CARD, ip);
    expect(String(r.headers.location)).toMatch(new RegExp(`^/pay/${billId}/payments/\\w+$`));
    const end = await get(String(r.headers.location), ip);
    expect(end.body).toContain(`action="${FAIL}"`);
    expect(end.body).toContain('data-status="FAIL"');
    const other = await payWith(billId, DECLINED_CARD, newPayer());
    expect(String(other.r.headers.location)).toContain('?declined=');
  });

  it('?declined= shows a reason only for a FAIL payment of this very bill', async () => {
    const ip = newPayer();
    const a = await createBill(t, m);
    const b = await createBill(t, m);
    await payWith(a, DECLINED_CARD, ip);
    const [failed] = await paymentsOf(a);
    const wrongBill = await get(`/pay/${b}?declined=${failed.id}`, ip);
    expect(wrongBill.statusCode).toBe(200);
    expect(wrongBill.body).not.toContain('data-testid="decline-reason"');
    expect((await get(`/pay/${a}?declined=${encodeURIComponent('<x>')}`, ip)).body).not.toContain('decline-reason');
    const paid = await payRequest(t, b, cardForm(SUCCESS_CARD));
    const multi = await createBill(t, m, { type: 'MULTI' });
    const p2 = await payRequest(t, multi, cardForm(SUCCESS_CARD));
    expect(paid.statusCode).toBe(200);
    const notFailed = await get(`/pay/${multi}?declined=${p2.json().payment_id}`, ip);
    expect(notFailed.statusCode).toBe(200);
    expect(notFailed.body).not.toContain('decline-reason');
  });

  it('the payer\'s fields come back filled from the declined payment (e-mail, phone, name, comment), never the card number or CVC; only for the address that paid', async () => {
    const ip = newPayer();
    const billId = await t.app.services.bills.create({ id: m.merchantId }, {
      amount: new Decimal('77.00'), shopId: m.shopId, payerEmail: 'prefill@shop.test', requestFields: ['email', 'phone', 'name', 'comment'],
    }).then((b) => b.id);
    const form = await get(`/pay/${billId}?lang=en`, ip);
    expect(form.body).toContain('value="prefill@shop.test"');
    const typed = { payer_email: 'anna@payer.test', payer_phone: '+7 (916) 123-45-67', payer_name: 'Anna "Q" <Petrova>', payer_comment: 'Room 12 & door B' };
    const r = await post(`/pay/${billId}`, { _csrf: csrfOf(form.body), lang: 'en', ...cardForm(DECLINED_CARD), card_cvc: '987', ...typed }, ip);
    expect(r.statusCode).toBe(303);
    expect(String(r.headers.location)).toContain('?declined=');

    const page = await get(String(r.headers.location), ip);
    expect(page.statusCode).toBe(200);
    const h = page.body;
    const valueOf = (name: string) => new RegExp(`<input id="${name}" name="${name}"[^>]* value="([^"]*)"`).exec(h)?.[1];
    expect(valueOf('payer_email')).toBe('anna@payer.test');
    // As stored: the phone normalised by the form's own rule.
    expect(valueOf('payer_phone')).toBe('+79161234567');
    expect(valueOf('payer_name')).toBe('Anna &#34;Q&#34; &#60;Petrova&#62;');
    expect(h).toMatch(/<textarea id="payer_comment" name="payer_comment"[^>]*>Room 12 &#38; door B<\/textarea>/);
    // The card fields stay empty: nothing of the card is written back.
    expect(h).toMatch(/<input id="card_number" name="card_number"(?![^>]*value=)[^>]*>/);
    expect(h).toMatch(/<input id="card_cvc" name="card_cvc"(?![^>]*value=)[^>]*>/);
    expect(h).not.toContain(DECLINED_CARD);
    // Not a bare substring: a random token of the page (the CSRF token, an id) may hold "987".
    expect(h).not.toMatch(/value="987"|>987</);

    // The same link from another address shows the reason, but not the payer's data.
    const other = await get(String(r.headers.location), newPayer());
    expect(other.body).toContain('data-testid="decline-reason"');
    expect(other.body).not.toContain('anna@payer.test');
    expect(other.body).not.toContain('+79161234567');
    expect(other.body).not.toContain('Petrova');
    expect(other.body).toContain('value="prefill@shop.test"');

    // The refilled form pays: the payment keeps what the payer sent.
    const paid = await post(`/pay/${billId}`, { _csrf: csrfOf(h), lang: 'en', ...cardForm(SUCCESS_CARD), payer_email: valueOf('payer_email')!, payer_phone: valueOf('payer_phone')!, payer_name: 'Anna', payer_comment: 'x' }, ip);
    expect(paid.statusCode).toBe(303);
    expect((await paymentsOf(billId)).map((p) => p.status)).toEqual(['FAIL', 'SUCCESS']);
  });

  it('JSON mode answers a decline as before: {payment_id, status: FAIL, redirect: {url: Fail URL, fields}}', async () => {
    const billId = await createBill(t, m, { orderId: 'J-1' });
    const r = await payRequest(t, billId, cardForm(DECLINED_CARD));
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(Object.keys(body).sort()).toEqual(['payment_id', 'redirect', 'status']);
    expect(body.status).toBe('FAIL');
    expect(body.redirect).toEqual({ url: FAIL, fields: { InvId: 'J-1', OutSum: '0.00', CurrencyIn: 'RUB', custom: '', SignatureValue: md5Upper(`0.00:J-1:${m.token}`) } });
    const polled = await t.app.inject({ method: 'GET', url: `/pay/${billId}/payments/${body.payment_id}`, headers: { accept: 'application/json' } });
    expect(polled.json()).toEqual(body);
  });

  it('a 3-D Secure failed on the bank page also comes back to the form, with the bank\'s reason', async () => {
    const ip = newPayer();
    const billId = await createBill(t, m);
    const { r } = await payWith(billId, '4000002760003184', ip);
    const wait = String(r.headers.location);
    const id = /payments\/(\w+)/.exec(wait)![1]!;
    const bank = await get(`/sandbox/3ds/${id}`, ip);
    await post(`/sandbox/3ds/${id}`, { _csrf: csrfOf(bank.body), decision: 'fail' }, ip);
    const end = await get(wait, ip);
    expect(end.statusCode).toBe(303);
    expect(end.headers.location).toBe(`/pay/${billId}?declined=${id}&lang=en`);
    const page = await get(String(end.headers.location), ip);
    expect(page.body).toContain('data-code="payer_declined">The payment was cancelled at the bank.');
  });
});
