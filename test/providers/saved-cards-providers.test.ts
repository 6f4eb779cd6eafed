import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TBankEmulator } from '../emulators/tbank.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { payRequest } from '../factories/payment.js';
import { admin, cardProviders, ledgerOk, one, routedMerchant, startE2E, until, type E2E } from './e2e-service.js';

/**
 * Saved cards through the whole service (workers running) against the YooKassa and T-Bank
 * emulators (docs/adr/0074-saved-cards-and-recurring-charges.md): the provider is asked to save
 * only when the payer consented (YooKassa `save_payment_method`, T-Bank `Recurrent` with
 * `CustomerKey`), the method is saved once from the provider's word even with repeated
 * notifications, and POST /api/v1/payment/charge charges it (YooKassa `payment_method_id`,
 * T-Bank Init then Charge with `RebillId`), crediting the balance exactly once.
 */
const ART = 'test/artifacts/saved-cards';
const TB = 'tb-saved';
const YK = 'yk-saved';

let e: E2E;
let tb: TBankEmulator;
let yk: YooKassaEmulator;
let mYk: MerchantFixture;
let mTb: MerchantFixture;

beforeAll(async () => {
  e = await startE2E(ART);
  ({ tb, yk, mYk, mTb } = await cardProviders(e, { tb: TB, yk: YK }));
});

afterAll(async () => {
  await tb?.stop();
  await yk?.stop();
  await e?.close();
});

