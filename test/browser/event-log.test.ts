import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launchChromium, shooter } from './cabinet-helpers.js';
import type { TestApp } from '../helpers/app.js';
import { listeningTestApp } from '../helpers/browser.js';
import { cabinetMerchant, PASSWORD, type CabinetMerchant } from '../cabinet/helpers.js';
import { enqueueTestPostbacks } from '../factories/outbox.js';

/**
 * Issue 30 item 1 in real Chromium: the cabinet's webhook log with 34 events (ids across 99 ->
 * 100) shows 30, then "Next" shows the 4 older ones: 34 rows in all, each once, newest first.
 * Screenshots in test/artifacts/event-log/.
 */
const ARTIFACTS = 'test/artifacts/event-log';
const shoot = shooter(ARTIFACTS);

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;
let m: CabinetMerchant;
let expected: string[];

beforeAll(async () => {
  ({ t, base } = await listeningTestApp(ARTIFACTS));
  m = await cabinetMerchant(t, { shop: { resultUrl: 'https://shop.example/result' } });
  await t.db.pool.query(`SELECT setval(pg_get_serial_sequence('outbox_events', 'id'), 80)`);
  for (let i = 0; i < 34; i++) await enqueueTestPostbacks(t, m.merchantId, 'https://shop.example/result', 1, `ev${String(i).padStart(2, '0')}`);
  const r = await t.db.pool.query<{ aggregate_id: string }>('SELECT aggregate_id FROM outbox_events e WHERE merchant_id = $1 ORDER BY e.id DESC', [m.merchantId]);
  expected = r.rows.map((x) => x.aggregate_id);
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: DESKTOP, locale: 'en-US' })).newPage();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const shown = (p: Page) => p.locator('summary code').allTextContents();

test('34 events: a page of 30 and a page of 4, newest first by number, none repeated or lost', async () => {
  await page.goto(`${base}/cabinet/login`);
  await page.getByLabel('Email').fill(m.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/cabinet`);
  await page.goto(`${base}/cabinet/webhooks`);
  const first = await shown(page);
  expect(first).toEqual(expected.slice(0, 30));
  await shoot(page, '01-webhooks-page-1');
  await page.getByRole('link', { name: /Next/ }).click();
  await page.waitForURL(/before=/);
  const second = await shown(page);
  expect(second).toEqual(expected.slice(30));
  expect(await page.getByRole('link', { name: /Next/ }).count()).toBe(0);
  await shoot(page, '02-webhooks-page-2');
  expect(new Set([...first, ...second]).size).toBe(34);
});
