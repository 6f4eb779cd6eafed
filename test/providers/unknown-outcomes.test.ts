import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TBankEmulator } from '../emulators/tbank.js';
import type { YooKassaEmulator } from '../emulators/yookassa.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { payRequest } from '../factories/payment.js';
import { cardProviders, ledgerOk, one, refundFinal, refundVia, routedMerchant, startE2E, until, type E2E } from './e2e-service.js';

/**
 * Answers that decide nothing, through the whole service (workers running) against the T-Bank and
 * YooKassa emulators: an unknown outcome is decided by the provider's own state before anything is
 * repeated (docs/adr/0090-unknown-is-unknown.md); a refund is decided by documented statuses, never
 * GetState's Amount, and what they cannot decide reaches an operator at once (docs/adr/0091); saved
 * methods follow the payer (docs/adr/0092-saved-methods-follow-the-payer.md).
 */
const ART = 'test/artifacts/unknown-outcomes';
const TB = 'tb-unknown';
const YK = 'yk-unknown';

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

const row = (id: string) => one(e, `SELECT status::text, amount_received::text, provider_ref, failure_reason FROM payments WHERE id = $1`, [id]);
const available = async (m: MerchantFixture) => (await one(e, `SELECT coalesce((SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'), '0') AS a`, [m.merchantId])).a as string;
const transfers = async (refId: string, kind: string) => (await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1 AND kind = $2`, [refId, kind])).n as number;
const method = async (paymentId: string) => (await one(e, `SELECT id, status::text FROM saved_payment_methods WHERE payment_id = $1`, [paymentId])) as { id: string; status: string } | undefined;
const charge = (m: MerchantFixture, payload: Record<string, unknown>) =>
  e.t.app.inject({ method: 'POST', url: '/api/v1/payment/charge', headers: m.auth, payload });
const postbackOf = async (paymentId: string) => (await one<{ payload: { fields: Record<string, string> } } | undefined>(e,
  `SELECT e.payload FROM outbox_event_keys k JOIN outbox_events e ON e.id = k.id AND e.created_at = k.created_at
    WHERE k.kind = 'PAYMENT_POSTBACK' AND k.aggregate_id = $1`, [paymentId]))?.payload.fields;

/** A bill paid on the provider's page (by card, or SBP); `consent` saves the card. Resolves once SUCCESS. */
async function paid(m: MerchantFixture, pay: (ref: string) => void, o: { amount?: string; consent?: boolean; sbp?: boolean } = {}): Promise<string> {
  const b = await e.t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth,
    payload: { shop_id: m.shopId, amount: o.amount ?? '100.00', ...(o.consent ? { save_payment_method: true } : {}) } });
  expect(b.statusCode, b.body).toBe(200);
  const r = await payRequest(e.t, b.json().bill_id, { method: o.sbp ? 'SBP' : 'BANK_CARD', ...(o.consent ? { save_payment_method: '1' } : {}) });
  expect(r.statusCode, r.body).toBe(200);
  const paymentId = r.json().payment_id as string;
  pay((await row(paymentId)).provider_ref);
  await until('the payment applied', async () => (await row(paymentId)).status === 'SUCCESS');
  return paymentId;
}

/** A saved card's method id here, once the provider's word that it saved is applied. */
const savedMethod = (paymentId: string) => until('the card saved', async () => (await method(paymentId))?.id);

describe('unknown is unknown: an applied operation answered "try again later" or a technical error', () => {
  for (const code of ['999', '3040']) {
    it(`a T-Bank refund whose Cancel was applied but answered ${code} ends SUCCESS: refunded once at T-Bank, debited once here`, async () => {
      const id = await paid(mTb, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
      const ref = (await row(id)).provider_ref as string;
      const before = Number(await available(mTb));
      tb.misbehave({ op: 'Cancel', errorAfterApply: code });
      const r = await refundVia(e, mTb, id);
      // Taken as a refusal, the refund would FAIL while the payer has the money back.
      expect((await refundFinal(e, r.id)).status).toBe('SUCCESS');
      expect(tb.payments.get(ref)).toMatchObject({ Status: 'REFUNDED', Amount: 0 });
      expect(tb.payments.get(ref)!.history.filter((s) => s === 'REFUNDING')).toHaveLength(1);
      expect(await transfers(r.id, 'REFUND_DEBIT')).toBe(1);
      expect(Number(await available(mTb)) - before).toBeCloseTo(-100, 2);
      await ledgerOk(e);
    });
  }

  it('a YooKassa autopayment applied and answered 500 three times: payment/charge answers 200 SUCCESS (never 409 nor FAIL) while the notification races it; credited once', async () => {
    const saver = await paid(mYk, (ref) => { yk.payerAction(ref, 'pay', { card: '4242424242424242' }); }, { amount: '10.00', consent: true });
    const m = await savedMethod(saver);
    const before = Number(await available(mYk));
    yk.misbehave({ op: 'payments.create', status5xxAfterApply: { answers: 3 } });
    const r = await charge(mYk, { payment_method_id: m, amount: '333.00' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'SUCCESS', amount_received: 333 });
    const id = r.json().id as string;
    // The notification of the applied charge came while the call was still being repeated.
    const ref = (await row(id)).provider_ref as string;
    await until('the notification seen', async () => (await e.t.db.pool.query(`SELECT 1 FROM provider_notifications WHERE connector = $1 AND provider_ref = $2`, [YK, ref])).rowCount! > 0);
    expect(await transfers(id, 'PAYMENT_CREDIT')).toBe(1);
    expect([...yk.payments.values()].filter((p) => p.amount.value === '333.00')).toHaveLength(1);
    expect(Number(await available(mYk)) - before).toBeCloseTo(333, 2);
    await ledgerOk(e);
  });

  it('a YooKassa autopayment still answered 500 after the repeats stays PROCESS (never FAIL), and reconciliation repeats it under the same key: SUCCESS once', async () => {
    const saver = await paid(mYk, (ref) => { yk.payerAction(ref, 'pay', { card: '4242424242424242' }); }, { amount: '10.00', consent: true });
    const m = await savedMethod(saver);
    yk.misbehave({ notifications: 'lost' });
    yk.misbehave({ op: 'payments.create', status5xxAfterApply: { answers: 5 } });
    try {
      const r = await charge(mYk, { payment_method_id: m, amount: '444.00' });
      expect(r.statusCode, r.body).toBe(200);
      // A 500 is "result unknown": taken as a refusal, the charge would FAIL while YooKassa charged the card.
      expect(r.json().status).toBe('PROCESS');
      const id = r.json().id as string;
      await until('reconciled', async () => (await row(id)).status === 'SUCCESS', 40_000);
      expect(await transfers(id, 'PAYMENT_CREDIT')).toBe(1);
      expect([...yk.payments.values()].filter((p) => p.amount.value === '444.00')).toHaveLength(1);
    } finally {
      yk.misbehave({ notifications: 'normal' });
    }
    await ledgerOk(e);
  });

  it("a 429 is repeated after the wait YooKassa asked for (the body's retry_after, 1000 ms), not the back-off", async () => {
    const saver = await paid(mYk, (ref) => { yk.payerAction(ref, 'pay', { card: '4242424242424242' }); }, { amount: '10.00', consent: true });
    const m = await savedMethod(saver);
    const from = yk.limitedAt.length;
    yk.misbehave({ op: 'payments.create', status429: { retryAfterMs: 1000 } });
    const r = await charge(mYk, { payment_method_id: m, amount: '12.00' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().status).toBe('SUCCESS');
    const limited = yk.limitedAt[from]!;
    // The 429 itself is logged too, a millisecond after limitedAt: the repeat is the next POST not refused.
    const repeat = yk.requests.find((q) => q.method === 'POST' && q.path === '/v3/payments' && q.status !== 429 && q.at >= limited);
    expect(repeat!.at - limited).toBeGreaterThanOrEqual(990);
  });
});

describe('refunds decided by what is documented (GetState\'s Amount as either reading)', () => {
  let mSbp: MerchantFixture;
  beforeAll(async () => {
    mSbp = await routedMerchant(e, { payment_card: [TB], payment_sbp: [TB] });
    await e.t.db.prisma.merchant.update({ where: { id: mSbp.merchantId }, data: { paymentCardPercent: 0, paymentCardFixed: 0, paymentSbpPercent: 0, paymentSbpFixed: 0 } });
  });

  for (const reading of ['left', 'payment'] as const) {
    it(`GetState Amount as what is ${reading === 'left' ? 'left' : 'the payment was'}: an SBP refund (ASYNC_REFUNDING) ends SUCCESS once T-Bank settles it`, async () => {
      tb.stateAmount = reading;
      try {
        const id = await paid(mSbp, (ref) => { tb.payerAction(ref, 'sbp-confirm'); }, { sbp: true });
        const ref = (await row(id)).provider_ref as string;
        const r = await refundVia(e, mSbp, id, '30.00');
        expect((await refundFinal(e, r.id)).status).toBe('SUCCESS');
        expect(tb.payments.get(ref)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 7000 });
        expect(await transfers(r.id, 'REFUND_DEBIT')).toBe(1);
      } finally {
        tb.stateAmount = 'left';
      }
    });

    it(`GetState Amount as what is ${reading === 'left' ? 'left' : 'the payment was'}: a partial refund whose Cancel applied but was answered 9999 ends SUCCESS, one Cancel`, async () => {
      tb.stateAmount = reading;
      try {
        const id = await paid(mTb, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
        const ref = (await row(id)).provider_ref as string;
        tb.misbehave({ op: 'Cancel', errorAfterApply: '9999' });
        const r = await refundVia(e, mTb, id, '40.00');
        expect((await refundFinal(e, r.id)).status).toBe('SUCCESS');
        expect(tb.payments.get(ref)!.history.filter((s) => s === 'REFUNDING')).toHaveLength(1);
        expect(tb.payments.get(ref)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 6000 });
        expect(await transfers(r.id, 'REFUND_DEBIT')).toBe(1);
      } finally {
        tb.stateAmount = 'left';
      }
    });
  }

  it("what the statuses cannot decide (PARTIAL_REFUNDED with another refund of the payment) reaches the attention list at once, with GetState's answer; nothing is sent again", async () => {
    const id = await paid(mTb, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); });
    const ref = (await row(id)).provider_ref as string;
    const first = await refundVia(e, mTb, id, '10.00');
    expect((await refundFinal(e, first.id)).status).toBe('SUCCESS');
    tb.misbehave({ op: 'Cancel', errorAfterApply: '9999' });
    const second = await refundVia(e, mTb, id, '20.00');
    const item = await until('an attention item', async () => (await e.t.db.pool.query<{ reason: string; last_heard: { reason?: string } }>(
      `SELECT reason, last_heard FROM attention_items WHERE object_type = 'refund' AND object_id = $1 AND resolved_at IS NULL`, [second.id])).rows[0], 30_000);
    expect(item.reason).toMatch(/cannot decide/);
    expect(item.last_heard.reason).toMatch(/GetState answered \{.*"Status":"PARTIAL_REFUNDED"/);
    expect(tb.payments.get(ref)!.history.filter((s) => s === 'REFUNDING')).toHaveLength(2);
    expect((await one(e, `SELECT status::text FROM refunds WHERE id = $1`, [second.id])).status).toBe('PROCESS');
  });
});

describe('saved methods that follow the payer', () => {
  it('T-Bank: Init carries DATA.OperationInitiatorType 1 when the card is saved, 0 otherwise, R for the recurring charge; a terminal that checks it charges', async () => {
    tb.requireInitiatorType = true;
    try {
      const plain = await paid(mTb, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); }, { amount: '10.00' });
      expect(tb.payments.get((await row(plain)).provider_ref)!.Initiator).toBe('0');
      const saver = await paid(mTb, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); }, { amount: '10.00', consent: true });
      expect(tb.payments.get((await row(saver)).provider_ref)!.Initiator).toBe('1');
      const m = await savedMethod(saver);
      const r = await charge(mTb, { payment_method_id: m, amount: '25.00' });
      expect(r.statusCode, r.body).toBe(200);
      // Without the initiator T-Bank answers 1126 and the charge fails.
      expect(r.json().status).toBe('SUCCESS');
      expect(tb.payments.get((await row(r.json().id)).provider_ref)!.Initiator).toBe('R');
    } finally {
      tb.requireInitiatorType = false;
    }
  });

  it('T-Bank: Charge switched off (error 10) is a decisive refusal with its reason; the method stays ACTIVE', async () => {
    const saver = await paid(mTb, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); }, { amount: '10.00', consent: true });
    const m = await savedMethod(saver);
    tb.chargeEnabled = false;
    try {
      const r = await charge(mTb, { payment_method_id: m, amount: '15.00' });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json()).toMatchObject({ status: 'FAIL', error_code: 'charge_disabled' });
      expect((await method(saver))!.status).toBe('ACTIVE');
    } finally {
      tb.chargeEnabled = true;
    }
  });

  it('YooKassa: an autopayment canceled permission_revoked revokes the method here (FAIL postback and payment say payment_method_revoked); it is never charged again', async () => {
    const saver = await paid(mYk, (ref) => { yk.payerAction(ref, 'pay', { card: '4242424242424242' }); }, { amount: '10.00', consent: true });
    const m = await savedMethod(saver);
    const ykRef = (await row(saver)).provider_ref as string;
    const providerId = [...yk.savedMethods.values()].find((x) => x.payment === ykRef)!.id;
    yk.revokePermission(providerId);
    const r = await charge(mYk, { payment_method_id: m, amount: '50.00' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'FAIL', error_code: 'payment_method_revoked' });
    expect((await postbackOf(r.json().id))).toMatchObject({ Status: 'FAIL', ErrorCode: 'payment_method_revoked' });
    expect((await method(saver))!.status).toBe('REVOKED');
    const creates = yk.requests.filter((q) => q.method === 'POST' && q.path === '/v3/payments').length;
    const again = await charge(mYk, { payment_method_id: m, amount: '50.00' });
    expect(again.statusCode).toBe(422);
    expect(yk.requests.filter((q) => q.method === 'POST' && q.path === '/v3/payments')).toHaveLength(creates);
  });

  it('T-Bank: a Charge answered 262 (the parent payment expired) revokes the method here; it is never charged again', async () => {
    const saver = await paid(mTb, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); }, { amount: '10.00', consent: true });
    const m = await savedMethod(saver);
    const rebill = tb.payments.get((await row(saver)).provider_ref)!.RebillId!;
    tb.expiredRebills.add(rebill);
    const r = await charge(mTb, { payment_method_id: m, amount: '60.00' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'FAIL', error_code: 'payment_method_revoked' });
    expect((await method(saver))!.status).toBe('REVOKED');
    const inits = tb.requests.filter((q) => q.op === 'Init').length;
    expect((await charge(mTb, { payment_method_id: m, amount: '60.00' })).statusCode).toBe(422);
    expect(tb.requests.filter((q) => q.op === 'Init')).toHaveLength(inits);
  });

  it('T-Bank: a method revoked through the API is removed at T-Bank (GetCardList, then RemoveCard): its RebillId charges no more', async () => {
    const saver = await paid(mTb, (ref) => { tb.payerAction(ref, 'pay', { card: '4300000000000777' }); }, { amount: '10.00', consent: true });
    const m = await savedMethod(saver);
    const rebill = tb.payments.get((await row(saver)).provider_ref)!.RebillId!;
    const r = await e.t.app.inject({ method: 'POST', url: '/api/v1/payment/methods/revoke', headers: mTb.auth, payload: { payment_method_id: m } });
    expect(r.statusCode, r.body).toBe(200);
    expect(tb.cards.get(saver)!.find((c) => c.RebillId === rebill)).toMatchObject({ Status: 'D' });
    expect(tb.rebills.has(rebill)).toBe(false);
    expect(tb.requests.filter((q) => q.op === 'RemoveCard')).toHaveLength(1);
  });
});
