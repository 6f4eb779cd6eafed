import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, PHONE, launchChromium } from './cabinet-helpers.js';
import { listeningTestApp } from '../helpers/browser.js';
import type { TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { heldPayment } from '../factories/payment.js';
import { enrolledOperator } from '../operator/helpers.js';

/**
 * An operator captures (in part) and cancels holds from the console, in real Chromium at phone
 * and desktop size: on the merchant page the held payments with their buttons; a partial capture
 * from there; a cancel from the payment's page; the labels after each.
 */
const DIR = 'test/artifacts/console-holds';
let t: TestApp;
let base: string;
let browser: Browser;

beforeAll(async () => {
  ({ t, base } = await listeningTestApp(DIR));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

for (const [size, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
  test(`${size}: an admin captures part of one hold on the merchant page and cancels another on its payment page`, async () => {
    const m = await createMerchant(t);
    const a = await heldPayment(t, m, '700.00');
    const b = await heldPayment(t, m, '250.00');
    // Signed in (password and TOTP) through the console's own forms; the browser takes over the cookies.
    const op = await enrolledOperator(t, 'admin');
    const ctx = await browser.newContext({ viewport, locale: 'en-US' });
    await ctx.addCookies([...op.client.cookies].map(([name, value]) => ({ name, value, url: base })));
    const page = await ctx.newPage();
    page.on('dialog', (d) => { void d.accept(); });

    await page.goto(`${base}/operator/merchants/${m.merchantId}`);
    await expect(page.getByTestId('held-payment').count()).resolves.toBe(2);
    await page.screenshot({ path: `${DIR}/${size}-01-merchant-held.png`, fullPage: true });
    const rowA = page.getByTestId('held-payment').filter({ hasText: a });
    await rowA.getByLabel(/Amount to capture/).fill('500.00');
    await Promise.all([page.waitForURL(/\?ok=Captured/), rowA.getByRole('button', { name: 'Capture' }).click()]);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('Captured RUB 500.00');
    await expect(page.getByTestId('held-payment').count()).resolves.toBe(1);
    await page.screenshot({ path: `${DIR}/${size}-02-captured.png`, fullPage: true });

    await page.getByRole('link', { name: b }).click();
    await page.waitForURL(`${base}/operator/payments/${b}`);
    await expect(page.getByTestId('payment-status').textContent()).resolves.toBe('Authorised (held)');
    await Promise.all([page.waitForURL(/\?ok=/), page.getByRole('button', { name: 'Cancel the hold' }).click()]);
    await expect(page.getByTestId('payment-status').textContent()).resolves.toBe('Cancelled by the shop');
    await page.screenshot({ path: `${DIR}/${size}-03-cancelled.png`, fullPage: true });
    await page.goto(`${base}/operator/payments/${a}`);
    await expect(page.getByTestId('payment-status').textContent()).resolves.toBe('Captured');

    const rows = (await t.db.pool.query('SELECT id, status::text, amount_received::text FROM payments WHERE id = ANY($1) ORDER BY amount DESC', [[a, b]])).rows;
    expect(rows).toEqual([{ id: a, status: 'SUCCESS', amount_received: '500.00' }, { id: b, status: 'FAIL', amount_received: '0.00' }]);
    await ctx.close();
  });
}
