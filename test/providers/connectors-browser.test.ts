import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import type { Connector, PaymentOutcome } from '../../src/domain/providers/connector.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium } from '../helpers/chromium.js';
import { startReceiver, waitFor, type Receiver } from '../outbox/receiver.js';
import { TBankEmulator } from '../emulators/tbank.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { connectorCalls, newOpId } from './connector-calls.js';

// The payer in a real Chromium (phone and desktop) following what the real connectors answer:
// the redirect to the provider's page or the SBP payload, back to our return URL; then the
// connector reads the payment (paid) and believes the provider's notification.

const ARTIFACTS = 'test/artifacts/connectors';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

let t: TestApp;
let shop: Receiver;
let yk: YooKassaEmulator;
let tb: TBankEmulator;
let browser: Browser;
let ykConn: Connector;
let tbConn: Connector;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  shop = await startReceiver();
  // Our public URL is the receiver's: T-Bank's NotificationURL and the return URLs land there.
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '8000', PUBLIC_BASE_URL: shop.url });
  yk = await YooKassaEmulator.start({ notifyUrl: `${shop.url}/providers/yk-web/notifications`, retryBaseMs: 10 });
  tb = await TBankEmulator.start({ retryBaseMs: 10 });
  const { put } = connectorCalls(() => t, () => ykConn);
  expect((await put('yk-web', { kind: 'yookassa', mode: 'test', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.1' } })).statusCode).toBe(201);
  expect((await put('tb-web', { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } })).statusCode).toBe(201);
  ykConn = (await t.app.services.connectors.get('yk-web'))!;
  tbConn = (await t.app.services.connectors.get('tb-web'))!;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await yk?.stop();
  await tb?.stop();
  await shop?.close();
  await t?.close();
});

const yookassa = connectorCalls(() => t, () => ykConn);
const tbank = connectorCalls(() => t, () => tbConn);

async function create(c: Connector, method: 'card' | 'sbp', amount: string): Promise<{ id: string; out: Extract<PaymentOutcome, { status: 'action' }>; back: string }> {
  const id = newOpId();
  const back = `${shop.url}/pay/bill1/return/${id}`;
  const out = await t.app.services.connectors.call(c, 'create_payment', (ctx) => c.createPayment({ paymentId: id, method, amount: new Decimal(amount), returnUrl: back }, ctx));
  if (out.status !== 'action') throw new Error(`expected an action, got ${JSON.stringify(out)}`);
  return { id, out, back };
}

async function newPage(size: { width: number; height: number }): Promise<Page> {
  return (await browser.newContext({ viewport: size, isMobile: size.width < 500 })).newPage();
}

/** The notifications received at a connector's notification URL (the shape each provider posts). */
const notified = (name: string) => shop.received.filter((r) => r.path === `/providers/${name}/notifications`).map((r) => JSON.parse(r.body) as Record<string, any>);

describe('real connectors with a payer in Chromium', () => {
  it('yookassa on a phone: the payer follows the redirect, pays with a 3-D Secure card, comes back to our return URL; getPayment and the re-read notification say paid', async () => {
    const { id, out, back } = await create(ykConn, 'card', '990.00');
    expect(out.action.type).toBe('redirect');
    const page = await newPage(PHONE);
    await page.goto((out.action as { url: string }).url);
    await page.screenshot({ path: `${ARTIFACTS}/yookassa-phone-card-form.png`, fullPage: true });
    await page.fill('#card', '5555 5555 5555 4477');
    await page.click('#pay');
    await page.waitForURL(/\/3ds$/);
    await page.screenshot({ path: `${ARTIFACTS}/yookassa-phone-3ds.png`, fullPage: true });
    await page.click('#confirm');
    await page.waitForURL(back);
    await page.context().close();
    const paid = await yookassa.getPayment(id, out.ref);
    expect(paid.status === 'paid' && paid.amountReceived.equals('990')).toBe(true);
    await yk.idle();
    const n = notified('yk-web').find((x) => x.object?.id === out.ref);
    expect(await yookassa.parse(n)).toMatchObject({ ok: true, eventKey: `payment.succeeded:${out.ref}`, ourId: id, outcome: { status: 'paid' } });
  });

  it('tbank SBP on a desktop: the payload opens the bank app, the payer confirms and is sent to our return URL; the signed notification says paid', async () => {
    const { id, out, back } = await create(tbConn, 'sbp', '1500.00');
    if (out.action.type !== 'sbp_qr') throw new Error(out.action.type);
    const page = await newPage(DESKTOP);
    await page.goto(out.action.payload);
    await page.screenshot({ path: `${ARTIFACTS}/tbank-desktop-sbp-bank-app.png`, fullPage: true });
    await page.click('#confirm');
    await page.waitForURL(back);
    await page.context().close();
    const paid = await tbank.getPayment(id, out.ref);
    expect(paid.status === 'paid' && paid.amountReceived.equals('1500')).toBe(true);
    await waitFor(() => notified('tb-web').some((x) => String(x.PaymentId) === out.ref && x.Status === 'CONFIRMED'));
    const n = notified('tb-web').find((x) => String(x.PaymentId) === out.ref && x.Status === 'CONFIRMED');
    expect(await tbank.parse(n)).toMatchObject({ ok: true, eventKey: `${out.ref}:CONFIRMED`, ourId: id, outcome: { status: 'paid' }, reply: { status: 200, body: 'OK' } });
  });

  it('tbank card on a phone: a declined card is sent back to our return URL and reads declined; a good card on a new payment reads paid', async () => {
    const bad = await create(tbConn, 'card', '120.00');
    const page = await newPage(PHONE);
    await page.goto((bad.out.action as { url: string }).url);
    await page.screenshot({ path: `${ARTIFACTS}/tbank-phone-card-form.png`, fullPage: true });
    await page.fill('#card', '4000000000009995');
    await page.click('#pay');
    await page.waitForURL(bad.back);
    expect(await tbank.getPayment(bad.id, bad.out.ref)).toMatchObject({ status: 'declined' });
    const good = await create(tbConn, 'card', '120.00');
    await page.goto((good.out.action as { url: string }).url);
    await page.fill('#card', '4300 0000 0000 0777');
    await page.click('#pay');
    await page.waitForURL(good.back);
    await page.context().close();
    expect(await tbank.getPayment(good.id, good.out.ref)).toMatchObject({ status: 'paid' });
  });
});
