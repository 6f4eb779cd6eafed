import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DESKTOP, launchChromium, PHONE, shooter } from './cabinet-helpers.js';
import type { TestApp } from '../helpers/app.js';
import { listeningTestApp } from '../helpers/browser.js';
import { createBill } from '../factories/payment.js';
import { cabinetMerchant, PASSWORD, type CabinetMerchant } from '../cabinet/helpers.js';
import { DECLINED_CARD, cardForm, payNewBill } from '../factories/payment.js';

/**
 * Issue 16 in real Chromium, phone and desktop: reloads after every submission do nothing
 * twice, the lists search and filter, the export link downloads a CSV, the webhook log, the
 * payout page; money as people read it. Screenshots in test/artifacts/cabinet-lists/.
 */
const ARTIFACTS = 'test/artifacts/cabinet-lists';
const shoot = shooter(ARTIFACTS);

let t: TestApp;
let base: string;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let m: CabinetMerchant;
let declinedId: string;

beforeAll(async () => {
  ({ t, base } = await listeningTestApp(ARTIFACTS));
  m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
  for (let i = 1; i <= 3; i++) await payNewBill(t, m, { amount: `${i}250.00`, orderId: `shop-order-${i}` });
  declinedId = (await payNewBill(t, m, { amount: '99.90', orderId: 'shop-order-declined' }, cardForm(DECLINED_CARD))).paymentId;
  browser = await launchChromium();
  ctx = await browser.newContext({ viewport: DESKTOP, locale: 'en-US', acceptDownloads: true });
  page = await ctx.newPage();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

test('a first visit, then lists, search, refund labels, export, reloads after each form, in real Chromium', async () => {
  await page.goto(`${base}/cabinet`);
  await expect.poll(() => page.url()).toContain('/cabinet/login');
  expect(await page.locator('body').textContent()).not.toContain('session has expired');
  await page.getByLabel('Email').fill(m.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/cabinet`);
  await shoot(page, '01-dashboard');

  // The payment list: order id and bill columns, money with separators and the ruble sign.
  await page.goto(`${base}/cabinet/payments`);
  await expect(page.getByText('shop-order-2').isVisible()).resolves.toBe(true);
  await expect(page.getByText('RUB 2,250.00').first().isVisible()).resolves.toBe(true);
  // A declined payment says why in the list (the API's error_message; error_code as its title).
  const reason = page.getByTestId('failure-reason');
  expect(await reason.count()).toBe(1);
  await expect(reason.textContent()).resolves.toBe('The card was declined by the issuer.');
  await expect(reason.getAttribute('title')).resolves.toBe('card_declined');
  await expect(reason.isVisible()).resolves.toBe(true);
  await shoot(page, '02-payments');
  await page.goto(`${base}/cabinet/payments/${declinedId}`);
  await expect(page.getByTestId('failure-reason').isVisible()).resolves.toBe(true);
  await expect(page.getByTestId('failure-reason').textContent()).resolves.toContain('The card was declined by the issuer.');
  await shoot(page, '02b-payment-failed');
  await page.goto(`${base}/cabinet/payments`);

  // Search by order id.
  await page.getByLabel('Search').fill('shop-order-3');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/q=shop-order-3/);
  expect(await page.locator('table.list tbody tr').count()).toBe(1);
  await shoot(page, '03-payments-search');

  // Refund part of it; reload the landing page twice: one refund, labelled "Partly refunded".
  await page.locator('table.list tbody tr a[href^="/cabinet/payments/"]').first().click();
  await page.getByLabel('Refund amount').fill('1 000,00');
  await page.getByRole('button', { name: 'Refund part' }).click();
  await expect(page.getByText('Refund created.').isVisible()).resolves.toBe(true);
  const paymentUrl = page.url();
  await page.reload();
  await page.reload();
  const paymentId = /\/payments\/([A-Za-z0-9]+)/.exec(paymentUrl)![1]!;
  expect(await t.db.prisma.refund.count({ where: { paymentId } })).toBe(1);
  expect((await t.db.prisma.refund.findFirstOrThrow({ where: { paymentId } })).amount.toFixed(2)).toBe('1000.00');
  // Back to the form page and send it again: refused, nothing more.
  await page.goBack();
  await page.goBack();
  await shoot(page, '04-payment-refunded');
  await page.goto(`${base}/cabinet/payments?q=shop-order-3`);
  await expect(page.getByTestId('refund-label').textContent()).resolves.toBe('Partly refunded');

  // Filter by status and export what is shown.
  await page.goto(`${base}/cabinet/payments?status=SUCCESS`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-link').click()]);
  expect(download.suggestedFilename()).toBe('payments.csv');
  const csv = readFileSync((await download.path())!);
  expect(csv.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
  expect(csv.toString('utf8')).toContain('shop-order-1');
  expect(csv.toString('utf8')).not.toContain('shop-order-declined');

  // Refresh the API token; reload: no second token.
  await page.goto(`${base}/cabinet/api/refresh`);
  await page.getByRole('button', { name: 'Yes, refresh the token' }).click();
  const token = await page.getByTestId('new-token').inputValue();
  const hash = (await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).apiTokenHash;
  await shoot(page, '05-token-once');
  await page.reload();
  expect(await page.getByTestId('new-token').count()).toBe(0);
  expect((await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).apiTokenHash).toBe(hash);
  const ok = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${token}` } });
  expect(ok.statusCode).toBe(200);

  // A payout; reload; then its page.
  const acc = await t.app.services.payoutAccounts.create(m.merchantId, { type: 'card', identifier: '4111111111111111', cardHolder: 'IVAN IVANOV' });
  await page.goto(`${base}/cabinet/payouts/new`);
  await page.getByLabel('Payout account').selectOption(acc.id);
  await page.getByLabel('Amount, RUB').fill('1 500,50');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByText('Payout created.').isVisible()).resolves.toBe(true);
  await page.reload();
  expect(await t.db.prisma.payout.count({ where: { merchantId: m.merchantId } })).toBe(1);
  const payout = await t.db.prisma.payout.findFirstOrThrow({ where: { merchantId: m.merchantId } });
  expect(payout.amount.toFixed(2)).toBe('1500.50');
  await t.db.pool.query("UPDATE payouts SET status = 'FAIL', failure_reason = 'The issuer refused the transfer', finished_at = now() WHERE id = $1", [payout.id]);
  await shoot(page, '06-payouts');
  await page.locator(`a[href="/cabinet/payouts/${payout.id}"]`).click();
  await expect(page.getByTestId('failure-reason').textContent()).resolves.toBe('The issuer refused the transfer');
  await shoot(page, '07-payout-failed');

  // The webhook log and the refunds list.
  await page.goto(`${base}/cabinet/webhooks`);
  await expect(page.getByTestId('event-status').first().textContent()).resolves.toBe('Not configured');
  await shoot(page, '08-webhooks');
  await page.goto(`${base}/cabinet/payments/refunds?lang=ru`);
  await expect(page.getByText('1 000,00 ₽').first().isVisible()).resolves.toBe(true);
  await shoot(page, '09-refunds-ru');

  // Every list fits a phone: no sideways scrolling (rows become labelled cards).
  await page.setViewportSize(PHONE);
  for (const path of ['/cabinet/bills', '/cabinet/payments', '/cabinet/payments/refunds', '/cabinet/payouts', '/cabinet/webhooks']) {
    await page.goto(`${base}${path}?lang=en`);
    const wide = await page.evaluate(() => Math.max(document.documentElement.scrollWidth,
      ...[...document.querySelectorAll('.table-wrap')].map((w) => w.scrollWidth - w.clientWidth + 390)));
    expect(wide, path).toBeLessThanOrEqual(PHONE.width);
  }
  await page.goto(`${base}/cabinet/bills`);
  await shoot(page, '11-bills');
});

