import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startShopReceiver, type ShopReceiver } from './payment-page-helpers.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill } from '../factories/payment.js';

/**
 * The payer's actions in real Chromium (brief P item 3), phone and desktop: 4242, 3-D Secure
 * confirmed and failed on the sandbox bank page, SBP confirmed with another amount
 * (UNDERPAID); after each, reloading the payment's page charges nothing and opens nothing.
 */
const ART = 'test/artifacts';
const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;

let t: TestApp;
let m: MerchantFixture;
let browser: Browser;
let receiver: ShopReceiver;
let receiverBase: string;
let base: string;

beforeAll(async () => {
  mkdirSync(ART, { recursive: true });
  receiver = await startShopReceiver();
  receiverBase = receiver.base;
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  m = await createMerchant(t, { shop: { name: 'Лавка Чая', successUrl: `${receiverBase}/success`, failUrl: `${receiverBase}/fail` } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
});

const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];
const paymentsOf = async (billId: string) => (await t.db.pool.query(`SELECT id, status::text FROM payments WHERE bill_id = $1`, [billId])).rows as Array<{ id: string; status: string }>;
const credits = async (id: string) => (await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [id])).n as number;

async function payByCard(page: Page, billId: string, number: string) {
  await page.goto(`${base}/pay/${billId}`);
  await page.getByLabel(/Card number/).fill(number);
  await page.getByLabel(/Expiry/).fill('1234');
  await page.getByLabel('CVC').fill('123');
}

/** After the flow: the payment's page reloaded twice (and the form re-posted by going back) opens nothing and credits once. */
async function reloadChangesNothing(page: Page, billId: string, paymentUrl: string) {
  const before = await paymentsOf(billId);
  expect(before).toHaveLength(1);
  for (let i = 0; i < 2; i += 1) {
    await page.goto(paymentUrl);
    await page.waitForLoadState('load');
  }
  const after = await paymentsOf(billId);
  expect(after).toEqual(before);
  expect(await credits(after[0]!.id)).toBe(after[0]!.status === 'FAIL' ? 0 : 1);
}

for (const [size, viewport] of Object.entries(SIZES)) {
  describe(`payer's actions in Chromium (${size})`, () => {
    it('4242 pays at once: 303 to the payment page, then the Success URL; a reload charges nothing', async () => {
      const billId = await createBill(t, m, { amount: '150.00', orderId: `c-${size}` });
      const ctx = await browser.newContext({ viewport, locale: 'en-US' });
      const page = await ctx.newPage();
      await payByCard(page, billId, '4242424242424242');
      await Promise.all([page.waitForURL(`${receiverBase}/success`), page.getByTestId('pay-card').click()]);
      expect(receiver.received.at(-1)!.fields.SignatureValue).toBe(md5Upper(`150.00:c-${size}:${m.token}`));
      const [p] = await paymentsOf(billId);
      expect(p!.status).toBe('SUCCESS');
      await reloadChangesNothing(page, billId, `${base}/pay/${billId}/payments/${p!.id}`);
      await ctx.close();
    });

    for (const decision of ['confirm', 'fail'] as const) {
      it(`3-D Secure ${decision === 'confirm' ? 'confirmed' : 'failed'} on the sandbox bank page, back to our page, then ${decision === 'confirm' ? 'the Success URL' : 'the form with the reason, whose "back to the shop" is the Fail URL'}`, async () => {
        const billId = await createBill(t, m, { amount: '99.00', orderId: `3ds-${decision}-${size}` });
        const ctx = await browser.newContext({ viewport, locale: 'en-US' });
        const page = await ctx.newPage();
        await payByCard(page, billId, '4000002760003184');
        await Promise.all([page.waitForURL(/\/payments\//), page.getByTestId('pay-card').click()]);
        await expect(page.getByTestId('waiting').getAttribute('data-action')).resolves.toBe('3ds');
        const paymentUrl = page.url();
        if (decision === 'confirm') await page.screenshot({ path: `${ART}/actions-${size}-3ds-waiting.png`, fullPage: true });
        // A reload of the waiting page opens nothing new.
        await page.reload();
        expect(await paymentsOf(billId)).toHaveLength(1);
        await Promise.all([page.waitForURL(/\/sandbox\/3ds\//), page.getByTestId('action-link').click()]);
        expect(await page.getByTestId('sandbox-amount').textContent()).toBe('RUB\u00a099.00');
        if (decision === 'confirm') await page.screenshot({ path: `${ART}/actions-${size}-3ds-bank.png`, fullPage: true });
        const target = decision === 'confirm' ? `${receiverBase}/success` : /\?declined=/;
        await Promise.all([page.waitForURL(target), page.getByTestId(decision === 'confirm' ? 'sandbox-confirm' : 'sandbox-fail').click()]);
        if (decision === 'fail') {
          expect(await page.getByTestId('decline-reason').getAttribute('data-code')).toBe('payer_declined');
          await page.screenshot({ path: `${ART}/actions-${size}-3ds-declined.png`, fullPage: true });
          await Promise.all([page.waitForURL(`${receiverBase}/fail`), page.getByTestId('fail-back').click()]);
        }
        expect(await page.locator('#landed').textContent()).toBe(decision === 'confirm' ? 'Thank you' : 'Payment failed');
        expect((await paymentsOf(billId))[0]!.status).toBe(decision === 'confirm' ? 'SUCCESS' : 'FAIL');
        await reloadChangesNothing(page, billId, paymentUrl);
        await ctx.close();
      });
    }

    it('SBP: QR code and bank-app links; the payer confirms another amount in the bank app: UNDERPAID, the waiting page moves on by itself', async () => {
      const billId = await createBill(t, m, { amount: '500.00', orderId: `sbp-${size}`, paymentMethod: 'SBP' });
      const ctx = await browser.newContext({ viewport, locale: 'ru-RU' });
      const page = await ctx.newPage();
      await page.goto(`${base}/pay/${billId}`);
      await Promise.all([page.waitForURL(/\/payments\//), page.getByTestId('pay-sbp').click()]);
      await expect(page.getByTestId('sbp-qr').locator('svg').isVisible()).resolves.toBe(true);
      await expect(page.getByTestId('bank-app').first().isVisible()).resolves.toBe(true);
      await page.screenshot({ path: `${ART}/actions-${size}-sbp-waiting.png`, fullPage: true });
      const paymentUrl = page.url();
      // The bank app runs elsewhere (a second tab here); the waiting page polls and moves on.
      const bankApp = await ctx.newPage();
      await bankApp.goto(`${base}${await page.getByTestId('bank-app').first().getAttribute('href')}`);
      await bankApp.getByLabel(/Сумма перевода/).fill('420.00');
      await bankApp.getByTestId('sandbox-confirm').click();
      await page.waitForURL(`${receiverBase}/success`, { timeout: 15_000 });
      expect(receiver.received.at(-1)!.fields).toMatchObject({ InvId: `sbp-${size}`, OutSum: '420.00' });
      expect(await one(`SELECT status::text FROM bills WHERE id = $1`, [billId])).toEqual({ status: 'UNDERPAID' });
      await reloadChangesNothing(page, billId, paymentUrl);
      await ctx.close();
    });
  });
}
