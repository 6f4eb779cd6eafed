import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { browserTestApp } from '../helpers/browser.js';
import { startTestMailWorker } from '../helpers/smtp.js';
import type { Worker } from '../../src/workers/index.js';
import { OP_PASSWORD, createOperator, totpCode } from '../operator/helpers.js';
import { PASSWORD, cabinetMerchant } from '../cabinet/helpers.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Issue 27 item 1 in a real browser: a support operator's "Send password reset link" says where
 * the link went (masked) and shows no password; the merchant opens the mailed link (here from the
 * sandbox's dev mailbox), sets a new password, and signs in with it.
 */
const ARTIFACTS = 'test/artifacts/operator-password-reset';
const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;

let t: TestApp;
let base: string;
let browser: Browser;
let worker: Worker;

beforeAll(async () => {
  ({ t, base, browser } = await browserTestApp(ARTIFACTS));
  worker = startTestMailWorker(t);
});

afterAll(async () => {
  await worker?.stop();
  await browser?.close();
  await t?.close();
});

const shot = (p: Page, size: string, name: string) => p.screenshot({ path: `${ARTIFACTS}/${size}-${name}.png`, fullPage: true });

for (const [size, viewport] of Object.entries(SIZES)) {
  test(`${size}: support sends a reset link (no password shown); the merchant sets a new password through it`, async () => {
    const op = await createOperator(t, 'support');
    const m = await cabinetMerchant(t);
    const ctx = await browser.newContext({ viewport, locale: 'en-US' });
    const page = await ctx.newPage();
    page.on('dialog', (d) => { void d.accept(); });
    try {
      await page.goto(`${base}/operator/login`);
      await page.getByLabel('Email').fill(op.email);
      await page.getByLabel('Password').fill(OP_PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(/\/operator\/2fa$/);
      const secret = (await page.locator('#totp-secret').textContent())!.trim();
      await page.getByLabel('Code from the app').fill(await totpCode(secret));
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('link', { name: 'I have saved them, continue' }).click();

      await page.goto(`${base}/operator/merchants/${m.merchantId}`);
      const owner = page.locator('[data-testid="person"]').first();
      await expect(owner.locator('[data-testid="two-factor-reset"]').count()).resolves.toBe(0);
      await shot(page, size, '01-merchant');
      await owner.getByRole('button', { name: 'Send password reset link' }).click();
      await page.waitForURL(/\/operator\/merchants\/[^/?]+\?ok=/);
      const masked = `${m.email[0]}***${m.email.slice(m.email.indexOf('@'))}`;
      await expect(page.getByText(`A reset link was sent to ${masked}.`).isVisible()).resolves.toBe(true);
      await expect(page.content()).resolves.not.toMatch(/New cabinet password|secret-once/);
      await shot(page, size, '02-sent');

      // The merchant's side: the link from the dev mailbox (the sandbox profile has no SMTP_URL).
      const link = await waitFor(async () => {
        const mail = (await t.app.services.mail.list()).find((x) => x.kind === 'password_reset' && x.to === m.email && x.status === 'KEPT');
        return mail?.text ? /(http\S+password-reset\?token=[\w-]+)/.exec(mail.text)?.[1] : undefined;
      }, 'the reset link in the dev mailbox');
      const merchant = await browser.newContext({ viewport, locale: 'en-US' });
      const mp = await merchant.newPage();
      try {
        await mp.goto(link!);
        await expect(mp.getByText(m.email).isVisible()).resolves.toBe(true);
        await shot(mp, size, '03-reset-form');
        await mp.getByLabel('New password').fill('chosen in the browser 1');
        await mp.getByRole('button', { name: 'Set the password' }).click();
        await mp.waitForURL(/\/cabinet\/login\?reset=1/);
        await expect(mp.getByText('Your new password is set').isVisible()).resolves.toBe(true);
        await shot(mp, size, '04-signed-out');
        await mp.getByLabel('Email').fill(m.email);
        await mp.getByLabel('Password').fill('chosen in the browser 1');
        await mp.getByRole('button', { name: 'Sign in' }).click();
        await mp.waitForURL(`${base}/cabinet`);
        expect(PASSWORD).not.toBe('chosen in the browser 1');
      } finally {
        await merchant.close();
      }
    } finally {
      await ctx.close();
    }
  });
}
