import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, DECLINED_CARD, payRequest } from '../factories/payment.js';

/**
 * A test bill (issued with the merchant's test token: a bill of its test twin) is marked on every
 * page the payer sees: the form, the QR page, the waiting page, the result page and the receipt
 * (issue 14 item 6); a live bill carries no mark.
 */
let t: TestApp;
let live: MerchantFixture;
let test: MerchantFixture;

beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  live = await createMerchant(t, { shop: { name: 'Two Modes' } });
  const { twin } = await t.app.services.merchants.ensureTestTwin(live.merchantId);
  test = { ...live, merchantId: twin.id };
});
afterAll(async () => { await t.close(); });

const html = (url: string, lang = 'en') => t.app.inject({ method: 'GET', url, headers: { accept: 'text/html', 'accept-language': lang } });
const BANNER = 'data-testid="test-banner"';

describe('the test-payment mark', () => {
  it('the form and the QR page of a test bill carry it, in the page language; a live bill\'s do not', async () => {
    const testBill = await createBill(t, test);
    const liveBill = await createBill(t, live);
    const en = (await html(`/pay/${testBill}`)).body;
    expect(en).toContain(`<p class="test-banner" role="note" ${BANNER}>Test payment: no real money moves. Use the test cards below.</p>`);
    expect((await html(`/pay/${testBill}`, 'ru')).body).toContain('Тестовый платёж: реальные деньги не списываются.');
    expect((await html(`/pay/${testBill}/qr`)).body).toContain(BANNER);
    expect((await html(`/pay/${liveBill}`)).body).not.toContain(BANNER);
    expect((await html(`/pay/${liveBill}/qr`)).body).not.toContain(BANNER);
  });

  it('the receipt, the waiting page and the result page of a test payment carry it', async () => {
    const paidBill = await createBill(t, test);
    const paid = await payRequest(t, paidBill, cardForm());
    expect(paid.json().status).toBe('SUCCESS');
    const receipt = (await html(`/pay/${paidBill}/payments/${paid.json().payment_id}`)).body;
    expect(receipt).toContain('data-testid="receipt"');
    expect(receipt).toContain('Test payment: no real money</p>');

    const waitingBill = await createBill(t, test);
    const waiting = await payRequest(t, waitingBill, cardForm('4000002760003184'));
    expect(waiting.json().status).toBe('PROCESS');
    const wait = (await html(`/pay/${waitingBill}/payments/${waiting.json().payment_id}`)).body;
    expect(wait).toContain('data-testid="waiting"');
    expect(wait).toContain(BANNER);

    // A MULTI bill declined three times from one address: the third gets the result page.
    const multi = await createBill(t, test, { type: 'MULTI' });
    let last = '';
    for (let i = 0; i < 3; i++) last = (await payRequest(t, multi, cardForm(DECLINED_CARD))).json().payment_id;
    const result = (await html(`/pay/${multi}/payments/${last}`)).body;
    expect(result).toContain('data-testid="result"');
    expect(result).toContain(BANNER);

    const livePaid = await createBill(t, live);
    const lp = await payRequest(t, livePaid, cardForm());
    expect((await html(`/pay/${livePaid}/payments/${lp.json().payment_id}`)).body).not.toContain(BANNER);
  });
});
