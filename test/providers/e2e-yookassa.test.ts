import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { BANK, seedBanks } from '../payout/helpers.js';
import type { MerchantFixture } from '../factories/merchant.js';
import {
  accountBalances, admin, billFor, chooseCard, ledgerOk, newPage, one, refundFinal, refundVia, routedMerchant, startE2E, until, type E2E,
} from './e2e-service.js';

/**
 * Issue 15 "Done when", YooKassa: a merchant routed to the connector (operator API only) pays in
 * Chromium through the emulator's hosted page (phone and desktop), comes back to our return URL,
 * YooKassa's notification reaches our route (the object re-read), the page sends the payer on to
 * the Success URL; a partial and a full refund through refund/*create and payouts to a card and
 * to SBP through payout/regular/create, with the ledger's acquirer and payout clearing of the
 * connector showing YooKassa's side of each. Also: a lost notification settled by the
 * reconciler, a declined card ending FAIL with its reason.
 */
const ART = 'test/artifacts/e2e';
const NAME = 'yk-e2e';
const ACQ = `RUB:acquirer_clearing:${NAME}`;
const PAYOUT = `RUB:payout_clearing:${NAME}`;

let e: E2E;
let yk: YooKassaEmulator;
let m: MerchantFixture;

beforeAll(async () => {
  e = await startE2E(ART);
  // A payout gateway enabled for card numbers (payout_pci_dss): the regular payout sends the number.
  yk = await YooKassaEmulator.start({ notifyUrl: `${e.base}/providers/${NAME}/notifications`, retryBaseMs: 50, payoutSettleMs: 200, payoutPciDss: true });
  const put = await admin(e, 'PUT', `/connectors/${NAME}`, {
    kind: 'yookassa', mode: 'test',
    settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.1', payout_agent_id: yk.payoutAgentId, payout_secret_key: yk.payoutSecretKey, payout_pci_dss: true },
  });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  await seedBanks(e.t);
  m = await routedMerchant(e, { payment_card: [NAME], payment_sbp: [NAME], payout_card: [NAME], payout_sbp: [NAME] });
});

afterAll(async () => {
  await yk?.stop();
  await e?.close();
});

const payment = (id: string) => one(e, `SELECT status::text, amount_received::text, commission::text, account_amount::text, provider_ref, failure_reason, connector FROM payments WHERE id = $1`, [id]);
const paymentOfBill = (billId: string) => one(e, `SELECT id FROM payments WHERE bill_id = $1`, [billId]).then((r) => r.id as string);
const merchantAvailable = async () => (await accountBalances(e))(`RUB:merchant:${m.merchantId}:available`);

