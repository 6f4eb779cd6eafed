import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxConnector, SANDBOX_CAPABILITIES } from '../../src/domain/providers/connectors/sandbox/index.js';
import type { CreatePayment, PaymentOutcome } from '../../src/domain/providers/connector.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payRequest } from '../factories/payment.js';

/** The payment page with the payer's actions (brief P item 3), over HTTP without a browser. */
let t: TestApp;
let m: MerchantFixture;
const SUCCESS = 'http://shop.example:8080/ok';
const FAIL = 'http://shop.example:8080/fail';

beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000' });
  m = await createMerchant(t, { shop: { successUrl: SUCCESS, failUrl: FAIL } });
});
afterAll(async () => { await t.close(); });

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers: { accept: 'text/html', ...headers } });
const getJson = (url: string) => t.app.inject({ method: 'GET', url, headers: { accept: 'application/json' } });
const post = (url: string, form: Record<string, string>) => t.app.inject({
  method: 'POST', url, headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString(),
});
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];
const credits = async (id: string) => (await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [id])).n as number;

describe('JSON mode', () => {
  it('GET /pay/{bill}/payments/{id} answers {payment_id, status, action} while PROCESS and {payment_id, status, redirect} once final', async () => {
    const billId = await createBill(t, m, { amount: '40.00', orderId: 'o-3ds' });
    const r = await payRequest(t, billId, cardForm('4000002760003184'));
    const id = r.json().payment_id;
    const url = `/pay/${billId}/payments/${id}`;
    expect((await getJson(url)).json()).toEqual({ payment_id: id, status: 'PROCESS', action: { type: '3ds', url: `/sandbox/3ds/${id}` } });
    const bank = await get(`/sandbox/3ds/${id}`);
    expect(bank.statusCode).toBe(200);
    expect(bank.body).toContain('RUB\u00a040.00');
    const back = await post(`/sandbox/3ds/${id}`, { _csrf: csrfOf(bank.body), decision: 'confirm' });
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe(url);
    const done = (await getJson(url)).json();
    expect(done).toMatchObject({ payment_id: id, status: 'SUCCESS', redirect: { url: SUCCESS, fields: { InvId: 'o-3ds', OutSum: '40.00' } } });
    expect(done.action).toBeUndefined();
    // The bank page answered once: a second decision changes nothing.
    expect((await post(`/sandbox/3ds/${id}`, { _csrf: csrfOf(bank.body), decision: 'fail' })).statusCode).toBe(409);
    expect((await getJson(url)).json().status).toBe('SUCCESS');
    expect(await credits(id)).toBe(1);
    // Another bill's path or an unknown payment: 404.
    expect((await getJson(`/pay/${await createBill(t, m)}/payments/${id}`)).statusCode).toBe(404);
    expect((await getJson(`/pay/${billId}/payments/nosuchpayment001`)).statusCode).toBe(404);
  });
});

