import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { startReceiver, type Receiver } from '../outbox/receiver.js';
import { TBankEmulator } from './tbank.js';
import { YooKassaEmulator } from './yookassa.js';

// The emulators' hosted pages driven by a real browser, as a payer would: the card form, the
// 3-D Secure page, and the way back to the shop.

let browser: Browser;
let shop: Receiver;
let yk: YooKassaEmulator;
let tb: TBankEmulator;

beforeAll(async () => {
  shop = await startReceiver();
  yk = await YooKassaEmulator.start({ notifyUrl: `${shop.url}/yk` });
  tb = await TBankEmulator.start({ notifyUrl: `${shop.url}/tb` });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await yk?.stop();
  await tb?.stop();
  await shop?.close();
});

describe('emulators\' hosted pages in a browser', () => {
  it('YooKassa: the payer types a 3-D Secure card, confirms on the bank page and lands on return_url; the payment succeeded', async () => {
    const res = await fetch(`${yk.apiUrl}/payments`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${yk.shopId}:${yk.secretKey}`).toString('base64')}`, 'idempotence-key': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify({ amount: { value: '250.00', currency: 'RUB' }, capture: true, confirmation: { type: 'redirect', return_url: `${shop.url}/return` } }),
    });
    const created = (await res.json()) as { id: string; confirmation: { confirmation_url: string } };
    const page = await browser.newPage();
    await page.goto(created.confirmation.confirmation_url);
    await page.fill('#card', '5555 5555 5555 4477');
    await page.click('#pay');
    await page.waitForURL(/\/3ds$/);
    await page.click('#confirm');
    await page.waitForURL(`${shop.url}/return`);
    expect(yk.payments.get(created.id)!.status).toBe('succeeded');
    await page.close();
  });

  it('T-Bank: the payer opens PaymentURL, a declined card sends them to FailURL; a good card on another payment to SuccessURL', async () => {
    const init = async () => {
      const r = await fetch(`${tb.apiUrl}/Init`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify(tb.sign({ TerminalKey: tb.terminalKey, Amount: 25000, OrderId: randomUUID().slice(0, 20), SuccessURL: `${shop.url}/ok`, FailURL: `${shop.url}/fail` })),
      });
      return (await r.json()) as { PaymentId: string; PaymentURL: string };
    };
    const page = await browser.newPage();
    const bad = await init();
    await page.goto(bad.PaymentURL);
    await page.fill('#card', '4000000000009995');
    await page.click('#pay');
    await page.waitForURL(`${shop.url}/fail`);
    expect(tb.payments.get(bad.PaymentId)!.Status).toBe('REJECTED');
    const good = await init();
    await page.goto(good.PaymentURL);
    await page.fill('#card', '5411420000000002');
    await page.click('#pay');
    await page.waitForURL(/\/acs\//);
    await page.click('#confirm');
    await page.waitForURL(`${shop.url}/ok`);
    expect(tb.payments.get(good.PaymentId)!.Status).toBe('CONFIRMED');
    await page.close();
  });
});
