import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { browserTestApp } from '../helpers/browser.js';
import { OP_PASSWORD, createOperator, moderatedPayout, totpCode } from '../operator/helpers.js';
import { createMerchant } from '../factories/merchant.js';
import { heldPayment } from '../factories/payment.js';
import { formatMoney } from '../../src/lib/money-format.js';

const ARTIFACTS = 'test/artifacts/operator';
const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;

let t: TestApp;
let base: string;
let browser: Browser;

beforeAll(async () => {
  ({ t, base, browser } = await browserTestApp(ARTIFACTS));
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const shot = (p: Page, size: string, name: string) => p.screenshot({ path: `${ARTIFACTS}/${size}-${name}.png`, fullPage: true });

for (const [size, viewport] of Object.entries(SIZES)) {
  test(`${size}: a finance operator signs in with TOTP (enrolling on the first sign-in), approves a moderated payout, and the audit trail shows it`, async () => {
    const op = await createOperator(t, 'finance');
    const { payoutId } = await moderatedPayout(t);
    const ctx = await browser.newContext({ viewport, locale: 'en-US' });
    const page = await ctx.newPage();
    page.on('dialog', (d) => { void d.accept(); });
    try {
      await page.goto(`${base}/operator`);
      await page.waitForURL(/\/operator\/login/);
      await shot(page, size, '01-login');
      await page.getByLabel('Email').fill(op.email);
      await page.getByLabel('Password').fill(OP_PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();

      // First sign-in: the QR code and the key; the code is computed from the key as an app would.
      await page.waitForURL(/\/operator\/2fa$/);
      await expect(page.locator('#totp-qr').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 100)).resolves.toBe(true);
      await shot(page, size, '02-enrol');
      const secret = (await page.locator('#totp-secret').textContent())!.trim();
      await page.getByLabel('Code from the app').fill(await totpCode(secret));
      await page.getByRole('button', { name: 'Confirm' }).click();
      await expect(page.locator('#recovery-codes li').count()).resolves.toBe(10);
      await shot(page, size, '03-recovery-codes');
      await page.getByRole('link', { name: 'I have saved them, continue' }).click();
      await page.waitForURL(`${base}/operator`);
      await expect(page.locator('#moderating-count').textContent()).resolves.not.toBe('0');
      await shot(page, size, '04-home');

      // The moderation queue: approve.
      await page.getByRole('link', { name: 'Payout moderation' }).click();
      const row = page.locator(`tr[data-payout="${payoutId}"]`);
      await expect(row.isVisible()).resolves.toBe(true);
      await shot(page, size, '05-queue');
      await row.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL(/\/operator\/payouts\?ok=/);
      await expect(page.getByText(`Payout ${payoutId} approved.`).isVisible()).resolves.toBe(true);
      await shot(page, size, '06-approved');
      expect((await t.db.pool.query('SELECT status FROM payouts WHERE id = $1', [payoutId])).rows[0].status).toBe('PROCESS');

      // The audit trail shows who approved it.
      await page.goto(`${base}/operator/audit?object_id=${payoutId}`);
      const entry = page.locator('#audit-table tbody tr').first();
      await expect(entry.textContent()).resolves.toContain('payout.approve');
      await expect(entry.textContent()).resolves.toContain(`operator:${op.id}`);
      await shot(page, size, '07-audit');
      // The merchant page, read-only for finance (no settings forms).
      const { merchant_id: merchantId } = (await t.db.pool.query('SELECT merchant_id FROM payouts WHERE id = $1', [payoutId])).rows[0];
      await page.goto(`${base}/operator/merchants/${merchantId}`);
      await expect(page.locator('#merchant-verified').textContent()).resolves.toBe('yes');
      // Nothing held on cards: the column says 0.
      await expect(page.getByTestId('held-RUB').textContent()).resolves.toBe(formatMoney('0', 'en', 'RUB'));
      await expect(page.locator('#refresh-token').count()).resolves.toBe(0);
      await shot(page, size, '08-merchant');

      // A merchant with two-stage payments held: the held total beside its balances, not in them.
      const held = await createMerchant(t, { merchant: { verified: true } });
      await heldPayment(t, held, '420.00');
      await page.goto(`${base}/operator/merchants/${held.merchantId}`);
      await expect(page.getByTestId('held-RUB').isVisible()).resolves.toBe(true);
      await expect(page.getByTestId('held-RUB').textContent()).resolves.toBe(formatMoney('420.00', 'en', 'RUB'));
      await shot(page, size, '09-merchant-held');
    } finally {
      await ctx.close();
    }
  });
}
