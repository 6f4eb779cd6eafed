import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DESKTOP, PHONE } from './cabinet-helpers.js';
import type { TestApp } from '../helpers/app.js';
import { browserTestApp } from '../helpers/browser.js';
import { cabinetMerchant, PASSWORD, type CabinetMerchant } from '../cabinet/helpers.js';
import { createBill } from '../factories/payment.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { enrolledOperator, moderatedPayout, stuckPayment } from '../operator/helpers.js';
import { SESSION_COOKIE } from '../../src/operator/context.js';

/**
 * Words people read, in Chromium at phone and desktop size: the sandbox bank speaks the payer's
 * language, the SBP flow shows one QR code, the cabinet's sign-in button keeps its distance, the
 * refunds of a payment fit a phone, the bill form says its choices in words, the console names
 * merchants and shows what a provider said as a key/value list.
 */
const ART = 'test/artifacts/plain-words';
const SIZES = { phone: PHONE, desktop: DESKTOP } as const;

let t: TestApp;
let base: string;
let browser: Browser;
let m: CabinetMerchant;

beforeAll(async () => {
  ({ t, base, browser } = await browserTestApp(ART));
  m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function fresh(viewport: { width: number; height: number }, locale = 'en-US'): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport, locale, deviceScaleFactor: 1 });
  return { ctx, page: await ctx.newPage() };
}

