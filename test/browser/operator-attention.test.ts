import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { browserTestApp } from '../helpers/browser.js';
import { enrolledOperator, stuckPayment, type OperatorFixture } from '../operator/helpers.js';
import { SESSION_COOKIE } from '../../src/operator/context.js';

const ARTIFACTS = 'test/artifacts/operator-attention';
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

/** A browser signed in as `op` (the session its sign-in over HTTP opened, password and TOTP). */
async function browserOf(op: OperatorFixture, viewport: { width: number; height: number }): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport, locale: 'en-US' });
  await ctx.addCookies([{ name: SESSION_COOKIE, value: op.client.cookies.get(SESSION_COOKIE)!, url: `${base}/operator` }]);
  return ctx;
}

for (const [size, viewport] of Object.entries(SIZES)) {
  test(`${size}: a finance operator resolves an attention item with an outcome and a note; a support operator sees the list without the form`, async () => {
    const s = await stuckPayment(t);
    const finance = await enrolledOperator(t, 'finance');
    const support = await enrolledOperator(t, 'support');
    const ctx = await browserOf(finance, viewport);
    const page = await ctx.newPage();
    page.on('dialog', (d) => { void d.accept(); });
    try {
      await page.goto(`${base}/operator`);
      await page.getByRole('link', { name: 'Attention' }).click();
      await page.waitForURL(`${base}/operator/attention`);
      const row = page.locator(`tr[data-attention="${s.itemId}"]`);
      await expect(row.isVisible()).resolves.toBe(true);
      await expect(row.textContent()).resolves.toContain('no answer');
      await page.screenshot({ path: `${ARTIFACTS}/${size}-01-list.png`, fullPage: true });
      await row.getByLabel('Outcome').selectOption('SUCCESS');
      await row.getByLabel('Note').fill('bank statement shows it');
      await row.getByRole('button', { name: 'Resolve' }).click();
      await page.waitForURL(/\/operator\/attention\?ok=/);
      await expect(page.getByText(`payment ${s.paymentId} resolved SUCCESS.`).isVisible()).resolves.toBe(true);
      await expect(page.locator(`tr[data-attention="${s.itemId}"]`).count()).resolves.toBe(0);
      await page.screenshot({ path: `${ARTIFACTS}/${size}-02-resolved.png`, fullPage: true });
      expect((await t.db.pool.query('SELECT status::text FROM payments WHERE id = $1', [s.paymentId])).rows[0].status).toBe('SUCCESS');
    } finally {
      await ctx.close();
    }

    const other = await stuckPayment(t);
    const sctx = await browserOf(support, viewport);
    const spage = await sctx.newPage();
    try {
      await spage.goto(`${base}/operator/attention`);
      const row = spage.locator(`tr[data-attention="${other.itemId}"]`);
      await expect(row.isVisible()).resolves.toBe(true);
      await expect(row.getByRole('button', { name: 'Resolve' }).count()).resolves.toBe(0);
      await spage.screenshot({ path: `${ARTIFACTS}/${size}-03-support-read-only.png`, fullPage: true });
    } finally {
      await sctx.close();
    }
  });
}
