import { Decimal } from 'decimal.js';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { startWorkers, stopWorkers, type Worker } from '../../src/workers/index.js';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { launchChromium, listeningTestApp } from '../helpers/browser.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, type BillOptions } from '../factories/payment.js';
import { startShopReceiver, type ShopReceiver } from '../browser/payment-page-helpers.js';
import { TBankEmulator } from '../emulators/tbank.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';

/**
 * The whole service for the end-to-end connector tests (issue 15 "Done when"): the app listening
 * on 127.0.0.1 with ALL its workers (refunds, payouts, payment reconciliation, outbox), a shop
 * receiving the Success/Fail redirects and the postbacks, and Chromium. Connectors and routing
 * are set only through the operator API.
 */
export interface E2E {
  t: TestApp;
  base: string;
  shop: ShopReceiver;
  browser: Browser;
  workers: Worker[];
  close(): Promise<void>;
}

export const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;
const adminAuth = { authorization: `Bearer ${ADMIN_TOKEN}` };

export async function startE2E(artifacts: string): Promise<E2E> {
  const shop = await startShopReceiver();
  const { t, base } = await listeningTestApp(artifacts, {
    // Reconciliation asks soon (the lost-notification case) and workers poll fast.
    CONNECTOR_TIMEOUT_MS: '3000', RECONCILE_FIRST_CHECK_MS: '300', RECONCILE_MAX_DELAY_MS: '1000', RECONCILE_POLL_MS: '100',
    PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000', WORKER_LEASE_MS: '5000',
    // A decline read without its reason (T-Bank's GetState) waits this long for the notification.
    DECLINE_REASON_WAIT_MS: '3000',
  });
  const workers = startWorkers({ config: t.config, db: t.db, services: t.app.services, log: t.app.log });
  const browser = await launchChromium();
  return {
    t, base, shop, browser, workers,
    async close() {
      await browser.close();
      await stopWorkers(workers);
      await shop.close();
      await t.close();
    },
  };
}

export async function admin(e: E2E, method: 'GET' | 'PUT' | 'PATCH' | 'POST', url: string, payload?: object) {
  const r = await e.t.app.inject({ method, url: `/admin/v1${url}`, headers: adminAuth, ...(payload ? { payload } : {}) });
  return { status: r.statusCode, body: r.body ? r.json() : null };
}

/** A merchant whose shop sends the payer to our receiver, verified and granted refunds and payouts, routed by the operator API. */
export async function routedMerchant(e: E2E, routing: Record<string, string[]>): Promise<MerchantFixture> {
  const m = await createMerchant(e.t, { shop: { name: 'Лавка', successUrl: `${e.shop.base}/success`, failUrl: `${e.shop.base}/fail`, resultUrl: `${e.shop.base}/result` } });
  const r = await admin(e, 'PATCH', `/merchants/${m.merchantId}`, { verified: true, grants: { refunds: true, regular_payouts: true }, routing });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return m;
}

/** Both providers' emulators, a test-mode connector for each, and a merchant with no card fee routed to each (what is credited is what was paid). */
export async function cardProviders(e: E2E, names: { tb: string; yk: string }) {
  const tb = await TBankEmulator.start({ retryBaseMs: 50 });
  const yk = await YooKassaEmulator.start({ notifyUrl: `${e.base}/providers/${names.yk}/notifications`, retryBaseMs: 50 });
  expect((await admin(e, 'PUT', `/connectors/${names.tb}`, { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } })).status).toBe(201);
  expect((await admin(e, 'PUT', `/connectors/${names.yk}`, { kind: 'yookassa', mode: 'test', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.1' } })).status).toBe(201);
  const mYk = await routedMerchant(e, { payment_card: [names.yk] });
  const mTb = await routedMerchant(e, { payment_card: [names.tb] });
  for (const m of [mYk, mTb]) await e.t.db.prisma.merchant.update({ where: { id: m.merchantId }, data: { paymentCardPercent: 0, paymentCardFixed: 0 } });
  return { tb, yk, mYk, mTb };
}

export const billFor = (e: E2E, m: MerchantFixture, o: BillOptions) => createBill(e.t, m, o);

/** The balance of one ledger account as the operator API shows it (2 decimals; '0.00' when it has none). */
export async function accountBalances(e: E2E, currency = 'RUB'): Promise<(id: string) => string> {
  const r = await admin(e, 'GET', `/ledger/accounts?currency=${currency}`);
  expect(r.status).toBe(200);
  const map = new Map((r.body.accounts as Array<{ id: string; balance: string }>).map((a) => [a.id, new Decimal(a.balance).toFixed(2)]));
  return (id: string) => map.get(id) ?? '0.00';
}

export async function ledgerOk(e: E2E): Promise<void> {
  const v = await admin(e, 'GET', '/ledger/verify');
  expect(v.body.problems ?? []).toEqual([]);
  expect(v.body.ok).toBe(true);
}

export async function one<T = Record<string, any>>(e: E2E, sql: string, v: unknown[] = []): Promise<T> {
  return (await e.t.db.pool.query(sql, v)).rows[0] as T;
}

export async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A refund through the merchant API (`refund/full/create` without an amount, `refund/partial/create` with one). */
export async function refundVia(e: E2E, m: MerchantFixture, paymentId: string, amount?: string) {
  const r = await e.t.app.inject({
    method: 'POST', url: `/api/v1/refund/${amount ? 'partial' : 'full'}/create`, headers: m.auth,
    payload: amount ? { payment_id: paymentId, amount } : { payment_id: paymentId },
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.json() as { id: string; status: string; amount: string | number };
}

export async function refundFinal(e: E2E, id: string): Promise<{ status: string; provider_ref: string | null; failure_reason: string | null }> {
  return until(`refund ${id} final`, async () => {
    const r = await one<{ status: string; provider_ref: string | null; failure_reason: string | null }>(e, `SELECT status::text, provider_ref, failure_reason FROM refunds WHERE id = $1`, [id]);
    return r.status === 'SUCCESS' || r.status === 'FAIL' ? r : null;
  });
}

export async function newPage(e: E2E, size: keyof typeof SIZES): Promise<Page> {
  const ctx = await e.browser.newContext({ viewport: SIZES[size], isMobile: size === 'phone', locale: 'ru-RU' });
  return ctx.newPage();
}

/** Opens /pay/{bill}, checks the card panel has no card fields (the provider hosts the form), and chooses card. */
export async function chooseCard(e: E2E, page: Page, billId: string, shot: string): Promise<string> {
  await page.goto(`${e.base}/pay/${billId}`);
  expect(await page.locator('input[name="card_number"]').count()).toBe(0);
  await page.screenshot({ path: shot, fullPage: true });
  await Promise.all([page.waitForURL(/\/payments\//), page.getByTestId('pay-card').click()]);
  return page.url();
}
