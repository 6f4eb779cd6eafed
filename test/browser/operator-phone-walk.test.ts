import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { browserTestApp } from '../helpers/browser.js';
import { deadEvent, enrolledOperator, moderatedPayout, stuckPayment } from '../operator/helpers.js';
import { SESSION_COOKIE } from '../../src/operator/context.js';

const ARTIFACTS = 'test/artifacts/operator-phone';
const PHONE = { width: 390, height: 844 };

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

test('every console page fits a phone: neither the page nor a table scrolls sideways at 390 px, with data on each page (real Chromium, screenshots)', async () => {
  const { merchantId } = await moderatedPayout(t);
  await deadEvent(t, merchantId);
  await stuckPayment(t);
  const admin = await enrolledOperator(t, 'admin');
  await admin.client.act('/operator/payouts', `/operator/payouts/${(await t.db.pool.query(`SELECT id FROM payouts WHERE merchant_id = $1`, [merchantId])).rows[0].id}/approve`);
  const ctx = await browser.newContext({ viewport: PHONE, locale: 'en-US' });
  await ctx.addCookies([{ name: SESSION_COOKIE, value: admin.client.cookies.get(SESSION_COOKIE)!, url: `${base}/operator` }]);
  const page = await ctx.newPage();
  const pages: [string, string][] = [
    ['home', '/operator'], ['merchants', '/operator/merchants'], ['merchant', `/operator/merchants/${merchantId}`],
    ['payouts', '/operator/payouts?status=PROCESS'], ['attention', '/operator/attention'], ['events', '/operator/events'],
    ['ledger', `/operator/ledger?merchant_id=${merchantId}`], ['connectors', '/operator/connectors'], ['audit', '/operator/audit'], ['rates', '/operator/rates'],
  ];
  const wide: string[] = [];
  try {
    for (const [name, url] of pages) {
      const r = await page.goto(`${base}${url}`);
      expect(r?.status(), url).toBe(200);
      await page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      if (width > PHONE.width) wide.push(`${name}: ${width}px`);
      // A table that scrolls inside its box hides columns (credits, balances) off to the right.
      const clipped = await page.evaluate(() => [...document.querySelectorAll('.table-wrap')].filter((w) => w.scrollWidth > w.clientWidth + 1).length);
      if (clipped > 0) wide.push(`${name}: ${clipped} table(s) scroll sideways`);
    }
  } finally {
    await ctx.close();
  }
  expect(wide).toEqual([]);
});
