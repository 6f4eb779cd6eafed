import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { launchChromium, listeningTestApp } from '../helpers/browser.js';
import { cabinetMerchant, PASSWORD, type CabinetMerchant } from '../cabinet/helpers.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { MerchantTeamService } from '../../src/domain/merchant/team.service.js';

/** The cabinet's live/test switch and the API page's two tokens, in real Chromium, phone and desktop. */

const ARTIFACTS = 'test/artifacts/test-mode';
const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;

let t: TestApp;
let base: string;
let browser: Browser;
let m: CabinetMerchant;
const bills = { live: '', test: '' };

async function paidBill(token: string, amount: string): Promise<string> {
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { authorization: `Bearer ${token}` }, payload: { amount, shop_id: m.shopId } });
  const id = r.json().bill_id as string;
  expect((await payRequest(t, id, cardForm())).json().status).toBe('SUCCESS');
  return id;
}

beforeAll(async () => {
  ({ t, base } = await listeningTestApp(ARTIFACTS));
  m = await cabinetMerchant(t);
  const test = await t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/test-token`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  bills.live = await paidBill(m.token, '111.11');
  bills.test = await paidBill(test.json().api_token, '222.22');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

for (const [label, viewport] of Object.entries(SIZES)) {
  test(`${label}: the API page shows both tokens; the switch moves every list and the balance to test data and back`, async () => {
    const ctx = await browser.newContext({ viewport, locale: 'en-US' });
    const page: Page = await ctx.newPage();
    try {
      await page.goto(`${base}/cabinet/login`);
      await page.getByLabel('Email').fill(m.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/cabinet`);

      // Live by default: the live balance, no banner.
      await expect(page.getByText('111.11').first().isVisible()).resolves.toBe(true);
      expect(await page.getByText('222.22').count()).toBe(0);
      expect(await page.getByTestId('test-banner').count()).toBe(0);
      await expect(page.getByTestId('mode').textContent()).resolves.toBe('Live');
      await page.screenshot({ path: `${ARTIFACTS}/01-live-dashboard-${label}.png`, fullPage: true });

      await page.goto(`${base}/cabinet/api`);
      const testToken = await page.getByTestId('test-token').inputValue();
      expect(testToken.length).toBeGreaterThan(20);
      await expect(page.getByRole('button', { name: 'Refresh test token' }).isVisible()).resolves.toBe(true);
      await expect(page.getByRole('link', { name: 'Refresh API token' }).isVisible()).resolves.toBe(true);
      await page.screenshot({ path: `${ARTIFACTS}/02-api-tokens-${label}.png`, fullPage: true });

      // Switch to test mode from the bills list: back on the bills list, test data only.
      await page.goto(`${base}/cabinet/bills`);
      expect(await page.getByText(bills.live).count()).toBeGreaterThan(0);
      await page.getByTestId('mode-switch').click();
      await page.waitForURL(`${base}/cabinet/bills`);
      await expect(page.getByTestId('test-banner').isVisible()).resolves.toBe(true);
      await expect(page.getByTestId('mode').textContent()).resolves.toBe('Test mode');
      expect(await page.getByText(bills.test).count()).toBeGreaterThan(0);
      expect(await page.getByText(bills.live).count()).toBe(0);
      await page.screenshot({ path: `${ARTIFACTS}/03-test-bills-${label}.png`, fullPage: true });

      await page.goto(`${base}/cabinet`);
      await expect(page.getByText('222.22').first().isVisible()).resolves.toBe(true);
      expect(await page.getByText('111.11').count()).toBe(0);
      await page.screenshot({ path: `${ARTIFACTS}/04-test-dashboard-${label}.png`, fullPage: true });

      // And back to live.
      await page.getByTestId('mode-switch').click();
      await page.waitForURL(`${base}/cabinet`);
      expect(await page.getByTestId('test-banner').count()).toBe(0);
      await expect(page.getByText('111.11').first().isVisible()).resolves.toBe(true);
    } finally {
      await ctx.close();
    }
  });
}

async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${base}/cabinet/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/cabinet`);
}

for (const [label, viewport] of Object.entries(SIZES)) {
  test(`${label}: signing out in test mode, the next sign-in is live; an accountant's API page shows no token`, async () => {
    const ctx = await browser.newContext({ viewport, locale: 'en-US' });
    const page: Page = await ctx.newPage();
    try {
      await signIn(page, m.email, PASSWORD);
      await page.getByTestId('mode-switch').click();
      await expect(page.getByTestId('mode').textContent()).resolves.toBe('Test mode');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/cabinet\/login/);
      expect((await ctx.cookies()).some((c) => c.name === 'cab_mode')).toBe(false);
      await signIn(page, m.email, PASSWORD);
      await expect(page.getByTestId('mode').textContent()).resolves.toBe('Live');
      expect(await page.getByTestId('test-banner').count()).toBe(0);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/cabinet\/login/);

      const team = new MerchantTeamService(t.db);
      const email = `acc-${label}-${Date.now()}@team.test`;
      const { token } = await team.invite(m.merchantId, { email, role: 'accountant' });
      await team.accept(token, 'member password 0123');
      await signIn(page, email, 'member password 0123');
      await page.goto(`${base}/cabinet/api`);
      expect(await page.getByTestId('test-token').count()).toBe(0);
      await expect(page.getByTestId('tokens-hidden').isVisible()).resolves.toBe(true);
      expect(await page.getByRole('link', { name: 'Refresh API token' }).count()).toBe(0);
      await page.screenshot({ path: `${ARTIFACTS}/05-api-accountant-${label}.png`, fullPage: true });
    } finally {
      await ctx.close();
    }
  });
}
