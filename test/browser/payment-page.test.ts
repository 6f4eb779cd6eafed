import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startShopReceiver, type ShopReceiver } from './payment-page-helpers.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, DECLINED_CARD, SUCCESS_CARD } from '../factories/payment.js';

const ART = 'test/artifacts';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

let t: TestApp;
let m: MerchantFixture;
let browser: Browser;
let receiver: ShopReceiver;
let receiverBase: string;
let base: string;

beforeAll(async () => {
  mkdirSync(ART, { recursive: true });
  receiver = await startShopReceiver();
  receiverBase = receiver.base;

  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  m = await createMerchant(t, { shop: { name: 'Северный Ветер Store', successUrl: `${receiverBase}/success`, failUrl: `${receiverBase}/fail` } });

  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
});

async function open(viewport = PHONE, opts: { locale?: string; javaScriptEnabled?: boolean } = {}): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport, locale: opts.locale ?? 'en-US', javaScriptEnabled: opts.javaScriptEnabled ?? true, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  return { ctx, page };
}

/** What the shop's Success/Fail pages received last. */
const lastReceived = () => receiver.received[receiver.received.length - 1]!;

async function fillCard(page: Page, number: string) {
  await page.getByLabel(/Card number|Номер карты/).fill(number);
  await page.getByLabel(/Expiry|Срок действия/).fill('1234');
  await page.getByLabel('CVC').fill('123');
}