/** On the emulator's checkout page: the card typed there (never on ours), 3-D Secure confirmed when asked. */
async function payOnProvider(page: Page, card: string, shot: string) {
  await Promise.all([page.waitForURL(/\/checkout\//), page.getByTestId('action-link').click()]);
  await page.screenshot({ path: shot, fullPage: true });
  await page.fill('#card', card);
  await page.click('#pay');
}

for (const size of ['phone', 'desktop'] as const) {
  describe(`YooKassa end to end (${size})`, () => {
    it('pays on the provider\'s page, back on our return URL, the notification re-read and applied once; refunds (partial, full) and payouts (card, SBP) through the merchant API; clearing accounts show each movement; ledger verify ok', async () => {
      const before = await accountBalances(e);
      const billId = await billFor(e, m, { amount: '1000.00', orderId: `yk-${size}` });
      const page = await newPage(e, size);
      const waiting = await chooseCard(e, page, billId, `${ART}/yookassa-${size}-1-form.png`);
      await page.screenshot({ path: `${ART}/yookassa-${size}-2-waiting.png`, fullPage: true });
      const paymentId = await paymentOfBill(billId);
      await payOnProvider(page, '5555 5555 5555 4477', `${ART}/yookassa-${size}-3-provider.png`);
      await page.waitForURL(/\/3ds$/);
      await Promise.all([page.waitForURL(`${e.shop.base}/success`, { timeout: 20_000 }), page.click('#confirm')]);
      expect(await page.locator('#landed').textContent()).toBe('Thank you');
      await page.screenshot({ path: `${ART}/yookassa-${size}-4-shop.png`, fullPage: true });
      expect(e.shop.received.some((r) => r.path === '/success' && r.fields.InvId === `yk-${size}`)).toBe(true);
      const p = await payment(paymentId);
      expect(p).toMatchObject({ status: 'SUCCESS', amount_received: '1000.00', connector: NAME });
      const ref = p.provider_ref as string;
      expect(yk.payments.get(ref)?.status).toBe('succeeded');
      // The return URL was our page for that payment.
      expect(waiting).toContain(`/pay/${billId}/payments/${paymentId}`);
      // YooKassa's notification came to our route, which read the payment again and recorded it once.
      await until('the notification recorded', () => one(e, `SELECT 1 AS x FROM provider_notifications WHERE connector = $1 AND event_key = $2`, [NAME, `payment.succeeded:${ref}`]));
      await yk.idle();
      expect(yk.notifier.deliveries.some((d) => (d.body as any).object?.id === ref && d.status === 200)).toBe(true);
      expect(yk.requests.some((r) => r.method === 'GET' && r.path === `/v3/payments/${ref}`)).toBe(true);
      expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [paymentId])).n).toBe(1);
      // Reloading the payment's page charges nothing.
      await page.goto(waiting);
      await page.context().close();

      let bal = await accountBalances(e);
      const commission = new Decimal(p.commission);
      const diff = (id: string, now: (id: string) => string) => new Decimal(now(id)).minus(before(id)).toFixed(2);
      expect(diff(ACQ, bal)).toBe('1000.00');
      expect(diff('RUB:fee_revenue', bal)).toBe(commission.toFixed(2));
      expect(diff(`RUB:merchant:${m.merchantId}:available`, bal)).toBe(new Decimal(1000).minus(commission).toFixed(2));

      // A partial refund, then the rest: YooKassa refunds them; each lands in refund clearing
      // (DESIGN.md: locked -> refund_clearing), the acquirer's side of the payment stays.
      const r1 = await refundVia(e, m, paymentId, '300.00');
      expect(await refundFinal(e, r1.id)).toMatchObject({ status: 'SUCCESS' });
      const r2 = await refundVia(e, m, paymentId);
      expect(new Decimal(r2.amount).toFixed(2)).toBe('700.00');
      expect(await refundFinal(e, r2.id)).toMatchObject({ status: 'SUCCESS' });
      const ykPay = yk.payments.get(ref)!;
      expect(ykPay.refunded_amount?.value).toBe('1000.00');
      const provRefunds = [...yk.refunds.values()].filter((x) => x.payment_id === ref).map((x) => x.amount.value).sort();
      expect(provRefunds).toEqual(['300.00', '700.00']);
      bal = await accountBalances(e);
      expect(diff(ACQ, bal)).toBe('1000.00');
      expect(diff('RUB:refund_clearing', bal)).toBe('1000.00');

      // Payouts from the balance: to a card and to SBP, through YooKassa's payout gateway.
      const fundR = await admin(e, 'POST', `/merchants/${m.merchantId}/balance-adjustments`, { currency: 'RUB', amount: '2000.00', reason: 'e2e funds' });
      expect(fundR.status, JSON.stringify(fundR.body)).toBeLessThan(300);
      const po1 = await e.t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload: {
        amount: '500.00', currency: 'RUB', account_type: 'credit_card', account_identifier: '5555555555554477', card_holder: 'IVAN IVANOV', order_id: `po-card-${size}`,
      } });
      expect(po1.statusCode, po1.body).toBe(200);
      const po2 = await e.t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload: {
        amount: '250.00', currency: 'RUB', account_type: 'sbp', account_identifier: '+79000000001', account_bank: BANK, order_id: `po-sbp-${size}`,
      } });
      expect(po2.statusCode, po2.body).toBe(200);
      const ids = [...po1.json().data, ...po2.json().data].map((x: { id: string }) => x.id);
      const done = await until('payouts final', async () => {
        const rows = (await e.t.db.pool.query(`SELECT id, status::text, commission::text, amount::text, provider_ref FROM payouts WHERE id = ANY($1)`, [ids])).rows;
        return rows.every((x) => x.status === 'SUCCESS' || x.status === 'FAIL') ? rows : null;
      });
      expect(done.map((x) => x.status)).toEqual(['SUCCESS', 'SUCCESS']);
      const provPayouts = done.map((x) => yk.payouts.get(x.provider_ref));
      expect(provPayouts.map((x) => x?.status)).toEqual(['succeeded', 'succeeded']);
      bal = await accountBalances(e);
      expect(diff(PAYOUT, bal)).toBe('750.00');
      const payoutFees = done.reduce((s, x) => s.plus(x.commission), new Decimal(0));
      expect(diff('RUB:fee_revenue', bal)).toBe(commission.plus(payoutFees).toFixed(2));
      await ledgerOk(e);
    });
  });
}

