import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startShopReceiver, type ShopReceiver } from './payment-page-helpers.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, DECLINED_CARD, SUCCESS_CARD } from '../factories/payment.js';

/**
 * Issue 16 item 2 in real Chromium, phone and desktop: a declined card keeps the payer on the
 * form with the reason under the card number (in the page's language); reloading charges
 * nothing; a retry with 4242 pays the same bill; "Back to the shop" posts the decline to the
 * Fail URL. Test bills (the merchant's test token) carry a "no real money" banner on the form
 * and on the receipt (issue 14 item 6).
 */
const ART = 'test/artifacts';
const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;
const INSUFFICIENT = '4000000000009995';

let t: TestApp;
let m: MerchantFixture;
let browser: Browser;
let receiver: ShopReceiver;
let base: string;

beforeAll(async () => {
  mkdirSync(ART, { recursive: true });
  receiver = await startShopReceiver();
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  m = await createMerchant(t, { shop: { name: 'Лавка Чая', successUrl: `${receiver.base}/success`, failUrl: `${receiver.base}/fail` } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
});

const paymentsOf = async (billId: string) => (await t.db.pool.query(
  `SELECT id, status::text FROM payments WHERE bill_id = $1 ORDER BY created_at, id`, [billId])).rows as Array<{ id: string; status: string }>;
const credits = async (billId: string) => (await t.db.pool.query(
  `SELECT count(*)::int AS n FROM ledger_transfers l JOIN payments p ON p.id = l.ref_id WHERE p.bill_id = $1`, [billId])).rows[0].n as number;

async function fillCard(page: Page, number: string) {
  await page.getByLabel(/Card number|Номер карты/).fill(number);
  await page.getByLabel(/Expiry|Срок действия/).fill('1234');
  await page.getByLabel('CVC').fill('123');
}

for (const [size, viewport] of Object.entries(SIZES)) {
  const lang = size === 'phone' ? 'ru' : 'en';
  describe(`a declined card in Chromium (${size}, ${lang})`, () => {
    it('decline -> reason under the card number -> reload charges nothing -> 9995 -> its reason -> 4242 pays the same bill -> reloads charge nothing', async () => {
      const billId = await createBill(t, m, { amount: '390.00', orderId: `dec-${size}`, name: lang === 'ru' ? 'Чай улун, 100 г' : 'Oolong tea, 100 g' });
      const ctx = await browser.newContext({ viewport, locale: lang === 'ru' ? 'ru-RU' : 'en-US', deviceScaleFactor: 1 });
      const page = await ctx.newPage();
      await page.goto(`${base}/pay/${billId}`);
      await fillCard(page, DECLINED_CARD);
      await Promise.all([page.waitForURL(/\?declined=\w+/), page.getByTestId('pay-card').click()]);
      const reason = page.getByTestId('decline-reason');
      expect(await reason.textContent()).toBe(lang === 'ru' ? 'Банк отклонил эту карту. Попробуйте другую карту или обратитесь в банк.' : 'Your bank declined this card. Try another card or ask your bank.');
      expect(await reason.isVisible()).toBe(true);
      expect(await page.getByLabel(/Card number|Номер карты/).getAttribute('aria-invalid')).toBe('true');
      // The card number is not kept: the payer types another card.
      expect(await page.getByLabel(/Card number|Номер карты/).inputValue()).toBe('');
      // The reason sits right under the card number field on screen.
      const input = (await page.getByLabel(/Card number|Номер карты/).boundingBox())!;
      const under = (await reason.boundingBox())!;
      expect(under.y).toBeGreaterThanOrEqual(input.y + input.height - 1);
      expect(under.y - (input.y + input.height)).toBeLessThan(24);
      await page.screenshot({ path: `${ART}/decline-${size}-declined.png`, fullPage: true });
      const declinedUrl = page.url();
      await page.reload();
      await page.reload();
      expect((await paymentsOf(billId)).map((p) => p.status)).toEqual(['FAIL']);

      await fillCard(page, INSUFFICIENT);
      await Promise.all([page.waitForURL((u) => u.href !== declinedUrl && /\?declined=/.test(u.href)), page.getByTestId('pay-card').click()]);
      expect(await page.getByTestId('decline-reason').getAttribute('data-code')).toBe('insufficient_funds');
      await page.screenshot({ path: `${ART}/decline-${size}-insufficient.png`, fullPage: true });

      await fillCard(page, SUCCESS_CARD);
      await Promise.all([page.waitForURL(`${receiver.base}/success`), page.getByTestId('pay-card').click()]);
      const f = receiver.received.at(-1)!;
      expect(f.fields.SignatureValue).toBe(md5Upper(`390.00:dec-${size}:${m.token}`));
      expect((await paymentsOf(billId)).map((p) => p.status)).toEqual(['FAIL', 'FAIL', 'SUCCESS']);
      // Back through the history and reload each step: nothing is charged again.
      await page.goBack();
      await page.reload();
      await page.goto(declinedUrl);
      expect(await page.getByTestId('paid').isVisible()).toBe(true);
      await page.screenshot({ path: `${ART}/decline-${size}-after-paid.png`, fullPage: true });
      expect((await paymentsOf(billId)).map((p) => p.status)).toEqual(['FAIL', 'FAIL', 'SUCCESS']);
      expect(await credits(billId)).toBe(1);
      const bill = await t.db.pool.query(`SELECT status::text FROM bills WHERE id = $1`, [billId]);
      expect(bill.rows[0].status).toBe('SUCCESS');
      await ctx.close();
    });

    it('"Back to the shop" after a decline posts the decline to the Fail URL with its signature', async () => {
      const billId = await createBill(t, m, { amount: '120.00', orderId: `back-${size}` });
      const ctx = await browser.newContext({ viewport, locale: lang === 'ru' ? 'ru-RU' : 'en-US' });
      const page = await ctx.newPage();
      await page.goto(`${base}/pay/${billId}`);
      await fillCard(page, DECLINED_CARD);
      await Promise.all([page.waitForURL(/\?declined=\w+/), page.getByTestId('pay-card').click()]);
      await Promise.all([page.waitForURL(`${receiver.base}/fail`), page.getByTestId('fail-back').click()]);
      const f = receiver.received.at(-1)!;
      expect(f.path).toBe('/fail');
      expect(f.fields).toEqual({ InvId: `back-${size}`, OutSum: '0.00', CurrencyIn: 'RUB', custom: '', SignatureValue: md5Upper(`0.00:back-${size}:${m.token}`) });
      expect(await paymentsOf(billId)).toHaveLength(1);
      await ctx.close();
    });

    it('a test bill says "no real money" on the form and on the receipt', async () => {
      const plain = await createMerchant(t, { shop: { name: 'Sandbox Shop' } });
      const { twin } = await t.app.services.merchants.ensureTestTwin(plain.merchantId);
      const billId = await createBill(t, { ...plain, merchantId: twin.id }, { amount: '75.00', name: 'Test order' });
      const liveBill = await createBill(t, plain, { amount: '75.00' });
      const ctx = await browser.newContext({ viewport, locale: lang === 'ru' ? 'ru-RU' : 'en-US' });
      const page = await ctx.newPage();
      await page.goto(`${base}/pay/${liveBill}`);
      expect(await page.getByTestId('test-banner').count()).toBe(0);
      await page.goto(`${base}/pay/${billId}`);
      const banner = page.getByTestId('test-banner');
      expect(await banner.textContent()).toBe(lang === 'ru'
        ? 'Тестовый платёж: реальные деньги не списываются. Используйте тестовые карты ниже.'
        : 'Test payment: no real money moves. Use the test cards below.');
      expect(await banner.isVisible()).toBe(true);
      await page.screenshot({ path: `${ART}/test-bill-${size}-form.png`, fullPage: true });
      await fillCard(page, SUCCESS_CARD);
      await Promise.all([page.waitForURL(/\/payments\//), page.getByTestId('pay-card').click()]);
      expect(await page.getByTestId('receipt').isVisible()).toBe(true);
      expect(await page.getByTestId('test-banner').textContent()).toBe(lang === 'ru' ? 'Тестовый платёж: без реальных денег' : 'Test payment: no real money');
      await page.screenshot({ path: `${ART}/test-bill-${size}-receipt.png`, fullPage: true });
      await ctx.close();
    });
  });
}
