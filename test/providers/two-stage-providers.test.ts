import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TBankEmulator } from '../emulators/tbank.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { payRequest } from '../factories/payment.js';
import { admin, cardProviders, ledgerOk, one, startE2E, until, type E2E } from './e2e-service.js';

/**
 * Two-stage payments through the whole service (workers running) against the YooKassa and
 * T-Bank emulators (docs/adr/0073-two-stage-payments.md): `capture: false` on bill/create holds
 * the payer's money at the provider (YooKassa `waiting_for_capture`, T-Bank `AUTHORIZED` of a
 * PayType "T" payment); the operator's partial capture credits exactly what was captured; a
 * cancel and a hold expiring at the provider end the payment FAIL with nothing credited.
 */
const ART = 'test/artifacts/two-stage';
const TB = 'tb-two';
const YK = 'yk-two';

let e: E2E;
let tb: TBankEmulator;
let yk: YooKassaEmulator;
let mYk: MerchantFixture;
let mTb: MerchantFixture;

beforeAll(async () => {
  e = await startE2E(ART);
  // No card fee: what is credited is exactly what was captured.
  ({ tb, yk, mYk, mTb } = await cardProviders(e, { tb: TB, yk: YK }));
});

afterAll(async () => {
  await tb?.stop();
  await yk?.stop();
  await e?.close();
});

const row = (id: string) => one(e, `SELECT status::text, amount_received::text, account_amount::text, authorized_amount::text, failure_reason, provider_ref FROM payments WHERE id = $1`, [id]);
const available = async (m: MerchantFixture) => (await one(e, `SELECT coalesce((SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'), '0') AS a`, [m.merchantId])).a as string;

/** A two-stage bill paid by card on the provider's page: resolves once the service records the hold. */
async function held(m: MerchantFixture, amount: string, payOnProvider: (ref: string) => void): Promise<{ paymentId: string; ref: string }> {
  const b = await e.t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, amount, capture: false } });
  expect(b.statusCode, b.body).toBe(200);
  const r = await payRequest(e.t, b.json().bill_id, { method: 'BANK_CARD' });
  expect(r.statusCode, r.body).toBe(200);
  const paymentId = r.json().payment_id as string;
  const { provider_ref: ref } = await row(paymentId);
  payOnProvider(ref);
  await until('the hold recorded', async () => (await row(paymentId)).authorized_amount === amount);
  expect((await row(paymentId)).status).toBe('PROCESS');
  return { paymentId, ref };
}

const capture = (id: string, amount?: string) => admin(e, 'POST', `/payments/${id}/capture`, amount ? { amount } : {});

