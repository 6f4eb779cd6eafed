import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, PHONE, launchChromium } from './cabinet-helpers.js';
import { listeningTestApp } from '../helpers/browser.js';
import type { TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { enrolledOperator } from '../operator/helpers.js';

/**
 * An admin sets a shop's 54-FZ receipts on the console's shop page, in real Chromium at phone and
 * desktop size: every code chosen by its words; ENVD is not offered; a refusal (enabled without a
 * VAT rate) is named by the field's label next to it; saved, the page shows the words again.
 */
const DIR = 'test/artifacts/console-shop-fiscal';
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
  test(`${size}: an admin turns receipts on in words; a missing VAT rate is named by its label; saved and shown`, async () => {
    const m = await createMerchant(t);
    const op = await enrolledOperator(t, 'admin');
    const ctx = await browser.newContext({ viewport, locale: 'en-US' });
    await ctx.addCookies([...op.client.cookies].map(([name, value]) => ({ name, value, url: base })));
    const page = await ctx.newPage();

    await page.goto(`${base}/operator/shops/${m.shopId}`);
    const taxOptions = await page.getByLabel('Taxation system').locator('option').allTextContents();
    expect(taxOptions).toEqual(['—', 'General (OSN)', 'Simplified, income (USN)', 'Simplified, income minus expenses (USN)', 'Agricultural (ESN)', 'Patent (PSN)']);
    await page.getByLabel('Send a receipt with every payment and refund').check();
    await page.getByLabel('Taxation system').selectOption({ label: 'Simplified, income (USN)' });
    await Promise.all([page.waitForLoadState(), page.getByRole('button', { name: 'Save' }).click()]);
    const err = page.locator('#f-vat_code-error');
    await expect(err.textContent()).resolves.toBe('Required when receipts are sent: choose one.');
    await expect(page.locator('#form-errors').textContent()).resolves.toContain('VAT rate:');
    await page.screenshot({ path: `${DIR}/${size}-01-refused.png`, fullPage: true });

    await page.getByLabel('VAT rate').selectOption({ label: 'VAT 22%' });
    await page.getByLabel('Payment subject').selectOption({ label: 'Service' });
    await page.getByLabel('Payment mode').selectOption({ label: 'Full prepayment (100%)' });
    await page.getByLabel('Fiscal document format (FFD)').selectOption({ label: 'FFD 1.2 (each line with its unit)' });
    await Promise.all([page.waitForURL(/\?ok=Saved/), page.getByRole('button', { name: 'Save' }).click()]);
    await expect(page.getByLabel('VAT rate').locator('option:checked').textContent()).resolves.toBe('VAT 22%');
    await expect(page.getByLabel('Taxation system').locator('option:checked').textContent()).resolves.toBe('Simplified, income (USN)');
    await page.locator('#fiscal').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${DIR}/${size}-02-saved.png`, fullPage: true });

    const f = (await t.db.pool.query('SELECT fiscalization FROM shops WHERE id = $1', [m.shopId])).rows[0].fiscalization;
    expect(f).toEqual({ enabled: true, tax_system_code: 2, vat_code: 11, payment_subject: 'service', payment_mode: 'full_prepayment', ffd_version: '1.2' });
    await ctx.close();
  });
}
