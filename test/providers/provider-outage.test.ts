import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TBankEmulator } from '../emulators/tbank.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { freePort } from '../helpers/service-process.js';
import { ADMIN_TOKEN } from '../helpers/app.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { admin, billFor, one, routedMerchant, SIZES, startE2E, until, type E2E } from './e2e-service.js';

/**
 * Issue 30 item 2: a provider outage is not the payer's card. Real servers on 127.0.0.1: the
 * emulators (a 503 on creation), a closed port (connection refused) and a server that accepts
 * connections and never answers. A refusal before any money moved goes to the next connector of
 * the route; when none can take the payment it FAILs as provider_unavailable and the page says
 * the method is temporarily unavailable, never "declined"; a provider that does not answer leaves
 * the payment PROCESS (the page says it is being checked) and never falls back.
 */
const ART = 'test/artifacts/provider-outage';

let e: E2E;
let yk: YooKassaEmulator;
let tb: TBankEmulator;
let mute: Server;
const held: Socket[] = [];
let mutePort = 0;

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const page = (url: string) => e.t.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
const postForm = (url: string, form: Record<string, string>) => e.t.app.inject({
  method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, payload: new URLSearchParams(form).toString(),
});
const payment = (id: string) => one(e, `SELECT status::text, connector, failure_reason, failure_message, provider_ref FROM payments WHERE id = $1`, [id]);
const calls = async (connector: string, outcome: string): Promise<number> => {
  const body = (await e.t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body;
  const line = body.split('\n').find((l) => l.startsWith('connector_calls_total{') && l.includes(`connector="${connector}"`)
    && l.includes('operation="create_payment"') && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.split(' ').pop()) : 0;
};

async function connector(name: string, kind: 'yookassa' | 'tbank', baseUrl: string) {
  const settings = kind === 'yookassa'
    ? { base_url: baseUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.1' }
    : { base_url: baseUrl, terminal_key: tb.terminalKey, password: tb.password };
  const r = await admin(e, 'PUT', `/connectors/${name}`, { kind, mode: 'test', settings });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
}

/** Opens the bill's form and posts it (no card fields: `method` only), as the page's button does. */
async function payByForm(billId: string, method: 'SBP' | 'BANK_CARD', lang: 'en' | 'ru' = 'en') {
  const form = await page(`/pay/${billId}?lang=${lang}`);
  expect(form.statusCode, form.body.slice(0, 300)).toBe(200);
  const r = await postForm(`/pay/${billId}`, { _csrf: csrfOf(form.body), method, lang });
  expect(r.statusCode, r.body.slice(0, 300)).toBe(303);
  return String(r.headers.location);
}

const paymentOfBill = async (billId: string) => (await one(e, `SELECT id FROM payments WHERE bill_id = $1 ORDER BY created_at DESC LIMIT 1`, [billId])).id as string;

beforeAll(async () => {
  e = await startE2E(ART);
  yk = await YooKassaEmulator.start();
  tb = await TBankEmulator.start({ retryBaseMs: 50 });
  // Accepts every connection and never answers a byte.
  mute = createServer((s) => { held.push(s); s.on('error', () => undefined); });
  await new Promise<void>((r) => mute.listen(0, '127.0.0.1', () => r()));
  mutePort = (mute.address() as AddressInfo).port;
  await connector('yk-503', 'yookassa', yk.apiUrl);
  await connector('yk-closed', 'yookassa', `http://127.0.0.1:${await freePort()}/v3`);
  await connector('tb-closed', 'tbank', `http://127.0.0.1:${await freePort()}/v2`);
  await connector('yk-mute', 'yookassa', `http://127.0.0.1:${mutePort}/v3`);
  await connector('tb-late', 'tbank', tb.apiUrl);
});

afterAll(async () => {
  for (const s of held) s.destroy();
  await new Promise<void>((r) => (mute ? mute.close(() => r()) : r()));
  await yk?.stop();
  await tb?.stop();
  await e?.close();
});

describe('a provider that refuses before any money moved', () => {
  it('an SBP payment routed [refusing provider, sandbox] goes to the sandbox and pays: connection refused (T-Bank, YooKassa) and a 503 on creation', async () => {
    for (const [down, prepare] of [['tb-closed', () => undefined], ['yk-closed', () => undefined], ['yk-503', () => yk.misbehave({ op: 'payments.create', status5xx: 503, times: 4 })]] as const) {
      const m = await routedMerchant(e, { payment_sbp: [down, 'sandbox'] });
      prepare();
      const billId = await billFor(e, m, { amount: '250.00', paymentMethod: 'SBP' });
      const refusedBefore = await calls(down, 'refused');
      const waiting = await payByForm(billId, 'SBP');
      const id = await paymentOfBill(billId);
      // The sandbox took it: its QR and bank page, nothing of the provider that was down.
      expect(await payment(id)).toMatchObject({ status: 'PROCESS', connector: 'sandbox' });
      expect(await calls(down, 'refused')).toBe(refusedBefore + 1);
      const wait = await page(waiting);
      expect(wait.body).toContain('data-action="sbp_qr"');
      const bank = await page(`/sandbox/sbp/${id}`);
      await postForm(`/sandbox/sbp/${id}`, { _csrf: csrfOf(bank.body), decision: 'confirm', amount: '250.00' });
      expect(await payment(id)).toMatchObject({ status: 'SUCCESS', connector: 'sandbox', failure_reason: null });
    }
  });

  it('a hosted-card provider refusing with no card-capable fallback: FAIL provider_unavailable, the page says the method is temporarily unavailable (never declined), the API and the postback say provider_unavailable', async () => {
    for (const [down, prepare] of [['yk-503', () => yk.misbehave({ op: 'payments.create', status5xx: 503, times: 4 })], ['tb-closed', () => undefined]] as const) {
      // The sandbox needs the card number, which the payer typed nowhere (the provider hosts the form).
      const m = await routedMerchant(e, { payment_card: [down, 'sandbox'] });
      prepare();
      const billId = await billFor(e, m, { amount: '120.00', orderId: `down-${down}`, paymentMethod: 'BANK_CARD' });
      const sandboxBefore = await calls('sandbox', 'ok');
      const back = await payByForm(billId, 'BANK_CARD');
      const id = await paymentOfBill(billId);
      const p = await payment(id);
      expect(p).toMatchObject({ status: 'FAIL', connector: down, failure_reason: 'provider_unavailable' });
      // The provider's own words stay for the operator.
      expect(p.failure_message).toMatch(down === 'yk-503' ? /^yookassa:http_503|^yookassa:/ : /^connection_refused: tbank: the provider's address refused the connection, so the request was not sent \(ECONNREFUSED\)/);
      expect(await calls('sandbox', 'ok')).toBe(sandboxBefore);
      // Back on the form with the reason; not a decline, in either language.
      expect(back).toBe(`/pay/${billId}?declined=${id}&lang=en`);
      const en = await page(back);
      expect(en.body).toContain('data-testid="method-down"');
      expect(en.body).toContain('This payment method is temporarily unavailable');
      expect(en.body).not.toMatch(/declined/i);
      expect(en.body).not.toContain('aria-invalid="true"');
      const ru = await page(back.replace('lang=en', 'lang=ru'));
      expect(ru.body).toContain('Этот способ оплаты временно недоступен');
      expect(ru.body).not.toMatch(/отклон/i);
      // The Fail URL flow: the form offers the signed POST back to the shop's Fail URL.
      expect(en.body).toContain(`action="${e.shop.base}/fail"`);
      const api = (await e.t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${id}`, headers: m.auth })).json();
      expect(api).toMatchObject({ status: 'FAIL', error_code: 'provider_unavailable', error_message: 'The payment method was temporarily unavailable; no money was taken.' });
      const postback = await until('FAIL postback', async () => e.shop.received.find((r) => r.path === '/result' && r.fields.TrsId === id));
      expect(postback.fields).toMatchObject({ Status: 'FAIL', ErrorCode: 'provider_unavailable' });
    }
  });

  it('after the third such failure the payer is sent on to the Fail URL by a page that says the method was unavailable, not declined', async () => {
    const m = await routedMerchant(e, { payment_card: ['tb-closed'] });
    const billId = await billFor(e, m, { amount: '75.00', paymentMethod: 'BANK_CARD' });
    let last = '';
    for (let i = 0; i < 3; i += 1) last = await payByForm(billId, 'BANK_CARD');
    const id = await paymentOfBill(billId);
    expect(last).toBe(`/pay/${billId}/payments/${id}`);
    const end = await page(last);
    expect(end.body).toContain('data-status="FAIL"');
    expect(end.body).toContain('This payment method is temporarily unavailable');
    expect(end.body).toContain(`action="${e.shop.base}/fail"`);
    expect(end.body).not.toMatch(/declined/i);
  });
});

describe('a provider that does not answer', () => {
  it('is cut off by the timeout: PROCESS, never the next connector; the page says it is being checked (en, ru)', async () => {
    const m = await routedMerchant(e, { payment_sbp: ['yk-mute', 'sandbox'] });
    const billId = await billFor(e, m, { amount: '90.00', paymentMethod: 'SBP' });
    const sandboxBefore = await calls('sandbox', 'ok');
    const started = Date.now();
    const waiting = await payByForm(billId, 'SBP');
    // CONNECTOR_TIMEOUT_MS is 3 s in these tests: cut off in seconds, not minutes.
    expect(Date.now() - started).toBeLessThan(10_000);
    const id = await paymentOfBill(billId);
    expect(await payment(id)).toMatchObject({ status: 'PROCESS', connector: 'yk-mute', failure_reason: null });
    expect(await calls('yk-mute', 'unknown')).toBeGreaterThanOrEqual(1);
    expect(await calls('sandbox', 'ok')).toBe(sandboxBefore);
    const en = await page(waiting);
    expect(en.body).toContain('data-testid="checking"');
    expect(en.body).toContain('We are checking your payment with the bank');
    expect(en.body).toContain('You can close this page: the shop will be told the result.');
    expect(en.body).toMatch(/up to \d+ min/);
    expect(en.body).not.toMatch(/declined|Waiting for the payment/i);
    const ru = await page(`${waiting.split('?')[0]}?lang=ru`);
    expect(ru.body).toContain('Проверяем ваш платёж в банке');
    expect(ru.body).toContain('магазин узнает результат');
    // Still not moved to the sandbox after reconciliation asked again.
    expect((await payment(id)).connector).toBe('yk-mute');
  });

  it('an answer lost past the timeout (T-Bank applied Init, then held its answer): PROCESS, the payer is told it is being checked, and reconciliation finishes it once the payer paid', async () => {
    const m = await routedMerchant(e, { payment_sbp: ['tb-late', 'sandbox'] });
    const billId = await billFor(e, m, { amount: '310.00', paymentMethod: 'SBP' });
    tb.misbehave({ op: 'Init', timeoutAfterApply: 'hold', holdMs: 6000 });
    const waiting = await payByForm(billId, 'SBP', 'ru');
    const id = await paymentOfBill(billId);
    expect(await payment(id)).toMatchObject({ status: 'PROCESS', connector: 'tb-late', provider_ref: null });
    expect((await page(waiting)).body).toContain('Проверяем ваш платёж в банке');
    // The payment T-Bank made from the Init it applied; the payer pays it (its QR reached them some other way in this test).
    const tp = await until('the T-Bank payment', async () => [...tb.payments.values()].find((p) => p.OrderId === id));
    tb.payerAction(tp.PaymentId, 'sbp-confirm');
    const done = await until('reconciled', async () => { const p = await payment(id); return p.status === 'SUCCESS' ? p : null; });
    expect(done).toMatchObject({ connector: 'tb-late', provider_ref: String(tp.PaymentId) });
    const postback = await until('SUCCESS postback', async () => e.shop.received.find((r) => r.path === '/result' && r.fields.TrsId === id));
    expect(postback.fields.Status).toBe('SUCCESS');
  });
});

describe('the payer\'s pages at phone size (Chromium)', () => {
  for (const lang of ['ru', 'en'] as const) {
    it(`${lang}: the method-unavailable form and the being-checked page`, async () => {
      const down = await routedMerchant(e, { payment_card: ['tb-closed', 'sandbox'] });
      const billId = await billFor(e, down, { amount: '120.00', paymentMethod: 'BANK_CARD' });
      // The browser speaks the payer's language (the payment's page follows Accept-Language).
      const ctx = await e.browser.newContext({ viewport: SIZES.phone, isMobile: true, locale: lang === 'ru' ? 'ru-RU' : 'en-GB' });
      const p = await ctx.newPage();
      await p.goto(`${e.base}/pay/${billId}?lang=${lang}`);
      await Promise.all([p.waitForURL(/declined=/), p.getByTestId('pay-card').click()]);
      await p.getByTestId('method-down').waitFor();
      expect(await p.locator('body').innerText()).not.toMatch(lang === 'en' ? /declined/i : /отклон/i);
      await p.screenshot({ path: `${ART}/phone-${lang}-method-unavailable.png`, fullPage: true });

      const muteM = await routedMerchant(e, { payment_sbp: ['yk-mute'] });
      const sbpBill = await billFor(e, muteM, { amount: '90.00', paymentMethod: 'SBP' });
      await p.goto(`${e.base}/pay/${sbpBill}?lang=${lang}`);
      await Promise.all([p.waitForURL(/\/payments\//, { timeout: 20_000 }), p.getByTestId('pay-sbp').click()]);
      await p.getByTestId('checking').waitFor();
      expect(await p.locator('h1').innerText()).toBe(lang === 'ru' ? 'Проверяем ваш платёж в банке' : 'We are checking your payment with the bank');
      await p.screenshot({ path: `${ART}/phone-${lang}-checking.png`, fullPage: true });
      // Nothing wider than the phone.
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await p.context().close();
    });
  }
});