describe('payment page in Chromium', () => {
  it('the success card lands on the Success URL with a valid signature (phone)', async () => {
    const billId = await createBill(t, m, { amount: '1490.00', orderId: 'ord-42', custom: 'cart=7', name: 'Order #42', description: 'Wool scarf, dark blue' });
    const { ctx, page } = await open(PHONE);
    await page.goto(`${base}/pay/${billId}`);
    await page.screenshot({ path: `${ART}/pay-phone.png`, fullPage: true });
    await fillCard(page, SUCCESS_CARD);
    expect(await page.getByLabel('Card number').inputValue()).toBe('4242 4242 4242 4242');
    expect(await page.getByLabel(/Expiry/).inputValue()).toBe('12/34');
    await page.screenshot({ path: `${ART}/pay-phone-filled.png`, fullPage: true });
    await Promise.all([page.waitForURL(`${receiverBase}/success`), page.getByTestId('pay-card').click()]);
    expect(await page.locator('#landed').textContent()).toBe('Thank you');
    const f = lastReceived();
    expect(f.path).toBe('/success');
    expect(f.fields).toEqual({ InvId: 'ord-42', OutSum: '1490.00', CurrencyIn: 'RUB', custom: 'cart=7', SignatureValue: md5Upper(`1490.00:ord-42:${m.token}`) });
    const st = await t.db.pool.query(`SELECT status::text FROM bills WHERE id = $1`, [billId]);
    expect(st.rows[0].status).toBe('SUCCESS');
    await ctx.close();
  });

  it('the desktop layout, in Russian', async () => {
    await t.db.pool.query(`INSERT INTO fx_rates (currency, rub_per_unit) VALUES ('EUR', 101.25) ON CONFLICT (currency) DO UPDATE SET rub_per_unit = 101.25`);
    await t.db.pool.query(`UPDATE merchants SET payment_card_percent = 2.5, payment_sbp_percent = 1 WHERE id = $1`, [m.merchantId]);
    const billId = await createBill(t, m, { amount: '49.00', currencyIn: 'EUR', payerPaysCommission: true, name: 'Подписка на год', description: 'Тариф «Профи», 12 месяцев' });
    const { ctx, page } = await open(DESKTOP, { locale: 'ru-RU' });
    await page.goto(`${base}/pay/${billId}`);
    expect(await page.locator('html').getAttribute('lang')).toBe('ru');
    expect(await page.getByTestId('amount-rub').textContent()).toMatch(/^\d{1,3}(\u00a0\d{3})*,\d{2}\u00a0₽$/);
    await page.screenshot({ path: `${ART}/pay-desktop-ru.png`, fullPage: true });
    const { page: p2 } = await open(DESKTOP);
    await p2.goto(`${base}/pay/${billId}`);
    await p2.screenshot({ path: `${ART}/pay-desktop.png`, fullPage: true });
    await t.db.pool.query(`UPDATE merchants SET payment_card_percent = NULL, payment_sbp_percent = NULL WHERE id = $1`, [m.merchantId]);
    await ctx.close();
  });

  it('the declined card stays on the form (test/browser/payment-page-decline.test.ts); its "back to the shop" lands on the Fail URL', async () => {
    const billId = await createBill(t, m, { amount: '250.00', orderId: 'ord-43' });
    const { ctx, page } = await open(PHONE);
    await page.goto(`${base}/pay/${billId}`);
    await fillCard(page, DECLINED_CARD);
    await Promise.all([page.waitForURL(/\?declined=/), page.getByTestId('pay-card').click()]);
    await Promise.all([page.waitForURL(`${receiverBase}/fail`), page.getByTestId('fail-back').click()]);
    const f = lastReceived();
    expect(f.path).toBe('/fail');
    expect(f.fields.SignatureValue).toBe(md5Upper(`${f.fields.OutSum}:ord-43:${m.token}`));
    await ctx.close();
  });

  it('the browser refuses a card number that fails the Luhn check before it is sent', async () => {
    const billId = await createBill(t, m);
    const { ctx, page } = await open(PHONE);
    await page.goto(`${base}/pay/${billId}`);
    await fillCard(page, '4242424242424241');
    await page.getByTestId('pay-card').click();
    // Time is the subject: a submit the click started would have left the page within 300 ms.
    await page.waitForTimeout(300);
    expect(page.url()).toBe(`${base}/pay/${billId}`);
    expect(await page.getByLabel('Card number').evaluate((el) => (el as HTMLInputElement).validity.valid)).toBe(false);
    const n = await t.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE bill_id = $1`, [billId]);
    expect(n.rows[0].n).toBe(0);
    await ctx.close();
  });

  for (const [label, amount, status] of [['underpaid', '600.00', 'UNDERPAID'], ['overpaid', '1200.00', 'OVERPAID']] as const) {
    it(`SBP ${label}: one QR (the payment's, not the form's), the bank app's amount on the sandbox bank page, the confirm step, then the Success URL`, async () => {
      const billId = await createBill(t, m, { amount: '1000.00', orderId: `sbp-${label}` });
      const { ctx, page } = await open(PHONE);
      await page.goto(`${base}/pay/${billId}`);
      await page.locator('label[for=tab-sbp]').click();
      // The form shows no QR of its own: the only one is the payment's, on the waiting page.
      await expect(page.locator('#panel-sbp svg').count()).resolves.toBe(0);
      if (label === 'underpaid') await page.screenshot({ path: `${ART}/pay-phone-sbp.png`, fullPage: true });
      await Promise.all([page.waitForURL(/\/payments\//), page.getByTestId('pay-sbp').click()]);
      await expect(page.locator('.qr-box svg').count()).resolves.toBe(1);
      await page.getByTestId('bank-app').first().click();
      await page.getByLabel(/Amount to send/).fill(amount);
      await Promise.all([page.waitForURL(`${receiverBase}/success`), page.getByTestId('sandbox-confirm').click()]);
      const f = lastReceived();
      expect(f.fields.OutSum).toBe(amount);
      expect(f.fields.SignatureValue).toBe(md5Upper(`${amount}:sbp-${label}:${m.token}`));
      const st = await t.db.pool.query(`SELECT status::text FROM bills WHERE id = $1`, [billId]);
      expect(st.rows[0].status).toBe(status);
      await ctx.close();
    });
  }

  it('works without JavaScript: the form posts, the result page has a button to the shop', async () => {
    const billId = await createBill(t, m, { amount: '77.00', orderId: 'nojs' });
    const { ctx, page } = await open(PHONE, { javaScriptEnabled: false });
    await page.goto(`${base}/pay/${billId}`);
    await page.getByLabel('Card number').fill(SUCCESS_CARD);
    await page.getByLabel(/Expiry/).fill('12/34');
    await page.getByLabel('CVC').fill('123');
    await page.getByTestId('pay-card').click();
    await page.waitForURL(new RegExp(`/pay/${billId}/payments/`));
    await expect(page.getByTestId('result').getAttribute('data-status')).resolves.toBe('SUCCESS');
    await page.screenshot({ path: `${ART}/pay-phone-result-nojs.png`, fullPage: true });
    await Promise.all([page.waitForURL(`${receiverBase}/success`), page.getByRole('button', { name: 'Return to the shop' }).click()]);
    expect(lastReceived().fields.InvId).toBe('nojs');
    await ctx.close();
  });

  it('an inactive bill shows a clear page and no form', async () => {
    const billId = await createBill(t, m);
    await t.db.pool.query(`UPDATE bills SET active = false WHERE id = $1`, [billId]);
    const { ctx, page } = await open(PHONE);
    const r = await page.goto(`${base}/pay/${billId}`);
    expect(r?.status()).toBe(403);
    expect(await page.getByRole('heading').textContent()).toBe('This bill is not active');
    expect(await page.locator('form').count()).toBe(0);
    await page.screenshot({ path: `${ART}/pay-phone-inactive.png`, fullPage: true });
    await ctx.close();
  });

  it('the QR page shows an SVG QR code of the payment page (desktop)', async () => {
    const billId = await createBill(t, m, { amount: '500.00', name: 'Table 12' });
    const { ctx, page } = await open(DESKTOP);
    await page.goto(`${base}/pay/${billId}/qr`);
    expect(await page.getByTestId('qr').locator('svg').count()).toBe(1);
    await page.screenshot({ path: `${ART}/qr-desktop.png`, fullPage: true });
    await ctx.close();
  });
  /** A bill made through bill/create with the extras the public clients send (issue 12). */
  async function extrasBill(extra: Record<string, unknown>): Promise<string> {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '1490.00', shop_id: m.shopId, name: 'Order #77', ...extra } });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().bill_id as string;
  }

  for (const [label, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
    it(`items, requested payer fields, prefilled e-mail and the back-to-shop link (${label}); the payer fills them and pays`, async () => {
      const billId = await extrasBill({
        locale: 'ru', payer_email: 'anna@example.test', request_fields: ['email', 'phone', 'name'], return_url: `${receiverBase}/cart`,
        items: [{ name: 'Шарф шерстяной, тёмно-синий', price: '1290.00', quantity: 1 }, { name: 'Доставка курьером', price: '100', quantity: 2 }],
      });
      const { ctx, page } = await open(viewport);
      await page.goto(`${base}/pay/${billId}`);
      expect(await page.locator('html').getAttribute('lang')).toBe('ru');
      expect(await page.getByTestId('items').locator('li').count()).toBe(2);
      expect(await page.getByLabel('E-mail').inputValue()).toBe('anna@example.test');
      expect(await page.getByTestId('return-url').getAttribute('href')).toBe(`${receiverBase}/cart`);
      await page.screenshot({ path: `${ART}/pay-${label}-extras.png`, fullPage: true });
      await fillCard(page, SUCCESS_CARD);
      // The browser itself refuses the form while a required payer field is empty.
      await page.getByTestId('pay-card').click();
      expect(page.url()).toBe(`${base}/pay/${billId}`);
      await page.getByLabel('Телефон').fill('+7 900 123-45-67');
      await page.getByLabel('Имя').fill('Анна');
      await Promise.all([page.waitForURL(`${receiverBase}/success`), page.getByTestId('pay-card').click()]);
      const row = (await t.db.pool.query('SELECT payer_email, payer_phone, payer_name FROM payments WHERE bill_id = $1', [billId])).rows[0];
      expect(row).toEqual({ payer_email: 'anna@example.test', payer_phone: '+79001234567', payer_name: 'Анна' });
      await ctx.close();
    });
  }

  it('an expired bill says so (phone)', async () => {
    const billId = await extrasBill({ ttl: 60, return_url: `${receiverBase}/cart` });
    await t.db.pool.query(`UPDATE bills SET expires_at = now() - interval '1 second' WHERE id = $1`, [billId]);
    const { ctx, page } = await open(PHONE);
    await page.goto(`${base}/pay/${billId}`);
    expect(await page.getByRole('heading').textContent()).toBe('This bill has expired');
    expect(await page.locator('form').count()).toBe(0);
    await page.screenshot({ path: `${ART}/pay-phone-expired.png`, fullPage: true });
    await ctx.close();
  });
});
