import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill, SUCCESS_CARD } from '../factories/payment.js';
import { backToShopUrl } from '../../src/page/receipt.js';

/** Issue 16 item 2: the customer's last page when the shop has no Success URL. */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' }); });
afterAll(async () => { await t.close(); });

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
/** Pays on the page as a browser does: the form POST answers 303 (post/redirect/get), the GET shows the last page. */
async function pay(billId: string, lang?: string) {
  const page = await t.app.inject({ method: 'GET', url: `/pay/${billId}${lang ? `?lang=${lang}` : ''}`, headers: { accept: 'text/html' } });
  const posted = await t.app.inject({
    method: 'POST', url: `/pay/${billId}`,
    headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: csrfOf(page.body), method: 'BANK_CARD', card_number: SUCCESS_CARD, card_expiry: '11/38', card_cvc: '321', ...(lang ? { lang } : {}) }).toString(),
  });
  expect(posted.statusCode).toBe(303);
  const next = new URL(String(posted.headers.location), 'http://pay.test');
  if (lang && !next.searchParams.has('lang')) next.searchParams.set('lang', lang);
  return t.app.inject({ method: 'GET', url: `${next.pathname}${next.search}`, headers: { accept: 'text/html', ...(lang ? { 'accept-language': lang } : {}) } });
}

describe('the receipt', () => {
  it('shows the order, amount, date and shop, a print button with print CSS, and the way back (return_url)', async () => {
    const m = await createMerchant(t, { shop: { name: 'Coffee & Co', resultUrl: 'https://coffee.example/hooks/result' } });
    const billId = await createBill(t, m, { amount: '1250.00', name: 'Two cappuccinos', orderId: 'A-77' });
    await t.db.pool.query("UPDATE bills SET return_url = 'https://coffee.example/orders/A-77' WHERE id = $1", [billId]);
    const r = await pay(billId);
    expect(r.statusCode).toBe(200);
    const h = r.body;
    expect(h).toContain('data-testid="receipt"');
    expect(h).toContain('data-testid="receipt-order">Two cappuccinos<');
    expect(h).toContain('A-77');
    expect(h).toContain('data-testid="receipt-shop">Coffee &#38; Co<');
    expect(h).toContain('data-testid="receipt-amount">RUB\u00a01,250.00<');
    expect(h).toMatch(/data-testid="receipt-date">\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}</);
    expect(h).toContain('href="https://coffee.example/orders/A-77" data-testid="back-to-shop"');
    expect(h).toContain('@media print');
    expect(h).toContain('id="print"');
    // The print script runs under the page's CSP nonce.
    const nonce = /script-src 'nonce-([0-9a-f]+)'/.exec(String(r.headers['content-security-policy']))![1];
    expect(h).toContain(`<script nonce="${nonce}">`);
  });

  it('in Russian, with the shop\'s site as the way back when the bill has no return_url', async () => {
    const m = await createMerchant(t, { shop: { name: 'Кофейня', resultUrl: 'https://coffee.example/hooks/result' } });
    const billId = await createBill(t, m, { amount: '1500.00' });
    const r = await pay(billId, 'ru');
    expect(r.body).toContain('Оплата получена');
    expect(r.body).toContain('1\u00a0500,00\u00a0₽');
    expect(r.body).toContain('href="https://coffee.example/" data-testid="back-to-shop"');
  });

  it('the way back: return_url, else the origin of the Result URL, else none', () => {
    expect(backToShopUrl({ returnUrl: 'https://a.example/x', resultUrl: 'https://b.example/r' })).toBe('https://a.example/x');
    expect(backToShopUrl({ returnUrl: null, resultUrl: 'https://b.example/r?x=1' })).toBe('https://b.example/');
    expect(backToShopUrl({ returnUrl: null, resultUrl: null })).toBeNull();
    expect(backToShopUrl({ returnUrl: null, resultUrl: 'javascript:alert(1)' })).toBeNull();
  });
});