for (const [size, viewport] of Object.entries(SIZES)) {
  test(`${size}: a payer who chose Russian on the payment page gets the 3-D Secure bank page in Russian (an English browser)`, async () => {
    const billId = await createBill(t, m, { amount: '99.00', orderId: `3ds-ru-${size}` });
    const { ctx, page } = await fresh(viewport);
    try {
      await page.goto(`${base}/pay/${billId}?lang=ru`);
      await page.getByLabel(/Номер карты/).fill('4000002760003184');
      await page.getByLabel(/Срок действия/).fill('1234');
      await page.getByLabel('CVC').fill('123');
      await Promise.all([page.waitForURL(/\/payments\//), page.getByTestId('pay-card').click()]);
      await Promise.all([page.waitForURL(/\/sandbox\/3ds\//), page.getByTestId('action-link').click()]);
      await expect(page.locator('h1').textContent()).resolves.toBe('Подтверждение 3-D Secure');
      await expect(page.getByTestId('sandbox-confirm').textContent()).resolves.toBe('Подтвердить');
      await expect(page.locator('html').getAttribute('lang')).resolves.toBe('ru');
      await page.screenshot({ path: `${ART}/${size}-3ds-ru.png`, fullPage: true });
    } finally { await ctx.close(); }
  });

  test(`${size}: the SBP flow shows one QR code: none on the form, one on the waiting page`, async () => {
    const billId = await createBill(t, m, { amount: '500.00', orderId: `sbp-one-${size}`, paymentMethod: 'SBP' });
    const { ctx, page } = await fresh(viewport, 'ru-RU');
    try {
      await page.goto(`${base}/pay/${billId}`);
      await expect(page.locator('.qr-box svg').count()).resolves.toBe(0);
      await page.screenshot({ path: `${ART}/${size}-sbp-form.png`, fullPage: true });
      await Promise.all([page.waitForURL(/\/payments\//), page.getByTestId('pay-sbp').click()]);
      await expect(page.locator('.qr-box svg').count()).resolves.toBe(1);
      await expect(page.getByTestId('sbp-qr').isVisible()).resolves.toBe(true);
      // The bank-app link opens the sandbox bank in the page's language.
      expect(await page.getByTestId('bank-app').first().getAttribute('href')).toMatch(/\/sandbox\/sbp\/\w+\?lang=ru$/);
      await page.screenshot({ path: `${ART}/${size}-sbp-waiting.png`, fullPage: true });
    } finally { await ctx.close(); }
  });

  test(`${size}: cabinet sign-in button clear of the password field; the bill form in Russian words; the refunds fit the screen`, async () => {
    const paid = await createPaidPayment(t, m, { amount: '1000.00' });
    await t.app.services.refunds.createPartial({ id: m.merchantId, grantRefunds: true }, paid.paymentId, new Decimal('10'));
    const { ctx, page } = await fresh(viewport, 'ru-RU');
    try {
      await page.goto(`${base}/cabinet/login`);
      const pw = await page.locator('#password').boundingBox();
      const btn = await page.locator('form button[type=submit]').first().boundingBox();
      expect(btn!.y - (pw!.y + pw!.height)).toBeGreaterThanOrEqual(12);
      await page.screenshot({ path: `${ART}/${size}-cabinet-login.png`, fullPage: true });
      await page.locator('#email').fill(m.email);
      await page.locator('#password').fill(PASSWORD);
      await Promise.all([page.waitForURL(`${base}/cabinet`), page.locator('form button[type=submit]').first().click()]);

      await page.goto(`${base}/cabinet/bills/new`);
      const types = await page.locator('#type option').allTextContents();
      const methods = await page.locator('#payment_method option').allTextContents();
      expect(types).toEqual(['Один платёж', 'Много платежей (многоразовый)']);
      expect(methods).toEqual(['Любой', 'Банковская карта', 'СБП']);
      await page.screenshot({ path: `${ART}/${size}-bill-new-ru.png`, fullPage: true });

      await page.goto(`${base}/cabinet/payments/${paid.paymentId}`);
      await expect(page.getByTestId('payment-method').textContent()).resolves.toBe('Банковская карта');
      const table = page.getByTestId('refunds-table');
      await expect(table.isVisible()).resolves.toBe(true);
      // Nothing of the refunds is cut off to the right of the screen.
      const box = await table.boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(viewport.width);
      const wrap = await page.locator('.table-wrap', { has: table }).evaluate((e) => e.scrollWidth - e.clientWidth);
      expect(wrap).toBeLessThanOrEqual(0);
      await table.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${ART}/${size}-cabinet-refunds.png`, fullPage: true });
    } finally { await ctx.close(); }
  });

  test(`${size}: the console's payout queue names merchants; the attention list shows what was heard as a key/value list`, async () => {
    const { merchantId } = await moderatedPayout(t);
    await stuckPayment(t);
    const name = (await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: merchantId } })).name;
    const op = await enrolledOperator(t, 'admin');
    const ctx = await browser.newContext({ viewport, locale: 'en-US' });
    await ctx.addCookies([{ name: SESSION_COOKIE, value: op.client.cookies.get(SESSION_COOKIE)!, url: `${base}/operator` }]);
    const page = await ctx.newPage();
    try {
      await page.goto(`${base}/operator/payouts`);
      await expect(page.getByTestId('payout-merchant').filter({ hasText: name }).count()).resolves.toBe(1);
      await expect(page.locator('table').textContent()).resolves.not.toContain('MODERATING');
      await page.screenshot({ path: `${ART}/${size}-console-payouts.png`, fullPage: true });
      await page.goto(`${base}/operator/attention`);
      const kv = page.locator('td.heard dl.kv').first();
      await expect(kv.locator('dt').first().textContent()).resolves.toBe('reason');
      await expect(page.locator('td.heard').first().textContent()).resolves.not.toContain('{');
      // No word broken in the middle: each short value stays on one line.
      const lines = await page.locator('td.heard dl.kv dd').evaluateAll((dds) => dds.map((e) => {
        const r = document.createRange(); r.selectNodeContents(e);
        const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
        return { text: e.textContent ?? '', lines: tops.size };
      }));
      for (const d of lines.filter((x) => x.text === 'unknown')) expect(d.lines, d.text).toBe(1);
      await page.screenshot({ path: `${ART}/${size}-console-attention.png`, fullPage: true });
    } finally { await ctx.close(); }
  });
}