test("the customer's receipt when the shop has no Success URL: phone and desktop, printable", async () => {
  const billId = await createBill(t, m, { amount: '1499.90', name: 'Espresso machine', orderId: 'shop-order-receipt' });
  await t.db.pool.query("UPDATE bills SET return_url = 'https://shop.example/orders/receipt' WHERE id = $1", [billId]);
  const p = await ctx.newPage();
  await p.goto(`${base}/pay/${billId}`);
  await p.getByLabel('Card number').fill('4242424242424242');
  await p.getByLabel(/Expiry/).fill('1239');
  await p.getByLabel('CVC').fill('123');
  await p.getByLabel('CVC').press('Enter');
  await p.getByTestId('receipt').waitFor();
  await expect(p.getByTestId('receipt-amount').textContent()).resolves.toBe('RUB\u00a01,499.90');
  await expect(p.getByTestId('back-to-shop').getAttribute('href')).resolves.toBe('https://shop.example/orders/receipt');
  await shoot(p, '10-receipt');
  await p.emulateMedia({ media: 'print' });
  await expect(p.getByRole('button', { name: 'Print receipt' }).isVisible()).resolves.toBe(false);
  await p.screenshot({ path: `${ARTIFACTS}/10-receipt-print.png`, fullPage: true });
  await p.close();
});
