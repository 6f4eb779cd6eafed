import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, PHONE, launchChromium } from './cabinet-helpers.js';
import type { TestApp } from '../helpers/app.js';
import { listeningTestApp } from '../helpers/browser.js';
import { MEMBER_PASSWORD, teamMember } from '../cabinet/helpers.js';
import { createMerchant } from '../factories/merchant.js';

/** A merchant always keeps an owner: its only owner, in the browser, is not offered Remove and is told why. */
const DIR = 'test/artifacts/cabinet-last-owner';
let t: TestApp;
let base: string;
let browser: Browser;

beforeAll(async () => {
  ({ t, base } = await listeningTestApp(DIR));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

for (const [label, viewport, lang, why, remove] of [
  ['phone', PHONE, 'ru', 'единственный владелец', 'Удалить'],
  ['desktop', DESKTOP, 'en', 'only owner of the merchant', 'Remove'],
] as const) {
  test(`the sole owner cannot remove themselves; the team page says why (${label}, ${lang})`, async () => {
    // Onboarded from the console: no login of its own, the owner is a team member.
    const m = { ...(await createMerchant(t)), email: '' };
    const owner = await teamMember(t, m, 'owner');
    const helper = await teamMember(t, m, 'developer');
    const page = await (await browser.newContext({ viewport, locale: lang === 'ru' ? 'ru-RU' : 'en-US' })).newPage();
    await page.goto(`${base}/cabinet/login?lang=${lang}`);
    await page.locator('#email').fill(owner.email);
    await page.locator('#password').fill(MEMBER_PASSWORD);
    await page.locator('form button[type=submit]').first().click();
    await page.waitForURL(`${base}/cabinet`);
    await page.goto(`${base}/cabinet/team`);
    const own = page.getByRole('row').filter({ hasText: owner.email });
    await expect(own.getByTestId('last-owner').textContent()).resolves.toContain(why);
    expect(await own.getByRole('button', { name: remove }).count()).toBe(0);
    // Other members still have their buttons.
    expect(await page.getByRole('row').filter({ hasText: helper.email }).getByRole('button', { name: remove }).count()).toBe(1);
    await page.screenshot({ path: `${DIR}/team-${label}.png`, fullPage: true });
    expect((await t.db.pool.query("SELECT count(*)::int AS n FROM merchant_users WHERE id = $1 AND role = 'OWNER'", [owner.id])).rows[0].n).toBe(1);
    await page.context().close();
  });
}
