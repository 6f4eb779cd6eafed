import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { TBankEmulator } from '../emulators/tbank.js';
import type { MerchantFixture } from '../factories/merchant.js';
import {
  accountBalances, admin, billFor, chooseCard, ledgerOk, newPage, one, refundFinal, refundVia, routedMerchant, startE2E, until, type E2E,
} from './e2e-service.js';

/**
 * Issue 15 "Done when", T-Bank: a merchant routed to the connector (operator API only) pays in
 * Chromium on the emulator's card form (phone and desktop), comes back to our return URL, T-Bank's
 * signed notification reaches our route (Token checked, answered OK), the page sends the payer
 * to the Success URL; a partial and a full refund through refund/*create (Cancel), with the
 * connector's acquirer clearing showing T-Bank's side. Also: two partial refunds in flight whose
 * Cancel answers are lost, which T-Bank's statuses cannot tell apart (an operator decides,
 * docs/adr/0091); a lost notification settled
 * by the reconciler; a declined card ending FAIL with its reason.
 */
const ART = 'test/artifacts/e2e';
const NAME = 'tb-e2e';
const ACQ = `RUB:acquirer_clearing:${NAME}`;

let e: E2E;
let tb: TBankEmulator;
let m: MerchantFixture;

beforeAll(async () => {
  e = await startE2E(ART);
  // Every Init names our route as NotificationURL (PUBLIC_BASE_URL is the listening app).
  tb = await TBankEmulator.start({ retryBaseMs: 50 });
  const put = await admin(e, 'PUT', `/connectors/${NAME}`, { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  m = await routedMerchant(e, { payment_card: [NAME], payment_sbp: [NAME] });
});

afterAll(async () => {
  await tb?.stop();
  await e?.close();
});

const payment = (id: string) => one(e, `SELECT status::text, amount_received::text, commission::text, provider_ref, failure_reason, connector FROM payments WHERE id = $1`, [id]);
const paymentOfBill = (billId: string) => one(e, `SELECT id FROM payments WHERE bill_id = $1`, [billId]).then((r) => r.id as string);
const deliveredOk = (ref: string, status: string) => tb.notifier.deliveries.some((d) => String((d.body as any).PaymentId) === ref && (d.body as any).Status === status && d.status === 200 && d.responseText === 'OK');

/** A T-Bank payment paid through the whole service in Chromium; returns our id and T-Bank's. */
async function paidInBrowser(size: 'phone' | 'desktop', amount: string, orderId: string, card: string): Promise<{ paymentId: string; ref: string; billId: string }> {
  const billId = await billFor(e, m, { amount, orderId });
  const page = await newPage(e, size);
  const waiting = await chooseCard(e, page, billId, `${ART}/tbank-${size}-${orderId}-1-form.png`);
  await page.screenshot({ path: `${ART}/tbank-${size}-${orderId}-2-waiting.png`, fullPage: true });
  const paymentId = await paymentOfBill(billId);
  expect(waiting).toContain(`/pay/${billId}/payments/${paymentId}`);
  await Promise.all([page.waitForURL(/\/new\//), page.getByTestId('action-link').click()]);
  await page.screenshot({ path: `${ART}/tbank-${size}-${orderId}-3-provider.png`, fullPage: true });
  await page.fill('#card', card);
  if (card.startsWith('5411')) {
    await Promise.all([page.waitForURL(/\/acs\//), page.click('#pay')]);
    await Promise.all([page.waitForURL(`${e.shop.base}/success`, { timeout: 20_000 }), page.click('#confirm')]);
  } else {
    await Promise.all([page.waitForURL(`${e.shop.base}/success`, { timeout: 20_000 }), page.click('#pay')]);
  }
  expect(await page.locator('#landed').textContent()).toBe('Thank you');
  await page.screenshot({ path: `${ART}/tbank-${size}-${orderId}-4-shop.png`, fullPage: true });
  await page.context().close();
  const p = await payment(paymentId);
  expect(p).toMatchObject({ status: 'SUCCESS', amount_received: new Decimal(amount).toFixed(2), connector: NAME });
  return { paymentId, ref: p.provider_ref as string, billId };
}

for (const [size, card] of [['phone', '4300 0000 0000 0777'], ['desktop', '5411 4200 0000 0002']] as const) {
  describe(`T-Bank end to end (${size})`, () => {
    it('pays on T-Bank\'s form, back on our return URL, the signed notification answered OK and applied once; a partial and a full refund by Cancel; the acquirer clearing shows the payment, refund clearing each refund; ledger verify ok', async () => {
      const before = await accountBalances(e);
      const { paymentId, ref } = await paidInBrowser(size, '1000.00', `tb-${size}`, card);
      expect(tb.payments.get(ref)?.Status).toBe('CONFIRMED');
      await until('CONFIRMED notification answered OK', async () => deliveredOk(ref, 'CONFIRMED'));
      expect(await one(e, `SELECT object_id FROM provider_notifications WHERE connector = $1 AND event_key = $2`, [NAME, `${ref}:CONFIRMED`])).toEqual({ object_id: paymentId });
      expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [paymentId])).n).toBe(1);
      const p = await payment(paymentId);
      const diff = (id: string, now: (id: string) => string) => new Decimal(now(id)).minus(before(id)).toFixed(2);
      let bal = await accountBalances(e);
      expect(diff(ACQ, bal)).toBe('1000.00');
      expect(diff('RUB:fee_revenue', bal)).toBe(new Decimal(p.commission).toFixed(2));

      const r1 = await refundVia(e, m, paymentId, '400.00');
      expect(await refundFinal(e, r1.id)).toMatchObject({ status: 'SUCCESS', provider_ref: `${ref}:60000` });
      const r2 = await refundVia(e, m, paymentId);
      expect(await refundFinal(e, r2.id)).toMatchObject({ status: 'SUCCESS', provider_ref: `${ref}:0` });
      expect(tb.payments.get(ref)).toMatchObject({ Status: 'REFUNDED', Amount: 0 });
      await until('refund notifications answered OK', async () => deliveredOk(ref, 'PARTIAL_REFUNDED') && deliveredOk(ref, 'REFUNDED'));
      bal = await accountBalances(e);
      expect(diff(ACQ, bal)).toBe('1000.00');
      expect(diff('RUB:refund_clearing', bal)).toBe('1000.00');
      expect(diff('RUB:fee_revenue', bal)).toBe(new Decimal(p.commission).toFixed(2));
      await ledgerOk(e);
    });
  });
}

describe('T-Bank end to end: two partial refunds in flight', () => {
  // The payment in the browser is the setup (hookTimeout); the test is the two refunds.
  let paid: { paymentId: string; ref: string };
  beforeAll(async () => { paid = await paidInBrowser('desktop', '1000.00', 'tb-two', '4300000000000777'); });

  it('two partial refunds at once, Cancel answers lost: GetState\'s status (PARTIAL_REFUNDED) cannot say whose refund it shows, so neither is sent again and both reach the attention list at once with its answer; resolved by the operator, each is debited once', async () => {
    const { paymentId, ref } = paid;
    await tb.idle();
    tb.misbehave({ notifications: 'out-of-order' });
    tb.misbehave({ op: 'Cancel', timeoutAfterApply: 'drop', times: 2 });
    const [a, b] = await Promise.all([refundVia(e, m, paymentId, '100.00'), refundVia(e, m, paymentId, '250.00')]);
    const items = await until('both refunds on the attention list', async () => {
      const r = await e.t.db.pool.query<{ id: string; last_heard: { reason?: string } }>(
        `SELECT id, last_heard FROM attention_items WHERE object_type = 'refund' AND object_id = ANY($1) AND resolved_at IS NULL`, [[a.id, b.id]]);
      return r.rows.length === 2 ? r.rows : null;
    });
    for (const item of items) expect(item.last_heard.reason).toMatch(/GetState answered \{.*"Status":"PARTIAL_REFUNDED"/);
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 65000 });
    // Two Cancels applied (their answers dropped, so never logged as answered); the repeats read
    // GetState and sent no Cancel.
    expect(tb.payments.get(ref)!.history.filter((x) => x === 'REFUNDING')).toHaveLength(2);
    expect(tb.requests.filter((x) => x.op === 'Cancel' && x.paymentId === ref)).toHaveLength(0);
    for (const item of items) {
      expect((await admin(e, 'POST', `/attention/${item.id}/resolve`, { outcome: 'SUCCESS', note: "T-Bank's cabinet shows both refunds" })).status).toBe(200);
    }
    const [fa, fb] = [await refundFinal(e, a.id), await refundFinal(e, b.id)];
    expect([fa.status, fb.status]).toEqual(['SUCCESS', 'SUCCESS']);
    tb.flushNotifications();
    await tb.idle();
    expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'REFUND_DEBIT' AND ref_id = ANY($1)`, [[a.id, b.id]])).n).toBe(2);
    await ledgerOk(e);
  });
});

describe('T-Bank end to end: what can go wrong', () => {
  it('the notification is lost: the reconciler asks T-Bank (GetState) and the payment ends SUCCESS, credited once', async () => {
    const billId = await billFor(e, m, { amount: '432.00', orderId: 'tb-lost' });
    tb.misbehave({ notifications: 'lost' });
    const page = await newPage(e, 'phone');
    await chooseCard(e, page, billId, `${ART}/tbank-lost-form.png`);
    const paymentId = await paymentOfBill(billId);
    const ref = (await payment(paymentId)).provider_ref as string;
    await page.context().close();
    tb.payerAction(ref, 'pay', { card: '4300000000000777' });
    expect(tb.notifier.lost.some((n) => String((n.body as any).PaymentId) === ref)).toBe(true);
    const p = await until('reconciled', async () => { const r = await payment(paymentId); return r.status === 'SUCCESS' ? r : null; });
    expect(p.amount_received).toBe('432.00');
    tb.misbehave({ notifications: 'normal' });
    expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [paymentId])).n).toBe(1);
    await ledgerOk(e);
  });

  it('a card T-Bank rejects ends FAIL with the reason; the payer is back on our form with the reason, and "Back to the shop" goes to the Fail URL', async () => {
    const billId = await billFor(e, m, { amount: '55.00', orderId: 'tb-declined' });
    const page = await newPage(e, 'desktop');
    await chooseCard(e, page, billId, `${ART}/tbank-declined-form.png`);
    const paymentId = await paymentOfBill(billId);
    await Promise.all([page.waitForURL(/\/new\//), page.getByTestId('action-link').click()]);
    await page.fill('#card', '4000 0000 0000 0002');
    // Issue 16: a declined card brings the payer back to our form with the reason beside it.
    await Promise.all([page.waitForURL(/\/pay\/\w+\?declined=\w+/, { timeout: 20_000 }), page.click('#pay')]);
    expect(await page.getByTestId('decline-reason').getAttribute('data-code')).toBe('card_declined');
    await Promise.all([page.waitForURL(`${e.shop.base}/fail`, { timeout: 20_000 }), page.getByTestId('fail-back').click()]);
    await page.screenshot({ path: `${ART}/tbank-declined-shop.png`, fullPage: true });
    await page.context().close();
    expect(await payment(paymentId)).toMatchObject({ status: 'FAIL', failure_reason: 'card_declined' });
    expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [paymentId])).n).toBe(0);
    await ledgerOk(e);
  });

  /** A bill paid with the declined card on T-Bank's form, the payer back on our waiting page; our payment id. */
  async function declinedOnTheForm(orderId: string): Promise<{ paymentId: string; page: Awaited<ReturnType<typeof newPage>> }> {
    const billId = await billFor(e, m, { amount: '56.00', orderId });
    const page = await newPage(e, 'desktop');
    await chooseCard(e, page, billId, `${ART}/tbank-${orderId}-form.png`);
    const paymentId = await paymentOfBill(billId);
    await Promise.all([page.waitForURL(/\/new\//), page.getByTestId('action-link').click()]);
    await page.fill('#card', '4000 0000 0000 0002');
    await page.click('#pay');
    return { paymentId, page };
  }

  it('a decline read by GetState before the notification waits for it: the notification\'s reason wins, whichever comes first', async () => {
    tb.misbehave({ notifications: 'out-of-order' });
    try {
      const { paymentId, page } = await declinedOnTheForm('tb-declined-held');
      // The page has read REJECTED (GetState has no decline reason) and waits for the notification.
      await until('the decline read without its reason', async () => (await one(e, `SELECT decline_seen_at FROM payments WHERE id = $1`, [paymentId])).decline_seen_at);
      expect(await payment(paymentId)).toMatchObject({ status: 'PROCESS', failure_reason: null });
      const back = page.waitForURL(/\/pay\/\w+\?declined=\w+/, { timeout: 20_000 });
      tb.flushNotifications();
      await back;
      expect(await page.getByTestId('decline-reason').getAttribute('data-code')).toBe('card_declined');
      await page.context().close();
      expect(await payment(paymentId)).toMatchObject({ status: 'FAIL', failure_reason: 'card_declined' });
    } finally {
      tb.misbehave({ notifications: 'normal' });
    }
  });

  it('a decline whose notification never comes ends FAIL with T-Bank\'s status as the reason after DECLINE_REASON_WAIT_MS', async () => {
    tb.misbehave({ notifications: 'lost' });
    try {
      const { paymentId, page } = await declinedOnTheForm('tb-declined-lost');
      const seen = await until('the decline read without its reason', async () => (await one(e, `SELECT decline_seen_at FROM payments WHERE id = $1`, [paymentId])).decline_seen_at as Date | null);
      await page.waitForURL(/\/pay\/\w+\?declined=\w+/, { timeout: 20_000 });
      expect(await page.getByTestId('decline-reason').getAttribute('data-code')).toBe('tbank:rejected');
      await page.context().close();
      const p = await one(e, `SELECT status::text, failure_reason, finished_at, provider_ref FROM payments WHERE id = $1`, [paymentId]);
      expect(p).toMatchObject({ status: 'FAIL', failure_reason: 'tbank:rejected' });
      expect((p.finished_at as Date).getTime() - seen.getTime()).toBeGreaterThanOrEqual(3000);
      // While it waits, nobody asks T-Bank again (the page polls every 1.5 s; it would only read
      // the same decline): the next GetState comes when the wait ends.
      const during = tb.requests.filter((r) => r.op === 'GetState' && r.paymentId === p.provider_ref
        && r.at > seen.getTime() + 500 && r.at < seen.getTime() + 2_900);
      expect(during).toEqual([]);
    } finally {
      tb.misbehave({ notifications: 'normal' });
    }
  });
});