describe('YooKassa end to end: a bill in another currency', () => {
  it('a USD bill paid in roubles is refunded in roubles: each provider refund carries its RUB share, the last one the rest; the USD refund clearing shows both', async () => {
    expect((await admin(e, 'PUT', '/rates/USD', { rub_per_unit: '92.5' })).status).toBe(200);
    const before = await accountBalances(e);
    const beforeUsd = await accountBalances(e, 'USD');
    const billId = await billFor(e, m, { amount: '10.00', currencyIn: 'USD', orderId: 'yk-usd' });
    // JSON mode (PROVIDERS.md): no card fields, the action is YooKassa's page.
    const r = await e.t.app.inject({ method: 'POST', url: `/pay/${billId}`, headers: { accept: 'application/json' }, payload: { method: 'BANK_CARD' } });
    expect(r.json()).toMatchObject({ status: 'PROCESS', action: { type: 'redirect' } });
    const paymentId = r.json().payment_id as string;
    const ref = (await payment(paymentId)).provider_ref as string;
    expect(yk.payments.get(ref)!.amount).toEqual({ value: '925.00', currency: 'RUB' });
    yk.payerAction(ref, 'pay', { card: '5555555555554444' });
    await until('paid', async () => (await payment(paymentId)).status === 'SUCCESS');
    const r1 = await refundVia(e, m, paymentId, '4.00');
    expect(await refundFinal(e, r1.id)).toMatchObject({ status: 'SUCCESS' });
    const r2 = await refundVia(e, m, paymentId);
    expect(await refundFinal(e, r2.id)).toMatchObject({ status: 'SUCCESS' });
    const sent = [...yk.refunds.values()].filter((x) => x.payment_id === ref).map((x) => x.amount);
    expect(sent).toEqual([{ value: '370.00', currency: 'RUB' }, { value: '555.00', currency: 'RUB' }]);
    expect((await e.t.db.pool.query(`SELECT amount::text, amount_rub::text, currency::text FROM refunds WHERE payment_id = $1 ORDER BY created_at`, [paymentId])).rows)
      .toEqual([{ amount: '4.00', amount_rub: '370.00', currency: 'USD' }, { amount: '6.00', amount_rub: '555.00', currency: 'USD' }]);
    const bal = await accountBalances(e);
    expect(new Decimal(bal(ACQ)).minus(before(ACQ)).toFixed(2)).toBe('925.00');
    const balUsd = await accountBalances(e, 'USD');
    expect(new Decimal(balUsd('USD:refund_clearing')).minus(beforeUsd('USD:refund_clearing')).toFixed(2)).toBe('10.00');
    await ledgerOk(e);
  });
});

describe('YooKassa end to end: what can go wrong', () => {
  it('the notification is lost: the reconciler asks YooKassa and the payment ends SUCCESS, credited once', async () => {
    const billId = await billFor(e, m, { amount: '321.00', orderId: 'yk-lost' });
    yk.misbehave({ notifications: 'lost' });
    const page = await newPage(e, 'desktop');
    await chooseCard(e, page, billId, `${ART}/yookassa-lost-form.png`);
    const paymentId = await paymentOfBill(billId);
    const ref = (await payment(paymentId)).provider_ref as string;
    // The payer pays but never comes back (the tab is closed on the provider's page).
    await page.getByTestId('action-link').click();
    await page.waitForURL(/\/checkout\//);
    await page.context().close();
    yk.payerAction(ref, 'pay', { card: '5555555555554444' });
    expect(yk.notifier.lost.some((n) => (n.body as any).object?.id === ref)).toBe(true);
    const p = await until('reconciled', async () => { const r = await payment(paymentId); return r.status === 'SUCCESS' ? r : null; });
    expect(p.amount_received).toBe('321.00');
    yk.clearMisbehaviour();
    expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [paymentId])).n).toBe(1);
    expect((await one(e, `SELECT count(*)::int AS n FROM provider_notifications WHERE provider_ref = $1`, [ref])).n).toBe(0);
    await ledgerOk(e);
  });

  it('a card the provider declines ends FAIL with the reason; the payer is back on our form with the reason, and "Back to the shop" goes to the Fail URL; nothing is credited', async () => {
    const billId = await billFor(e, m, { amount: '77.00', orderId: 'yk-declined' });
    const page = await newPage(e, 'phone');
    await chooseCard(e, page, billId, `${ART}/yookassa-declined-form.png`);
    const paymentId = await paymentOfBill(billId);
    const availableBefore = await merchantAvailable();
    await Promise.all([page.waitForURL(/\/checkout\//), page.getByTestId('action-link').click()]);
    await page.fill('#card', '4000 0000 0000 9995');
    // Issue 16: a declined card brings the payer back to our form with the reason beside it.
    await Promise.all([page.waitForURL(/\/pay\/\w+\?declined=\w+/, { timeout: 20_000 }), page.click('#pay')]);
    expect(await page.getByTestId('decline-reason').getAttribute('data-code')).toBe('insufficient_funds');
    await Promise.all([page.waitForURL(`${e.shop.base}/fail`, { timeout: 20_000 }), page.getByTestId('fail-back').click()]);
    await page.screenshot({ path: `${ART}/yookassa-declined-shop.png`, fullPage: true });
    await page.context().close();
    expect(await payment(paymentId)).toMatchObject({ status: 'FAIL', failure_reason: 'insufficient_funds' });
    expect((await one(e, `SELECT status::text FROM bills WHERE id = $1`, [billId])).status).toBe('FAIL');
    expect(await merchantAvailable()).toBe(availableBefore);
    await ledgerOk(e);
  });
});
