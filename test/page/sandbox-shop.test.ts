import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { browserTestApp } from '../helpers/browser.js';

/**
 * Issue 30 item 4: the sandbox's stand-in shop pages (Success and Fail URLs of the demo shop)
 * look like the payer's pages and speak the payer's language (ru/en).
 */
const ART = 'test/artifacts/sandbox-shop';
let t: TestApp;
let base: string;
let browser: Browser;
beforeAll(async () => { ({ t, base, browser } = await browserTestApp(ART)); });
afterAll(async () => { await browser?.close(); await t?.close(); });

const form = { InvId: 'A-77', OutSum: '1234.50', CurrencyIn: 'RUB', TrsId: 'pay123', SignatureValue: 'X' };
const post = (outcome: string, lang: string) => t.app.inject({
  method: 'POST', url: `/sandbox/shop/${outcome}`, payload: new URLSearchParams(form).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': lang },
});

describe('the sandbox shop\'s pages', () => {
  it('the Success page in Russian: the payer pages\' styles, the money as 1 234,50 ₽, the order and payment', async () => {
    const r = await post('success', 'ru-RU,ru;q=0.9');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('<html lang="ru">');
    expect(r.body).toContain('Спасибо! Оплата получена.');
    expect(r.body).toContain('data-testid="shop-OutSum">1\u00a0234,50\u00a0₽<');
    expect(r.body).toContain('data-testid="shop-InvId">A-77<');
    expect(r.body).toMatch(/<style nonce="[0-9a-f]+">/);
    const nonce = /<style nonce="([0-9a-f]+)">/.exec(r.body)![1];
    expect(r.headers['content-security-policy']).toContain(`style-src 'nonce-${nonce}'`);
  });

  it('the Fail page in English says no money was taken', async () => {
    const r = await post('fail', 'en');
    expect(r.body).toContain('<html lang="en">');
    expect(r.body).toContain('The payment did not go through.');
    expect(r.body).toContain('No money was taken.');
    expect(r.body).toContain('data-testid="shop-OutSum">RUB\u00a01,234.50<');
  });

  it('in Chromium at phone width the page is styled (a card, no sideways scroll) and switches language', async () => {
    const page = await (await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'ru-RU' })).newPage();
    await page.goto(`${base}/sandbox/shop/success?${new URLSearchParams(form)}`);
    await expect(page.locator('.card.status').evaluate((el) => getComputedStyle(el).borderRadius)).resolves.not.toBe('0px');
    await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
    await page.screenshot({ path: `${ART}/success-ru-phone.png`, fullPage: true });
    await page.getByRole('link', { name: 'English' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Thank you! The payment is received.');
    await page.screenshot({ path: `${ART}/success-en-phone.png`, fullPage: true });
  });
});
