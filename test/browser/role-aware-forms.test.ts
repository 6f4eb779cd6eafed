import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { browserTestApp } from '../helpers/browser.js';
import { shooter } from './cabinet-helpers.js';
import { MEMBER_PASSWORD, PASSWORD, cabinetMerchant, type CabinetMerchant } from '../cabinet/helpers.js';
import { OP_PASSWORD, createOperator, moderatedPayout, totpCode } from '../operator/helpers.js';
import { payNewBill } from '../factories/payment.js';

/**
 * Issue 30 item 4, in real Chromium: the header says who is signed in (email and role) in the
 * cabinet and the console, and a role sees no form it cannot submit (a note says why) instead of
 * a form that answers a bare 403.
 */
const ART = 'test/artifacts/role-aware-forms';
const shoot = shooter(ART);
let t: TestApp;
let base: string;
let browser: Browser;
let m: CabinetMerchant;
let paid: { billId: string; paymentId: string };

beforeAll(async () => {
  ({ t, base, browser } = await browserTestApp(ART));
  m = await cabinetMerchant(t, { merchant: { grantRefunds: true, verified: true } });
  paid = await payNewBill(t, m, { amount: '1234.50', orderId: 'roles-1' });
});
afterAll(async () => { await browser?.close(); await t?.close(); });

async function member(role: 'accountant' | 'support' | 'developer'): Promise<string> {
  const { member: u, token } = await t.app.services.team.invite(m.merchantId, { email: `${role}-${Date.now()}@team.test`, role });
  await t.app.services.team.accept(token, MEMBER_PASSWORD);
  return u.email;
}

async function cabinetAs(email: string, password: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' })).newPage();
  await page.goto(`${base}/cabinet/login?lang=en`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/cabinet`);
  return page;
}

test('cabinet: an accountant is named in the header and sees no bill, payout, refund, shop or webhook form; the owner sees them all', async () => {
  const email = await member('accountant');
  const page = await cabinetAs(email, MEMBER_PASSWORD);
  await expect(page.getByTestId('who').textContent()).resolves.toContain(email);
  await expect(page.getByTestId('who').locator('.role').textContent()).resolves.toBe('Accountant');
  await shoot(page, 'cabinet-accountant-dashboard');

  await page.goto(`${base}/cabinet/bills`);
  await expect(page.getByRole('link', { name: 'New bill' }).count()).resolves.toBe(0);
  await page.goto(`${base}/cabinet/bills/new`);
  await expect(page.locator('form[action="/cabinet/bills"]').count()).resolves.toBe(0);
  await expect(page.getByTestId('role-note').isVisible()).resolves.toBe(true);
  await shoot(page, 'cabinet-accountant-bill-new');
  await page.goto(`${base}/cabinet/payouts`);
  await expect(page.getByRole('link', { name: 'New payout' }).count()).resolves.toBe(0);
  await page.goto(`${base}/cabinet/payments/${paid.paymentId}`);
  await expect(page.locator(`form[action="/cabinet/payments/${paid.paymentId}/refund"]`).count()).resolves.toBe(0);
  await expect(page.getByTestId('role-note').isVisible()).resolves.toBe(true);
  await shoot(page, 'cabinet-accountant-payment');
  await page.goto(`${base}/cabinet/shops/${m.shopId}`);
  // The settings are shown, read-only: the fields and the save button are disabled.
  await expect(page.getByLabel('Result URL').isDisabled()).resolves.toBe(true);
  await expect(page.getByRole('button', { name: 'Save' }).isDisabled()).resolves.toBe(true);
  await expect(page.getByRole('button', { name: /test postback/i }).count()).resolves.toBe(0);
  await shoot(page, 'cabinet-accountant-shop');
  await page.goto(`${base}/cabinet/webhooks`);
  await expect(page.getByRole('button', { name: 'Save' }).isDisabled()).resolves.toBe(true);

  // Support may refund: the refund form is there.
  const support = await cabinetAs(await member('support'), MEMBER_PASSWORD);
  await support.goto(`${base}/cabinet/payments/${paid.paymentId}`);
  await expect(support.locator(`form[action="/cabinet/payments/${paid.paymentId}/refund"]`).count()).resolves.toBe(2);
  await expect(support.getByTestId('who').locator('.role').textContent()).resolves.toBe('Support');

  // The owner (the merchant's own login) sees every form.
  const owner = await cabinetAs(m.email, PASSWORD);
  await expect(owner.getByTestId('who').textContent()).resolves.toContain(m.email);
  await expect(owner.getByTestId('who').locator('.role').textContent()).resolves.toBe('Owner');
  await owner.goto(`${base}/cabinet/bills`);
  await expect(owner.getByRole('link', { name: 'New bill' }).isVisible()).resolves.toBe(true);
  await owner.goto(`${base}/cabinet/shops/${m.shopId}`);
  await expect(owner.getByLabel('Result URL').isDisabled()).resolves.toBe(false);
  await expect(owner.getByTestId('role-note').count()).resolves.toBe(0);
});

async function consoleAs(role: 'auditor' | 'finance'): Promise<{ page: Page; email: string }> {
  const op = await createOperator(t, role);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' })).newPage();
  await page.goto(`${base}/operator/login`);
  await page.getByLabel('Email').fill(op.email);
  await page.getByLabel('Password').fill(OP_PASSWORD);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(/\/operator\/2fa$/);
  const secret = (await page.locator('#totp-secret').textContent())!.trim();
  await page.getByLabel('Code from the app').fill(await totpCode(secret));
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('link', { name: 'I have saved them, continue' }).click();
  await page.waitForURL(`${base}/operator`);
  return { page, email: op.email };
}

test('console: the header names the operator and the role; an auditor sees no moderation, merchant or redelivery form', async () => {
  const { payoutId } = await moderatedPayout(t);
  const { page, email } = await consoleAs('auditor');
  await expect(page.locator('header .who').textContent()).resolves.toBe(email);
  await expect(page.locator('header .role').textContent()).resolves.toBe('auditor');
  await page.goto(`${base}/operator/payouts`);
  await expect(page.locator(`tr[data-payout="${payoutId}"]`).isVisible()).resolves.toBe(true);
  await expect(page.locator(`form[action="/operator/payouts/${payoutId}/approve"]`).count()).resolves.toBe(0);
  await shoot(page, 'console-auditor-payouts');
  await page.goto(`${base}/operator/merchants/${m.merchantId}`);
  await expect(page.locator('form[method="post"]:not(.signout)').count()).resolves.toBe(0);
  await shoot(page, 'console-auditor-merchant');
  await page.goto(`${base}/operator/merchants`);
  await expect(page.locator('form[action="/operator/merchants"][method="post"]').count()).resolves.toBe(0);

  const finance = await consoleAs('finance');
  await finance.page.goto(`${base}/operator/payouts`);
  await expect(finance.page.locator(`form[action="/operator/payouts/${payoutId}/approve"]`).count()).resolves.toBe(1);
});
