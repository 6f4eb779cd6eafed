import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { generate } from 'otplib';
import { CabinetClient, cabinetMerchant, signedIn } from './helpers.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { SANDBOX_INSUFFICIENT_CARD } from '../../src/domain/providers/connectors/sandbox/index.js';

/** Issue 30 item 4: what the cabinet says is what is true. */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const createBill = async (auth: Record<string, string>, shopId: string, extra: Record<string, unknown> = {}) => {
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: auth, payload: { amount: '100.00', shop_id: shopId, ...extra } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
};

describe('an expired bill', () => {
  it('says Expired in the bill list and on the bill page, with no activate button; a live one says Active', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const gone = await createBill(m.auth, m.shopId, { ttl: 60, order_id: 'gone-1' });
    const live = await createBill(m.auth, m.shopId, { ttl: 600, order_id: 'live-1' });
    await t.db.pool.query(`UPDATE bills SET expires_at = now() - interval '1 second' WHERE id = $1`, [gone]);
    const list = await c.get('/cabinet/bills');
    const rowOf = (id: string) => new RegExp(`<tr><td[^>]*><a href="/cabinet/bills/${id}">[\\s\\S]*?</tr>`).exec(list.body)?.[0] ?? '';
    expect(rowOf(gone)).toContain('>Expired<');
    expect(rowOf(live)).not.toContain('Expired');
    expect(rowOf(live)).toContain('>Yes<');
    const page = await c.get(`/cabinet/bills/${gone}`);
    expect(page.body).toContain('data-testid="bill-expired">Expired<');
    expect(page.body).not.toContain(`/bills/${gone}/toggle`);
    const livePage = await c.get(`/cabinet/bills/${live}`);
    expect(livePage.body).not.toContain('bill-expired');
    expect(livePage.body).toContain(`/bills/${live}/toggle`);
  });
});

describe('reloading the recovery codes', () => {
  it('lands on the security page saying two-factor is on and the codes were shown once (never a 404, never the codes again)', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const page = await c.get('/cabinet/security');
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.body)![1]!;
    const form = { _csrf: CabinetClient.csrfOf(page.body), code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) - 30 }) };
    const shown = await c.post('/cabinet/security/totp/enable', form, { referer: 'http://pay.test/cabinet/security' });
    expect(shown.statusCode).toBe(200);
    const code = /<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/.exec(shown.body)![1]!;
    // The reload resends the same form; the browser's Referer may be the page or the POST's own URL.
    for (const referer of ['http://pay.test/cabinet/security', 'http://pay.test/cabinet/security/totp/enable']) {
      const again = await c.post('/cabinet/security/totp/enable', form, { referer });
      expect(again.statusCode).toBe(303);
      const landed = await c.get(again.headers.location as string);
      expect(landed.statusCode).toBe(200);
      expect(landed.body).toContain('Your recovery codes were shown once');
      expect(landed.body).toContain('data-testid="totp-on"');
      expect(landed.body).not.toContain(code);
    }
  });
});

describe('cabinet search', () => {
  it('finds bills and payments by any part of an order id (without case), by bill id and by payment id; never another merchant\'s', async () => {
    const m = await cabinetMerchant(t);
    const other = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const a = await createBill(m.auth, m.shopId, { order_id: 'ORD-2026-0001' });
    const b = await createBill(m.auth, m.shopId, { order_id: 'ORD-2026-0002' });
    const s = await createBill(m.auth, m.shopId, { order_id: 'SHOP-77' });
    const theirs = await createBill(other.auth, other.shopId, { order_id: 'ORD-2026-0003' });
    const pay = await payRequest(t, b);
    expect(pay.statusCode, pay.body).toBe(200);
    const paymentId = pay.json().payment_id as string;
    const billsFound = async (q: string) => {
      const r = await c.get(`/cabinet/bills?q=${encodeURIComponent(q)}`);
      expect(r.statusCode).toBe(200);
      return [...r.body.matchAll(/href="\/cabinet\/bills\/([A-Za-z0-9]+)"><code>/g)].map((x) => x[1]!).sort();
    };
    expect(await billsFound('ORD-2026')).toEqual([a, b].sort());
    expect(await billsFound('ord-2026')).toEqual([a, b].sort());
    expect(await billsFound('2026-0002')).toEqual([b]);
    expect(await billsFound('p-7')).toEqual([s]);
    expect(await billsFound('SHOP-77')).toEqual([s]);
    expect(await billsFound(a)).toEqual([a]);
    expect(await billsFound(paymentId)).toEqual([b]);
    expect(await billsFound('%%%')).toEqual([]);
    expect(await billsFound('___')).toEqual([]);
    expect(await billsFound('0003')).toEqual([]);
    expect(await billsFound(theirs)).toEqual([]);
    const payments = await c.get('/cabinet/payments?q=2026-00');
    expect(payments.body).toContain(paymentId);
    expect((await c.get(`/cabinet/payments?q=${b}`)).body).toContain(paymentId);
    expect((await c.get('/cabinet/payments?q=SHOP')).body).not.toContain(paymentId);
  });
});

describe('a banned merchant', () => {
  it('signed in when the operator bans it: the next page says the account is blocked, not that the session expired', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { status: 'banned' } });
    const r = await c.get('/cabinet/payments');
    expect(r.statusCode).toBe(303);
    const page = await c.get(r.headers.location as string);
    expect(page.body).toContain('This merchant account is blocked.');
    expect(page.body).not.toContain('Your session has expired');
    // The session is gone: unbanned, the browser signs in again.
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM cabinet_sessions WHERE merchant_id = $1', [m.merchantId])).rows[0].n).toBe(0);
  });
});

describe('why a payment failed, in words and in the cabinet\'s language', () => {
  it('insufficient_funds has its own error_message in the API; the Russian cabinet, its CSV and the English one translate it', async () => {
    const m = await cabinetMerchant(t);
    const bill = await createBill(m.auth, m.shopId);
    const paid = await payRequest(t, bill, cardForm(SANDBOX_INSUFFICIENT_CARD));
    const paymentId = paid.json().payment_id as string;
    const api = (await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${paymentId}`, headers: m.auth })).json();
    expect(api).toMatchObject({ status: 'FAIL', error_code: 'insufficient_funds' });
    expect(api.error_message).toMatch(/not enough money/i);
    expect(api.error_message).not.toBe('The payment was declined.');
    const c = await signedIn(t, m);
    const ru = 'На карте плательщика недостаточно средств: банк-эмитент отклонил платёж.';
    expect((await c.get(`/cabinet/payments/${paymentId}?lang=ru`)).body).toContain(`title="insufficient_funds">${ru}`);
    expect((await c.get('/cabinet/payments')).body).toContain(`title="insufficient_funds">${ru}`);
    const csv = (await c.get('/cabinet/payments/export.csv')).body.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(csv.find((l) => l.startsWith(`${paymentId};`))!.endsWith(`;insufficient_funds;${ru}`)).toBe(true);
    expect((await c.get(`/cabinet/payments/${paymentId}?lang=en`)).body).toContain('title="insufficient_funds">Not enough money on the payer&#39;s card');
    const en = (await c.get('/cabinet/payments/export.csv')).body;
    expect(en).toContain(api.error_message);
  });
});
