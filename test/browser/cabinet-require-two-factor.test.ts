import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { PHONE, launchChromium, shooter } from './cabinet-helpers.js';
import type { TestApp } from '../helpers/app.js';
import { listeningTestApp } from '../helpers/browser.js';
import { MEMBER_PASSWORD, PASSWORD, cabinetMerchant, type CabinetMerchant } from '../cabinet/helpers.js';
import { totpCode } from '../operator/helpers.js';
import { newTotpSecret } from '../../src/domain/operator/two-factor.js';

/**
 * Issue 17, at phone size in real Chromium: the owner ticks "Require two-factor authentication
 * for everyone" on the team page; a developer who then signs in lands on the set-up page, cannot
 * reach another page, scans the key, gets the recovery codes and then the cabinet opens.
 */
const shoot = shooter('test/artifacts/cabinet-require-two-factor');

let t: TestApp;
let base: string;
let browser: Browser;
let m: CabinetMerchant;
let ownerSecret: string;
let devEmail: string;

beforeAll(async () => {
  ({ t, base } = await listeningTestApp('test/artifacts/cabinet-require-two-factor'));
  m = await cabinetMerchant(t);
  // Set-up through the services: the owner has TOTP on, a developer has a password and no TOTP.
  ownerSecret = newTotpSecret();
  await t.app.services.cabinetTwoFactor.merchants.enable(m.merchantId, ownerSecret, await totpCode(ownerSecret, -1));
  const { member, token } = await t.app.services.team.invite(m.merchantId, { email: `dev-${Date.now()}@team.test`, role: 'developer' });
  await t.app.services.team.accept(token, MEMBER_PASSWORD);
  devEmail = member.email;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function phonePage(): Promise<Page> {
  return (await browser.newContext({ viewport: PHONE, locale: 'en-US' })).newPage();
}

async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${base}/cabinet/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Both widths for the record, then back to the phone the walk runs at. */
async function shot(page: Page, name: string) {
  await shoot(page, name);
  await page.setViewportSize(PHONE);
}

test('the owner requires 2FA on the team page; a developer signing in is walked through enrolment before anything else opens (phone, real Chromium)', async () => {
  const owner = await phonePage();
  await signIn(owner, m.email, PASSWORD);
  await owner.waitForURL(`${base}/cabinet/2fa`);
  await owner.getByLabel('Code').fill(await totpCode(ownerSecret, 0));
  await owner.getByRole('button', { name: 'Sign in' }).click();
  await owner.waitForURL(`${base}/cabinet`);
  await owner.goto(`${base}/cabinet/team`);
  await owner.getByLabel('Require two-factor authentication for everyone').check();
  await shot(owner, '01-owner-team-page');
  await owner.getByTestId('require-save').click();
  await owner.waitForURL(/\/cabinet\/team\?ok=common\.saved$/);
  expect(await owner.getByLabel('Require two-factor authentication for everyone').isChecked()).toBe(true);
  expect((await t.db.pool.query('SELECT require_two_factor FROM merchants WHERE id = $1', [m.merchantId])).rows[0].require_two_factor).toBe(true);

  const dev = await phonePage();
  await signIn(dev, devEmail, MEMBER_PASSWORD);
  await dev.waitForURL(`${base}/cabinet/security?required=1`);
  await dev.getByTestId('two-factor-required').waitFor();
  // No menu to follow; the QR code is a real image the browser decoded; it fits the phone's width.
  expect(await dev.getByRole('link', { name: 'Payments' }).count()).toBe(0);
  expect(await dev.locator('#totp-qr').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(100);
  expect(await dev.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  await shot(dev, '02-developer-must-enrol');
  await dev.goto(`${base}/cabinet/api`);
  expect(dev.url()).toBe(`${base}/cabinet/security?required=1`);

  const secret = (await dev.locator('#totp-secret').textContent())!.trim();
  await dev.getByLabel('Code from the app').fill(await totpCode(secret, -1));
  await dev.getByRole('button', { name: 'Turn on' }).click();
  await dev.locator('#recovery-codes').waitFor();
  expect(await dev.locator('#recovery-codes li').count()).toBe(10);
  await shot(dev, '03-developer-recovery-codes');
  await dev.getByRole('link', { name: 'I have saved them, continue' }).click();
  await dev.getByTestId('totp-on').waitFor();
  await dev.goto(`${base}/cabinet/api`);
  expect(dev.url()).toBe(`${base}/cabinet/api`);
  await shot(dev, '04-developer-in');
});
