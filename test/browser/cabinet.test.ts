import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DESKTOP, PHONE, launchChromium, shooter } from './cabinet-helpers.js';
import { heldPayment } from '../factories/payment.js';
import type { TestApp } from '../helpers/app.js';
import { listeningTestApp } from '../helpers/browser.js';
import { cabinetMerchant, PASSWORD, type CabinetMerchant } from '../cabinet/helpers.js';
import { formatMoney } from '../../src/lib/money-format.js';

const ARTIFACTS = 'test/artifacts/cabinet';
const shoot = shooter(ARTIFACTS);

let t: TestApp;
let base: string;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let m: CabinetMerchant;

beforeAll(async () => {
  ({ t, base } = await listeningTestApp(ARTIFACTS));
  m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
  browser = await launchChromium();
  ctx = await browser.newContext({ viewport: DESKTOP, locale: 'en-US' });
  page = await ctx.newPage();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

test('a merchant signs in, bills, sees the payment and balance, edits the shop, refreshes the token and refunds, in real Chromium', async () => {
  // Sign in.
  await page.goto(`${base}/cabinet`);
  await expect.poll(() => page.url()).toContain('/cabinet/login');
  await shoot(page, '01-login');
  await page.getByLabel('Email').fill(m.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/cabinet`);
  await expect(page.getByRole('heading', { name: 'Dashboard' }).isVisible()).resolves.toBe(true);

  // Create a bill through the form.
  await page.getByRole('link', { name: 'Bills' }).first().click();
  await page.getByRole('link', { name: 'New bill' }).click();
  await shoot(page, '03-bill-new');
  await page.getByLabel('Amount').fill('1500.00');
  await page.getByLabel('Order ID').fill('order-browser-1');
  await page.getByRole('button', { name: 'Create' }).click();
  await page.waitForURL(/\/cabinet\/bills\/[A-Za-z0-9]+\?ok=bills\.created$/);
  await expect(page.getByText('Bill created.').isVisible()).resolves.toBe(true);
  const payUrl = await page.locator('#link-page').inputValue();
  expect(payUrl).toMatch(new RegExp(`^${base}/pay/[A-Za-z0-9]+$`));
  const billId = payUrl.split('/').pop()!;

  // Pay it on the payment page in a second tab.
  const payer = await ctx.newPage();
  await payer.goto(payUrl);
  await payer.locator('#card_number').fill('4242424242424242');
  await payer.locator('#card_expiry').fill('12/34');
  await payer.locator('#card_cvc').fill('123');
  await payer.getByTestId('pay-card').click();
  // The shop has no Success URL: the payer gets the receipt (issue 16).
  await payer.getByTestId('receipt').waitFor();
  expect(await payer.getByTestId('receipt').getAttribute('data-status')).toBe('SUCCESS');
  await payer.close();

  // The payment and the new balance in the cabinet.
  await page.reload();
  expect(await page.getByTestId('bill-status').textContent()).toBe('Success');
  await shoot(page, '04-bill');
  await page.getByRole('link', { name: 'Payments' }).first().click();
  const paymentLink = page.locator('table a[href^="/cabinet/payments/"]').first();
  await expect(paymentLink.isVisible()).resolves.toBe(true);
  await shoot(page, '05-payments');
  const payment = await t.db.prisma.payment.findFirstOrThrow({ where: { billId } });
  await page.getByRole('link', { name: 'Dashboard' }).click();
  const available = await page.getByTestId('available-RUB').textContent();
  expect(available).toBe(formatMoney(payment.accountAmount!.toString(), 'en', 'RUB'));
  expect(payment.accountAmount!.gt(0)).toBe(true);
  await shoot(page, '02-dashboard');

  // Change shop settings.
  await page.getByRole('link', { name: 'Shops' }).click();
  await shoot(page, '08-shops');
  await page.locator('table a[href^="/cabinet/shops/"]').first().click();
  await page.getByLabel('Result URL').fill('https://merchant.example.com/result');
  await page.getByLabel('Success URL').fill('https://merchant.example.com/success');
  await page.getByLabel('Default currency').selectOption('USD');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('Saved.').isVisible()).resolves.toBe(true);
  await shoot(page, '09-shop');
  const shop = await t.db.prisma.shop.findUniqueOrThrow({ where: { id: m.shopId } });
  expect(shop.resultUrl).toBe('https://merchant.example.com/result');
  expect(shop.successUrl).toBe('https://merchant.example.com/success');
  expect(shop.defaultCurrency).toBe('USD');

  // Refresh the API token: the old one is refused by the API at once, the new one works.
  const before = await fetch(`${base}/api/v1/merchant/balance`, { headers: { authorization: `Bearer ${m.token}` } });
  expect(before.status).toBe(200);
  await page.getByRole('link', { name: 'API integration' }).click();
  await shoot(page, '11-api');
  await page.getByRole('link', { name: 'Refresh API token' }).click();
  await shoot(page, '12-api-confirm');
  await page.getByRole('button', { name: 'Yes, refresh the token' }).click();
  const newToken = await page.getByTestId('new-token').inputValue();
  expect(newToken.length).toBeGreaterThanOrEqual(40);
  const old = await fetch(`${base}/api/v1/merchant/balance`, { headers: { authorization: `Bearer ${m.token}` } });
  expect(old.status).toBe(401);
  const fresh = await fetch(`${base}/api/v1/merchant/balance`, { headers: { authorization: `Bearer ${newToken}` } });
  expect(fresh.status).toBe(200);

  // Refund the payment (in part) from its page.
  await page.goto(`${base}/cabinet/payments/${payment.id}`);
  await page.getByLabel('Refund amount').fill('100.00');
  await page.getByRole('button', { name: 'Refund part' }).click();
  await expect(page.getByText('Refund created.').isVisible()).resolves.toBe(true);
  expect(await page.getByTestId('refunded').textContent()).toBe('RUB\u00a0100.00');
  await shoot(page, '06-payment');
  const refunds = await t.db.prisma.refund.findMany({ where: { paymentId: payment.id } });
  expect(refunds.map((r) => r.amount.toFixed(2))).toEqual(['100.00']);

  // The remaining pages, for the screenshots (and the Russian version of one).
  for (const [name, path] of [
    ['07-payouts', '/cabinet/payouts'], ['07-payout-new', '/cabinet/payouts/new'], ['10-webhooks', '/cabinet/webhooks'],
    ['13-accounts', '/cabinet/accounts'], ['14-bills', '/cabinet/bills'], ['15-dashboard-ru', '/cabinet?lang=ru'],
  ] as const) {
    const r = await page.goto(`${base}${path}`);
    expect(r?.status(), path).toBe(200);
    await shoot(page, name);
  }
  expect(await page.locator('html').getAttribute('lang')).toBe('ru');
});

test('the overview shows what two-stage payments hold on cards beside the balances, never in them (phone and desktop)', async () => {
  const h = await cabinetMerchant(t, { merchant: { verified: true } });
  await heldPayment(t, h, '700.00');
  await heldPayment(t, h, '55.50');
  const c = await browser.newContext({ viewport: DESKTOP, locale: 'en-US' });
  const p = await c.newPage();
  try {
    await p.goto(`${base}/cabinet/login`);
    await p.getByLabel('Email').fill(h.email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(`${base}/cabinet`);
    for (const size of [PHONE, DESKTOP]) {
      await p.setViewportSize(size);
      await p.reload();
      await expect(p.getByTestId('held-RUB').isVisible()).resolves.toBe(true);
      expect(await p.getByTestId('held-RUB').textContent()).toBe(formatMoney('755.50', 'en', 'RUB'));
      // Not received: the available balance does not count it.
      expect(await p.getByTestId('available-RUB').textContent()).toBe(formatMoney('0', 'en', 'RUB'));
      await expect(p.getByTestId('held-hint').isVisible()).resolves.toBe(true);
    }
    await shoot(p, '16-dashboard-held');
    const api = await fetch(`${base}/api/v1/merchant/balance`, { headers: { authorization: `Bearer ${h.token}` } });
    expect((await api.json()).balances.find((b: { currency: string }) => b.currency === 'RUB').balance_available).toBe('0.00000000');
  } finally {
    await c.close();
  }
});