describe('YooKassa two-stage (capture: false)', () => {
  it('partial capture credits exactly the captured amount; YooKassa captured that much', async () => {
    const before = Number(await available(mYk));
    const { paymentId, ref } = await held(mYk, '1000.00', (ref) => { yk.payerAction(ref, 'pay'); });
    expect(yk.payments.get(ref)!.status).toBe('waiting_for_capture');
    // Nothing credited while held.
    expect(Number(await available(mYk))).toBeCloseTo(before, 2);
    const r = await capture(paymentId, '600.00');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'SUCCESS', amount: '600.00' });
    expect(yk.payments.get(ref)).toMatchObject({ status: 'succeeded', amount: { value: '600.00', currency: 'RUB' } });
    expect(await row(paymentId)).toMatchObject({ status: 'SUCCESS', amount_received: '600.00', account_amount: '600.00000000' });
    expect(Number(await available(mYk)) - before).toBeCloseTo(600, 2);
    // Asked again: 409, YooKassa not asked to capture twice, nothing credited twice.
    expect((await capture(paymentId, '600.00')).status).toBe(409);
    expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1 AND kind = 'PAYMENT_CREDIT'`, [paymentId])).n).toBe(1);
    await ledgerOk(e);
  });

  it('cancel: canceled_by_merchant at YooKassa, FAIL here; a hold expiring there (expired_on_capture) FAILs too', async () => {
    const before = Number(await available(mYk));
    const a = await held(mYk, '300.00', (ref) => { yk.payerAction(ref, 'pay'); });
    const c = await admin(e, 'POST', `/payments/${a.paymentId}/cancel`);
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body.status).toBe('FAIL');
    expect(yk.payments.get(a.ref)).toMatchObject({ status: 'canceled', cancellation_details: { reason: 'canceled_by_merchant' } });
    const b = await held(mYk, '200.00', (ref) => { yk.payerAction(ref, 'pay'); });
    yk.payerAction(b.ref, 'expire');
    await until('the expired hold applied', async () => (await row(b.paymentId)).status === 'FAIL');
    expect((await row(b.paymentId)).failure_reason).toBe('expired_on_capture');
    expect(Number(await available(mYk))).toBeCloseTo(before, 2);
    await ledgerOk(e);
  });
});

describe('YooKassa two-stage: a capture whose answer is lost', () => {
  it('is applied once: the repeat under the same Idempotence-Key or reconciliation reads it; a capture sent again moves nothing', async () => {
    const before = Number(await available(mYk));
    const { paymentId, ref } = await held(mYk, '800.00', (ref) => { yk.payerAction(ref, 'pay'); });
    // YooKassa captures, and the connection drops before the answer.
    yk.misbehave({ op: 'payments.capture', timeoutAfterApply: 'drop' });
    const r = await capture(paymentId, '500.00');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(['SUCCESS', 'PROCESS']).toContain(r.body.status);
    await until('the capture applied', async () => (await row(paymentId)).status === 'SUCCESS');
    expect(yk.payments.get(ref)).toMatchObject({ status: 'succeeded', amount: { value: '500.00', currency: 'RUB' } });
    expect(await row(paymentId)).toMatchObject({ amount_received: '500.00' });
    const again = await capture(paymentId, '500.00');
    expect(again.status).toBe(409);
    expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1 AND kind = 'PAYMENT_CREDIT'`, [paymentId])).n).toBe(1);
    expect(Number(await available(mYk)) - before).toBeCloseTo(500, 2);
    await ledgerOk(e);
  });
});

describe('T-Bank two-stage (PayType T)', () => {
  it('Init carries PayType T; partial Confirm credits exactly the captured amount; Cancel of another hold REVERSES it', async () => {
    const before = Number(await available(mTb));
    const { paymentId, ref } = await held(mTb, '1000.00', (ref) => { tb.payerAction(ref, 'pay'); });
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'AUTHORIZED', PayType: 'T' });
    expect((await capture(paymentId, '1000.01')).status).toBe(422);
    const r = await capture(paymentId, '600.00');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'SUCCESS', amount: '600.00' });
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'CONFIRMED', Amount: 60000 });
    expect(await row(paymentId)).toMatchObject({ status: 'SUCCESS', amount_received: '600.00', account_amount: '600.00000000' });
    expect(Number(await available(mTb)) - before).toBeCloseTo(600, 2);

    const other = await held(mTb, '250.00', (ref) => { tb.payerAction(ref, 'pay'); });
    const c = await admin(e, 'POST', `/payments/${other.paymentId}/cancel`);
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body.status).toBe('FAIL');
    expect(tb.payments.get(other.ref)!.Status).toBe('REVERSED');
    expect(Number(await available(mTb)) - before).toBeCloseTo(600, 2);
    await ledgerOk(e);
  });

  it('the payment keeps what Init answered (PayType T) and every read hands it back, so AUTHORIZED is recorded as the hold; a one-stage payment keeps nothing and is never held', async () => {
    const data = async (id: string) => (await one(e, `SELECT provider_data FROM payments WHERE id = $1`, [id])).provider_data;
    // T-Bank's GetState does not say PayType: the hold is recorded only through the data the payment kept.
    const { paymentId } = await held(mTb, '300.00', (ref) => { tb.payerAction(ref, 'pay'); });
    expect(await data(paymentId)).toEqual({ payType: 'T' });

    const b = await e.t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: mTb.auth, payload: { shop_id: mTb.shopId, amount: '200.00' } });
    expect(b.statusCode, b.body).toBe(200);
    const r = await payRequest(e.t, b.json().bill_id, { method: 'BANK_CARD' });
    expect(r.statusCode, r.body).toBe(200);
    const plain = r.json().payment_id as string;
    tb.payerAction((await row(plain)).provider_ref, 'pay');
    await until('the one-stage payment paid', async () => (await row(plain)).status === 'SUCCESS');
    expect(await row(plain)).toMatchObject({ authorized_amount: null, amount_received: '200.00' });
    expect(await data(plain)).toBeNull();
    await ledgerOk(e);
  });
});