describe('HTML: post/redirect/get and the waiting page', () => {
  it('the same form posted twice at once opens one payment; both answers go to it', async () => {
    const billId = await createBill(t, m, { amount: '12.00' });
    const token = csrfOf((await get(`/pay/${billId}`)).body);
    const form = { _csrf: token, method: 'BANK_CARD', card_number: '4000002760003184', card_expiry: '11/38', card_cvc: '123' };
    const [a, b] = await Promise.all([post(`/pay/${billId}`, form), post(`/pay/${billId}`, form)]);
    expect([a.statusCode, b.statusCode]).toEqual([303, 303]);
    expect(a.headers.location).toBe(b.headers.location);
    expect((await one(`SELECT count(*)::int AS n FROM payments WHERE bill_id = $1`, [billId])).n).toBe(1);
  });

  it('3DS failed: the form POST answers 303 to the waiting page with the bank link; Fail on the bank page ends FAIL, back on the form with the reason and the Fail URL POST button', async () => {
    const billId = await createBill(t, m, { amount: '25.00' });
    const form = await get(`/pay/${billId}`);
    const r = await post(`/pay/${billId}`, { _csrf: csrfOf(form.body), method: 'BANK_CARD', card_number: '4000002760003184', card_expiry: '11/38', card_cvc: '123' });
    expect(r.statusCode).toBe(303);
    const wait = await get(String(r.headers.location));
    expect(wait.body).toContain('data-testid="waiting"');
    expect(wait.body).toContain('data-action="3ds"');
    const id = /payments\/(\w+)/.exec(String(r.headers.location))![1]!;
    expect(wait.body).toContain(`href="/sandbox/3ds/${id}?lang=en"`);
    // Reloading the waiting page and re-posting the form open nothing new.
    await get(String(r.headers.location));
    expect((await post(`/pay/${billId}`, { _csrf: csrfOf(form.body), method: 'BANK_CARD', card_number: '4000002760003184', card_expiry: '11/38', card_cvc: '123' })).headers.location).toBe(r.headers.location);
    expect((await one(`SELECT count(*)::int AS n FROM payments WHERE bill_id = $1`, [billId])).n).toBe(1);
    // Opening the bill's link again shows the waiting payment, not a new form.
    const reopened = await get(`/pay/${billId}`);
    expect(reopened.statusCode).toBe(303);
    expect(reopened.headers.location).toBe(r.headers.location);
    const bank = await get(`/sandbox/3ds/${id}`);
    await post(`/sandbox/3ds/${id}`, { _csrf: csrfOf(bank.body), decision: 'fail' });
    const back = await get(String(r.headers.location));
    expect(back.statusCode).toBe(303);
    const end = await get(String(back.headers.location));
    expect(end.body).toContain('data-testid="decline-reason"');
    expect(end.body).toContain(`action="${FAIL}"`);
  });

  it('SBP: the waiting page shows the QR code and bank-app links; confirming another amount on the sandbox bank page makes it UNDERPAID', async () => {
    const billId = await createBill(t, m, { amount: '300.00', paymentMethod: 'SBP' });
    const form = await get(`/pay/${billId}`);
    const r = await post(`/pay/${billId}`, { _csrf: csrfOf(form.body), method: 'SBP' });
    expect(r.statusCode).toBe(303);
    const id = /payments\/(\w+)/.exec(String(r.headers.location))![1]!;
    const wait = await get(String(r.headers.location));
    expect(wait.body).toContain('data-action="sbp_qr"');
    expect(wait.body).toMatch(/data-testid="sbp-qr"><svg/);
    expect(wait.body).toContain(`href="/sandbox/sbp/${id}?lang=en"`);
    const bank = await get(`/sandbox/sbp/${id}`);
    expect(bank.body).toContain('value="300.00"');
    // A bad amount: 422, nothing changes.
    expect((await post(`/sandbox/sbp/${id}`, { _csrf: csrfOf(bank.body), decision: 'confirm', amount: '-1' })).statusCode).toBe(422);
    // More than an amount column holds (99,999,999.99) is bad input too, never a 500.
    expect((await post(`/sandbox/sbp/${id}`, { _csrf: csrfOf(bank.body), decision: 'confirm', amount: '9999999999.99' })).statusCode).toBe(422);
    // Not the amount format (docs/adr/0077-one-amount-format.md): an exponent, a sign, a bare dot, a third decimal.
    for (const amount of ['1e2', '1E2', '+10', '10.', '10.001']) {
      expect((await post(`/sandbox/sbp/${id}`, { _csrf: csrfOf(bank.body), decision: 'confirm', amount })).statusCode, amount).toBe(422);
    }
    expect((await getJson(String(r.headers.location))).json().status).toBe('PROCESS');
    await post(`/sandbox/sbp/${id}`, { _csrf: csrfOf(bank.body), decision: 'confirm', amount: '120.50' });
    const end = (await getJson(String(r.headers.location))).json();
    expect(end).toMatchObject({ status: 'UNDERPAID', redirect: { url: SUCCESS, fields: { OutSum: '120.50' } } });
    expect(await one(`SELECT status::text, amount_received::text FROM payments WHERE id = $1`, [id])).toEqual({ status: 'UNDERPAID', amount_received: '120.50' });
  });

  it('SBP cancelled on the bank page fails it; an expired QR fails it when asked', async () => {
    const billId = await createBill(t, m, { amount: '10.00' });
    const r = await payRequest(t, billId, { method: 'SBP' });
    const id = r.json().payment_id;
    const bank = await get(`/sandbox/sbp/${id}`);
    await post(`/sandbox/sbp/${id}`, { _csrf: csrfOf(bank.body), decision: 'fail' });
    expect((await getJson(`/pay/${billId}/payments/${id}`)).json().status).toBe('FAIL');
    const b2 = await createBill(t, m, { amount: '10.00' });
    const id2 = (await payRequest(t, b2, { method: 'SBP' })).json().payment_id;
    await t.db.pool.query(`UPDATE sandbox_operations SET created_at = now() - interval '2 hours' WHERE our_id = $1`, [id2]);
    expect((await get(`/sandbox/sbp/${id2}`)).statusCode).toBe(409);
    expect((await getJson(`/pay/${b2}/payments/${id2}`)).json().status).toBe('FAIL');
  });

  it('a connector that hosts its card form: the page shows no card fields, the form posts none, and the answer is its redirect action', async () => {
    t.app.services.connectors.override(new class extends SandboxConnector {
      override readonly capabilities = { ...SANDBOX_CAPABILITIES, hostsCardForm: true };
      override async createPayment(req: CreatePayment): Promise<PaymentOutcome> {
        if (req.card) throw new Error('card data reached a hosted-form connector');
        return { status: 'action', action: { type: 'redirect', url: `https://provider.example/checkout/${req.paymentId}?return=${encodeURIComponent(req.returnUrl ?? '')}` }, ref: 'h-1' };
      }
      // The payer has not finished on the provider's page yet.
      override async getPayment(q: { paymentId: string; ref: string | null }): Promise<PaymentOutcome> { return { status: 'pending', ref: q.ref ?? 'h-1' }; }
    }('hosted-prov'));
    await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('hosted-prov', 'sandbox', 'test') ON CONFLICT DO NOTHING`);
    const mm = await createMerchant(t, { shop: { successUrl: SUCCESS, failUrl: FAIL } });
    await t.db.pool.query(`UPDATE merchants SET routing = jsonb_set(routing, '{payment_card}', '["hosted-prov"]') WHERE id = $1`, [mm.merchantId]);
    const billId = await createBill(t, mm, { amount: '15.00', paymentMethod: 'BANK_CARD' });
    const form = await get(`/pay/${billId}`);
    expect(form.body).toContain('data-testid="card-hosted"');
    expect(form.body).not.toContain('id="card_number"');
    const r = await post(`/pay/${billId}`, { _csrf: csrfOf(form.body), method: 'BANK_CARD' });
    expect(r.statusCode).toBe(303);
    const id = /payments\/(\w+)/.exec(String(r.headers.location))![1]!;
    const json = (await getJson(String(r.headers.location))).json();
    expect(json).toMatchObject({ status: 'PROCESS', action: { type: 'redirect' } });
    expect(json.action.url).toContain(encodeURIComponent(`http://pay.test/pay/${billId}/payments/${id}`));
    expect((await get(String(r.headers.location))).body).toContain('data-action="redirect"');
    expect(await one(`SELECT from_card FROM payments WHERE id = $1`, [id])).toEqual({ from_card: null });
  });
});