const row = (id: string) => one(e, `SELECT status::text, amount_received::text, provider_ref, payment_method_id FROM payments WHERE id = $1`, [id]);
const available = async (m: MerchantFixture) => (await one(e, `SELECT coalesce((SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'), '0') AS a`, [m.merchantId])).a as string;
const credits = async (id: string) => (await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1 AND kind = 'PAYMENT_CREDIT'`, [id])).n as number;
const savedOf = async (paymentId: string) => (await e.t.db.pool.query(`SELECT id, connector, card_mask, card_expiry, mode FROM saved_payment_methods WHERE payment_id = $1`, [paymentId])).rows;
/** The card a payment saved, once the provider's word is applied (T-Bank's may come after the payment is SUCCESS). */
const savedCard = (paymentId: string) => until('the card saved', async () => (await savedOf(paymentId))[0]);
const charge = (m: MerchantFixture, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  e.t.app.inject({ method: 'POST', url: '/api/v1/payment/charge', headers: { ...m.auth, ...headers }, payload });

/** A bill with save_payment_method paid by card on the provider's page; resolves once it is SUCCESS. */
async function paid(m: MerchantFixture, consent: boolean, payOnProvider: (ref: string) => void): Promise<string> {
  const b = await e.t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, amount: '10.00', save_payment_method: true } });
  expect(b.statusCode, b.body).toBe(200);
  const r = await payRequest(e.t, b.json().bill_id, { method: 'BANK_CARD', ...(consent ? { save_payment_method: '1' } : {}) });
  expect(r.statusCode, r.body).toBe(200);
  const paymentId = r.json().payment_id as string;
  payOnProvider((await row(paymentId)).provider_ref);
  await until('the payment applied', async () => (await row(paymentId)).status === 'SUCCESS');
  return paymentId;
}

describe('YooKassa saved cards', () => {
  it('consent unchecked: save_payment_method is not sent, YooKassa saves nothing, nothing is saved here', async () => {
    const before = yk.savedMethods.size;
    const id = await paid(mYk, false, (ref) => { yk.payerAction(ref, 'pay', { card: '4242424242424242' }); });
    expect(yk.savedMethods.size).toBe(before);
    expect(await savedOf(id)).toEqual([]);
  });

  it('consent: saved once from payment_method.saved even when every notification comes twice', async () => {
    yk.misbehave({ notifications: 'duplicate', copies: 3 });
    try {
      const id = await paid(mYk, true, (ref) => { yk.payerAction(ref, 'pay', { card: '4242424242424242' }); });
      const ref = (await row(id)).provider_ref as string;
      expect([...yk.savedMethods.values()].filter((x) => x.payment === ref)).toHaveLength(1);
      await yk.idle(); // every copy of every notification answered
      const rows = await savedOf(id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ connector: YK, card_mask: '424242******4242', card_expiry: '12/30', mode: 'live' });
      expect((await row(id)).payment_method_id).toBe(rows[0].id);
    } finally {
      yk.misbehave({ notifications: 'normal' });
    }
  });

  it('charge: payment_method_id in POST /v3/payments, SUCCESS, credited exactly once; the same Idempotency-Key charges once', async () => {
    const saver = await paid(mYk, true, (ref) => { yk.payerAction(ref, 'pay', { card: '5555555555554444' }); });
    const method = (await savedOf(saver))[0].id as string;
    const before = Number(await available(mYk));
    const headers = { 'idempotency-key': `yk-${Math.random()}` };
    const r = await charge(mYk, { payment_method_id: method, amount: '990.00', order_id: 'sub-12' }, headers);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'SUCCESS', amount_received: 990, payment_method_id: method });
    const ref = (await row(r.json().id)).provider_ref as string;
    expect(yk.payments.get(ref)).toMatchObject({ status: 'succeeded', payment_method: { saved: true } });
    const again = await charge(mYk, { payment_method_id: method, amount: '990.00', order_id: 'sub-12' }, headers);
    expect(again.json().id).toBe(r.json().id);
    await until('the notification seen', async () => (await credits(r.json().id)) === 1);
    expect(Number(await available(mYk)) - before).toBeCloseTo(990, 2);
    expect([...yk.payments.values()].filter((p) => p.amount.value === '990.00')).toHaveLength(1);
    await ledgerOk(e);
  });

  it('charge whose answer is lost: PROCESS, then reconciliation repeats it under the same Idempotence-Key and credits once', async () => {
    const saver = await paid(mYk, true, (ref) => { yk.payerAction(ref, 'pay', { card: '4242424242424242' }); });
    const method = (await savedOf(saver))[0].id as string;
    const before = Number(await available(mYk));
    yk.misbehave({ notifications: 'lost' });
    yk.misbehave({ op: 'payments.create', timeoutAfterApply: 'drop' });
    try {
      const r = await charge(mYk, { payment_method_id: method, amount: '321.00' });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().status).toBe('PROCESS');
      const id = r.json().id as string;
      await until('reconciled', async () => (await row(id)).status === 'SUCCESS', 40_000);
      expect(await credits(id)).toBe(1);
      expect([...yk.payments.values()].filter((p) => p.amount.value === '321.00')).toHaveLength(1);
      expect(Number(await available(mYk)) - before).toBeCloseTo(321, 2);
    } finally {
      yk.misbehave({ notifications: 'normal' });
    }
    await ledgerOk(e);
  });

  it('YooKassa refuses an unknown payment_method_id (400): the charge FAILs, nothing credited', async () => {
    const saver = await paid(mYk, true, (ref) => { yk.payerAction(ref, 'pay', { card: '4242424242424242' }); });
    const m = (await savedOf(saver))[0];
    yk.savedMethods.clear();
    const r = await charge(mYk, { payment_method_id: m.id, amount: '5.00' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'FAIL', amount_received: 0 });
    expect(await credits(r.json().id)).toBe(0);
  });
});

describe('T-Bank saved cards', () => {
  it('consent unchecked: Init has no Recurrent, no RebillId, nothing saved', async () => {
    const id = await paid(mTb, false, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
    const ref = (await row(id)).provider_ref as string;
    expect(tb.payments.get(ref)!.Recurrent).toBeUndefined();
    expect(tb.payments.get(ref)!.RebillId).toBeUndefined();
    expect(await savedOf(id)).toEqual([]);
  });

  it('consent: Init Recurrent Y with CustomerKey; the RebillId of the notifications saved once (every notification twice)', async () => {
    tb.misbehave({ notifications: 'duplicate', copies: 2 });
    try {
      const id = await paid(mTb, true, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
      const ref = (await row(id)).provider_ref as string;
      expect(tb.payments.get(ref)).toMatchObject({ Recurrent: true, CustomerKey: id });
      await savedCard(id);
      await tb.idle(); // every copy of every notification answered
      const rows = await savedOf(id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ connector: TB, card_mask: '430000******0777', card_expiry: '12/30' });
    } finally {
      tb.misbehave({ notifications: 'normal' });
    }
  });

  it('charge: Init then Charge with the RebillId, SUCCESS, credited exactly once; a Charge whose answer is lost is reconciled once', async () => {
    const saver = await paid(mTb, true, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
    const method = (await savedCard(saver)).id as string;
    const before = Number(await available(mTb));
    const r = await charge(mTb, { payment_method_id: method, amount: '700.00' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'SUCCESS', amount_received: 700, payment_method_id: method });
    const ref = (await row(r.json().id)).provider_ref as string;
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'CONFIRMED', Amount: 70000, OrderId: r.json().id });
    expect(tb.payments.get(ref)!.Recurrent).toBeUndefined();

    tb.misbehave({ op: 'Charge', timeoutAfterApply: 'drop' });
    const lost = await charge(mTb, { payment_method_id: method, amount: '45.00' });
    expect(lost.statusCode, lost.body).toBe(200);
    const id = lost.json().id as string;
    await until('reconciled', async () => (await row(id)).status === 'SUCCESS', 40_000);
    expect([...tb.payments.values()].filter((p) => p.OrderId === id)).toHaveLength(1);
    expect(await credits(r.json().id)).toBe(1);
    expect(await credits(id)).toBe(1);
    expect(Number(await available(mTb)) - before).toBeCloseTo(745, 2);
    await ledgerOk(e);
  });

  it('a Charge answered 9001 (retry later) with nothing charged stays PROCESS; reconciliation charges the same payment once', async () => {
    const saver = await paid(mTb, true, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
    const method = (await savedCard(saver)).id as string;
    const before = Number(await available(mTb));
    tb.misbehave({ op: 'Charge', errorCode: '9001' });
    const r = await charge(mTb, { payment_method_id: method, amount: '64.00' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().status).toBe('PROCESS');
    const id = r.json().id as string;
    await until('charged by reconciliation', async () => (await row(id)).status === 'SUCCESS', 40_000);
    // One T-Bank payment for the order, charged once: the repeat found it NEW (CheckOrder) and charged it.
    expect([...tb.payments.values()].filter((p) => p.OrderId === id)).toHaveLength(1);
    expect(await credits(id)).toBe(1);
    expect(Number(await available(mTb)) - before).toBeCloseTo(64, 2);
    await ledgerOk(e);
  });

  it('a Charge that applied but was answered 9999 without a Status: GetState decides, the charge SUCCEEDs, credited once', async () => {
    const saver = await paid(mTb, true, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
    const method = (await savedCard(saver)).id as string;
    const before = Number(await available(mTb));
    tb.misbehave({ op: 'Charge', errorAfterApply: '9999' });
    // No notification: the charge's own answer (GetState) must decide, not T-Bank's notification.
    tb.misbehave({ notifications: 'lost' });
    let id: string;
    try {
      const r = await charge(mTb, { payment_method_id: method, amount: '71.00' });
      expect(r.statusCode, r.body).toBe(200);
      id = r.json().id as string;
      // Taken as a final refusal, the payer's money would be charged at T-Bank and the charge FAIL here.
      expect(r.json().status).toBe('SUCCESS');
    } finally {
      tb.misbehave({ notifications: 'normal' });
    }
    expect(tb.requests.filter((q) => q.op === 'GetState' && q.paymentId === String([...tb.payments.values()].find((p) => p.OrderId === id)!.PaymentId)).length).toBeGreaterThanOrEqual(1);
    expect(await credits(id)).toBe(1);
    expect(Number(await available(mTb)) - before).toBeCloseTo(71, 2);
    await ledgerOk(e);
  });

  it('T-Bank refuses an unknown RebillId: the charge FAILs, nothing credited', async () => {
    const saver = await paid(mTb, true, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
    const m = await savedCard(saver);
    tb.rebills.clear();
    const r = await charge(mTb, { payment_method_id: m.id, amount: '5.00' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'FAIL', amount_received: 0 });
    expect(await credits(r.json().id)).toBe(0);
  });
});

describe('saved cards of a fiscalized shop (54-FZ)', () => {
  it("a charge carries a receipt to the saving payer's e-mail, or to the payer_email the charge names; YooKassa refuses none", async () => {
    const m = await routedMerchant(e, { payment_card: [YK] });
    await e.t.db.prisma.merchant.update({ where: { id: m.merchantId }, data: { paymentCardPercent: 0, paymentCardFixed: 0 } });
    const fiscal = { enabled: true, tax_system_code: 2, vat_code: 1, payment_subject: 'service', payment_mode: 'full_payment' };
    expect((await admin(e, 'PATCH', `/shops/${m.shopId}`, { fiscalization: fiscal })).status).toBe(200);
    yk.fiscalization = true;
    try {
      const b = await e.t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth,
        payload: { shop_id: m.shopId, amount: '10.00', save_payment_method: true, payer_email: 'saver@example.test' } });
      expect(b.statusCode, b.body).toBe(200);
      const p = await payRequest(e.t, b.json().bill_id, { method: 'BANK_CARD', save_payment_method: '1' });
      expect(p.statusCode, p.body).toBe(200);
      const saver = p.json().payment_id as string;
      yk.payerAction((await row(saver)).provider_ref, 'pay', { card: '4242424242424242' });
      await until('the saving payment applied', async () => (await row(saver)).status === 'SUCCESS');
      const method = (await savedCard(saver)).id as string;
      const receiptOf = async (id: string) => {
        const ref = (await row(id)).provider_ref as string;
        return yk.receipts.find((x) => x.object === 'payment' && x.id === ref)?.receipt;
      };

      const r = await charge(m, { payment_method_id: method, amount: '150.00' });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().status).toBe('SUCCESS');
      expect(await receiptOf(r.json().id)).toMatchObject({
        customer: { email: 'saver@example.test' }, tax_system_code: 2,
        items: [expect.objectContaining({ amount: { value: '150.00', currency: 'RUB' }, payment_subject: 'service' })],
      });

      const other = await charge(m, { payment_method_id: method, amount: '20.00', payer_email: 'accounts@example.test' });
      expect(other.statusCode, other.body).toBe(200);
      expect(other.json().status).toBe('SUCCESS');
      expect(await receiptOf(other.json().id)).toMatchObject({ customer: { email: 'accounts@example.test' } });

      const bad = await charge(m, { payment_method_id: method, amount: '20.00', payer_email: 'not-an-email' });
      expect(bad.statusCode).toBe(422);
      expect(JSON.stringify(bad.json())).toContain('payer_email');
    } finally {
      yk.fiscalization = false;
    }
  });
});
