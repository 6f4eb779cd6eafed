import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launchChromium, shooter } from './cabinet-helpers.js';
import type { TestApp } from '../helpers/app.js';
import { listeningTestApp } from '../helpers/browser.js';
import { cabinetMerchant, PASSWORD, type CabinetMerchant } from '../cabinet/helpers.js';
import { totpCode } from '../operator/helpers.js';

const shoot = shooter('test/artifacts/cabinet-two-factor');

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;
let m: CabinetMerchant;

beforeAll(async () => {
  ({ t, base } = await listeningTestApp('test/artifacts/cabinet-two-factor'));
  m = await cabinetMerchant(t);
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: DESKTOP, locale: 'en-US' })).newPage();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function signInWithPassword() {
  await page.goto(`${base}/cabinet/login`);
  await page.getByLabel('Email').fill(m.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('a merchant turns on TOTP in the cabinet, signs out, and signing in then asks for the code: a wrong code is refused, the right one opens the cabinet (real Chromium)', async () => {
  await signInWithPassword();
  await page.waitForURL(`${base}/cabinet`);
  await page.getByRole('link', { name: 'Two-factor sign-in' }).first().click();
  await page.waitForURL(`${base}/cabinet/security`);
  // The QR code is a real image the browser decoded.
  expect(await page.locator('#totp-qr').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(100);
  await shoot(page, '01-set-up');
  const secret = (await page.locator('#totp-secret').textContent())!.trim();
  // The current step's code (the service accepts one step of drift either way, so a slow
  // machine moving to the next step meanwhile still passes); the sign-in below uses a later step.
  await page.getByLabel('Code from the app').fill(await totpCode(secret, 0));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.locator('#recovery-codes').waitFor();
  expect(await page.locator('#recovery-codes li').count()).toBe(10);
  await shoot(page, '02-recovery-codes');
  await page.getByRole('link', { name: 'I have saved them, continue' }).click();
  await page.getByTestId('totp-on').waitFor();
  await shoot(page, '03-on');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/cabinet\/login\?bye=1$/);

  await signInWithPassword();
  await page.waitForURL(`${base}/cabinet/2fa`);
  // No menu while the code is owed.
  expect(await page.getByRole('link', { name: 'Payments' }).count()).toBe(0);
  const valid = await Promise.all([-1, 0, 1, 2].map((k) => totpCode(secret, k)));
  await page.getByLabel('Code').fill(['000000', '111111', '222222', '333333', '444444'].find((x) => !valid.includes(x))!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#code-error').waitFor();
  expect(page.url()).toBe(`${base}/cabinet/2fa`);
  await shoot(page, '04-wrong-code');
  expect(await page.goto(`${base}/cabinet/payments`).then(() => page.url())).toBe(`${base}/cabinet/2fa`);

  // The next step's code: the enrolment spent the current one (a code is accepted once).
  await page.getByLabel('Code').fill(await totpCode(secret, 1));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/cabinet`);
  await expect(page.getByRole('heading', { name: 'Dashboard' }).isVisible()).resolves.toBe(true);
  const actions = (await t.db.pool.query('SELECT action FROM audit_log WHERE object_id = $1 ORDER BY id', [m.merchantId])).rows.map((r) => r.action);
  expect(actions).toEqual(expect.arrayContaining(['merchant.totp.enable', 'merchant.sign_in.failed', 'merchant.sign_in']));
});
