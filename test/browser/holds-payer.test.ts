import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, PHONE, launchChromium } from './cabinet-helpers.js';
import { startShopReceiver, type ShopReceiver } from './payment-page-helpers.js';
import { listeningTestApp } from '../helpers/browser.js';
import type { TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill } from '../factories/payment.js';
import { admin } from '../admin/helpers.js';
import { md5Upper } from '../../src/lib/crypto.js';

/**
 * A two-stage payment as the payer reads it, in real Chromium at phone (Russian) and desktop
 * (English) size: after the card is authorised the payer returns to the shop's Success URL as
 * after a success; once the shop cancels the hold, the payment's page says the shop cancelled it
 * (no decline wording, not sent back to the form).
 */
const DIR = 'test/artifacts/holds-payer';
let t: TestApp;
let base: string;
let browser: Browser;
let receiver: ShopReceiver;
let m: MerchantFixture;

beforeAll(async () => {
  receiver = await startShopReceiver();
  ({ t, base } = await listeningTestApp(DIR));
  m = await createMerchant(t, { shop: { name: 'Лавка Чая', successUrl: `${receiver.base}/success`, failUrl: `${receiver.base}/fail` } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
});

describe('a held payment, then cancelled by the shop', () => {
  for (const [size, viewport, lang, words] of [
    ['phone', PHONE, 'ru', { card: /Номер карты/, expiry: /Срок/, held: 'Платёж авторизован', cancelled: 'Магазин отменил платёж', declined: /отклон/i }],
    ['desktop', DESKTOP, 'en', { card: /Card number/, expiry: /Expiry/, held: 'Payment authorised', cancelled: 'The shop cancelled the payment', declined: /declined|another card/i }],
  ] as const) {
    it(`${size} (${lang}): authorised -> back to the shop like a success; cancelled -> reads as cancelled`, async () => {
      const orderId = `hold-${size}`;
      const billId = await createBill(t, m, { amount: '700.00', orderId, capture: false });
      const ctx = await browser.newContext({ viewport, locale: lang === 'ru' ? 'ru-RU' : 'en-US' });
      const page = await ctx.newPage();
      await page.goto(`${base}/pay/${billId}?lang=${lang}`);
      await page.getByLabel(words.card).fill('4242424242424242');
      await page.getByLabel(words.expiry).fill('1234');
      await page.getByLabel('CVC').fill('123');
      await Promise.all([page.waitForURL(`${receiver.base}/success`), page.getByTestId('pay-card').click()]);
      expect(receiver.received.at(-1)!.fields.SignatureValue).toBe(md5Upper(`700.00:${orderId}:${m.token}`));
      const { id } = (await t.db.pool.query('SELECT id FROM payments WHERE bill_id = $1', [billId])).rows[0];
      const paymentUrl = `${base}/pay/${billId}/payments/${id}?lang=${lang}`;

      // The same page without its auto-submit, to see (and shoot) what the payer reads on the way.
      const still = await (await browser.newContext({ viewport, javaScriptEnabled: false })).newPage();
      await still.goto(paymentUrl);
      await expect(still.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(words.held);
      await still.screenshot({ path: `${DIR}/${size}-authorised.png`, fullPage: true });
      await still.context().close();

      expect((await admin(t, 'POST', `/payments/${id}/cancel`)).status).toBe(200);
      await page.goto(paymentUrl);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(words.cancelled);
      expect(page.url()).toBe(paymentUrl);
      expect(await page.locator('body').textContent()).not.toMatch(words.declined);
      await page.screenshot({ path: `${DIR}/${size}-cancelled.png`, fullPage: true });
      await ctx.close();
    });
  }
});
