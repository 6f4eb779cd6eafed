import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, heldPayment, payRequest } from '../factories/payment.js';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { deliverUntil } from '../outbox/deliver-until.js';
import { startReceiver, type Receiver } from '../outbox/receiver.js';
import { balance } from '../refund/helpers.js';
import { admin } from '../admin/helpers.js';
import { cabinetMerchant, signedIn, teamMember } from '../cabinet/helpers.js';

/**
 * Two-stage payments through the service (docs/adr/0073-two-stage-payments.md): a bill created
 * with `capture: false` is paid by card through the sandbox connector, which holds the money;
 * the operator API captures it (in full or in part) or cancels it; the ledger, the postback and
 * the payment follow the provider's answer once.
 */
let t: TestApp;
let rx: Receiver;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  rx = await startReceiver();
  // No fee: what is credited is exactly what was captured.
  m = await createMerchant(t, { merchant: { paymentCardPercent: '0', paymentCardFixed: '0' }, shop: { resultUrl: `${rx.url}/result` } });
});
afterAll(async () => { await rx.close(); await t.close(); });
beforeEach(() => { rx.received.length = 0; });

const billCreate = async (payload: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, ...payload } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
};
const available = async () => (await balance(t, m.merchantId)).available;
const paymentRow = async (id: string) => (await t.db.pool.query(
  `SELECT status::text, amount_received::text, account_amount::text, authorized_amount::text, capture_amount::text, failure_reason,
          (SELECT status::text FROM bills WHERE id = payments.bill_id) AS bill_status
     FROM payments WHERE id = $1`, [id])).rows[0];
const credits = async (id: string) => (await t.db.pool.query(
  `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1 AND kind = 'PAYMENT_CREDIT'`, [id])).rows[0].n as number;
const capture = (id: string, body: Record<string, unknown> = {}) => admin(t, 'POST', `/payments/${id}/capture`, body);
const cancel = (id: string) => admin(t, 'POST', `/payments/${id}/cancel`, {});

/** A two-stage bill of `amount` paid by card: the payment held, PROCESS. */
async function held(amount: string, captureSpelling: unknown = '0') {
  const billId = await billCreate({ amount, order_id: `o-${Math.random()}`, capture: captureSpelling });
  const before = await available();
  const r = await payRequest(t, billId, cardForm());
  expect(r.statusCode, r.body).toBe(200);
  expect(r.json().status).toBe('PROCESS');
  const paymentId = r.json().payment_id as string;
  expect(await paymentRow(paymentId)).toMatchObject({ status: 'PROCESS', authorized_amount: amount, capture_amount: null, bill_status: 'PROCESS' });
  // A hold is not available balance: nothing is credited while it is held.
  expect(await available()).toBe(before);
  expect(await credits(paymentId)).toBe(0);
  return { billId, paymentId, before };
}

describe('two-stage payments (capture: false)', () => {
  it('an old client\'s bill (capture omitted) is paid in one stage as before', async () => {
    const billId = await billCreate({ amount: '100.00' });
    const r = await payRequest(t, billId, cardForm());
    expect(r.json().status).toBe('SUCCESS');
    expect((await paymentRow(r.json().payment_id)).authorized_amount).toBeNull();
  });

  it('full capture: SUCCESS, the whole amount credited once, the SUCCESS postback, audited; a second capture is 409 and moves nothing', async () => {
    const h = await held('250.00', 'false');
    const r = await capture(h.paymentId);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, payment_id: h.paymentId, status: 'SUCCESS', amount: '250.00' });
    expect(await paymentRow(h.paymentId)).toMatchObject({ status: 'SUCCESS', amount_received: '250.00', bill_status: 'SUCCESS' });
    expect(Number(await available()) - Number(h.before)).toBeCloseTo(250, 2);
    const again = await capture(h.paymentId);
    expect(again.status).toBe(409);
    expect(await credits(h.paymentId)).toBe(1);
    expect(Number(await available()) - Number(h.before)).toBeCloseTo(250, 2);
    const audit = await t.db.pool.query(`SELECT action, after FROM audit_log WHERE object_id = $1`, [h.paymentId]);
    expect(audit.rows).toEqual([{ action: 'payment.capture', after: { merchant_id: m.merchantId, captured: '250.00' } }]);
    await deliverUntil(t, () => rx.received.some((x) => x.fields.TrsId === h.paymentId));
    expect(rx.received.find((x) => x.fields.TrsId === h.paymentId)!.fields).toMatchObject({ Status: 'SUCCESS', OutSum: '250.00' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('partial capture credits exactly the captured amount and releases the rest; more than is held is 422', async () => {
    const h = await held('1000.00');
    const over = await capture(h.paymentId, { amount: '1000.01' });
    expect(over.status).toBe(422);
    expect(Object.keys(over.body.errors)).toEqual(['amount']);
    expect((await capture(h.paymentId, { amount: '0' })).status).toBe(422);
    expect(await paymentRow(h.paymentId)).toMatchObject({ status: 'PROCESS', capture_amount: null });

    const r = await capture(h.paymentId, { amount: '600.00' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'SUCCESS', amount: '600.00' });
    // SUCCESS with what was captured (not UNDERPAID: the merchant took less, the payer paid all that was asked).
    expect(await paymentRow(h.paymentId)).toMatchObject({ status: 'SUCCESS', amount_received: '600.00', capture_amount: '600.00', account_amount: '600.00000000' });
    expect(Number(await available()) - Number(h.before)).toBeCloseTo(600, 2);
    // The provider captured 600: the other 400 went back to the payer.
    const op = await t.db.pool.query(`SELECT status, amount::text FROM sandbox_operations WHERE kind = 'payment' AND our_id = $1`, [h.paymentId]);
    expect(op.rows[0]).toEqual({ status: 'paid', amount: '600.00' });
    await deliverUntil(t, () => rx.received.some((x) => x.fields.TrsId === h.paymentId));
    expect(rx.received.find((x) => x.fields.TrsId === h.paymentId)!.fields).toMatchObject({ Status: 'SUCCESS', OutSum: '600.00', BalanceAmount: '600.00000000' });
    const s = (await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${h.paymentId}`, headers: m.auth })).json();
    expect(s).toMatchObject({ status: 'SUCCESS' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a capture sent twice at once moves the money once', async () => {
    const h = await held('300.00');
    const [a, b] = await Promise.all([capture(h.paymentId, { amount: '300.00' }), capture(h.paymentId, { amount: '300.00' })]);
    expect([a.status, b.status]).toContain(200);
    for (const x of [a, b]) expect([200, 409]).toContain(x.status);
    expect(await paymentRow(h.paymentId)).toMatchObject({ status: 'SUCCESS', amount_received: '300.00' });
    expect(await credits(h.paymentId)).toBe(1);
    expect(Number(await available()) - Number(h.before)).toBeCloseTo(300, 2);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('cancel releases the hold: FAIL, nothing credited, the FAIL postback; then neither capture nor cancel', async () => {
    const h = await held('400.00');
    const r = await cancel(h.paymentId);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'FAIL' });
    expect(await paymentRow(h.paymentId)).toMatchObject({ status: 'FAIL', amount_received: '0.00', failure_reason: 'canceled', bill_status: 'FAIL' });
    expect(await available()).toBe(h.before);
    expect((await capture(h.paymentId)).status).toBe(409);
    expect((await cancel(h.paymentId)).status).toBe(409);
    expect(await credits(h.paymentId)).toBe(0);
    await deliverUntil(t, () => rx.received.some((x) => x.fields.TrsId === h.paymentId));
    expect(rx.received.find((x) => x.fields.TrsId === h.paymentId)!.fields).toMatchObject({ Status: 'FAIL', OutSum: '0.00' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a hold that expires at the provider is applied as a cancellation (expired_on_capture)', async () => {
    const h = await held('150.00');
    // Eight days pass at the provider (it holds a card payment seven).
    await t.db.pool.query(`UPDATE sandbox_operations SET created_at = now() - interval '8 days' WHERE kind = 'payment' AND our_id = $1`, [h.paymentId]);
    const p = await t.app.services.payments.askProvider({ id: h.paymentId, connector: 'sandbox', ref: null, data: null });
    expect(p.result.status).toBe('FAIL');
    expect(await paymentRow(h.paymentId)).toMatchObject({ status: 'FAIL', failure_reason: 'expired_on_capture' });
    expect((await capture(h.paymentId)).status).toBe(409);
    expect(await available()).toBe(h.before);
  });

  it('a held payment asked about past RECONCILE_GIVE_UP_MS stays held and raises no attention item (it waits for the merchant)', async () => {
    const h = await held('70.00');
    await t.app.services.payments.processClaimed({ id: h.paymentId, connector: 'sandbox', ref: null, checkAttempts: 3, sentAt: new Date(Date.now() - 3 * 86400_000) }, 1);
    expect(await paymentRow(h.paymentId)).toMatchObject({ status: 'PROCESS', authorized_amount: '70.00' });
    const items = await t.db.pool.query(`SELECT count(*)::int AS n FROM attention_items WHERE object_id = $1`, [h.paymentId]);
    expect(items.rows[0].n).toBe(0);
    expect((await capture(h.paymentId)).body.status).toBe('SUCCESS');
  });

  it('what is held shows as `held` per currency in GET /admin/v1/merchants/{id}, never in merchant/balance (exactly the spec\'s answer, unchanged); a capture moves it out', async () => {
    const x = await createMerchant(t, { merchant: { paymentCardPercent: '0', paymentCardFixed: '0' } });
    const bal = async () => (await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: x.auth })).json();
    const view = async () => (await admin(t, 'GET', `/merchants/${x.merchantId}`)).body;
    expect((await view()).held).toEqual([]);
    const before = await bal();
    const a = await heldPayment(t, x, '300.00');
    await heldPayment(t, x, '45.10');
    expect((await view()).held).toEqual([{ currency: 'RUB', amount: '345.10' }]);
    expect(await bal()).toEqual(before);
    expect(Object.keys(before).sort()).toEqual(['balances', 'success']);
    expect((await capture(a, { amount: '100.00' })).status).toBe(200);
    expect((await view()).held).toEqual([{ currency: 'RUB', amount: '45.10' }]);
    const after = await bal();
    expect(after.balances.find((b: { currency: string }) => b.currency === 'RUB').balance_available).toBe('100.00000000');
  });

  it('a payment that holds nothing cannot be captured (409); an unknown payment is 404; SBP is not offered for a two-stage bill', async () => {
    const billId = await billCreate({ amount: '10.00' });
    const one = await payRequest(t, billId, cardForm());
    expect((await capture(one.json().payment_id)).status).toBe(409);
    expect((await capture('nope')).status).toBe(404);
    const two = await billCreate({ amount: '10.00', capture: 0 });
    const sbp = await payRequest(t, two, { method: 'SBP' });
    expect(sbp.statusCode).toBeGreaterThanOrEqual(400);
    expect(sbp.statusCode).toBeLessThan(500);
  });
});

describe('two-stage payments in the cabinet', () => {
  it('the owner sees what is held and captures part of it; a support member sees the amount, no buttons, and a forged capture is refused', async () => {
    const cm = await cabinetMerchant(t, { merchant: { paymentCardPercent: '0', paymentCardFixed: '0' } });
    const b = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: cm.auth, payload: { shop_id: cm.shopId, amount: '500.00', capture: 'false' } });
    const paymentId = (await payRequest(t, b.json().bill_id, cardForm())).json().payment_id as string;
    const owner = await signedIn(t, cm);
    const page = await owner.get(`/cabinet/payments/${paymentId}`);
    expect(page.body).toContain('data-testid="held"');
    expect(page.body).toContain(`/cabinet/payments/${paymentId}/capture`);

    const support = await teamMember(t, cm, 'support');
    const seen = await support.client.get(`/cabinet/payments/${paymentId}`);
    expect(seen.body).toContain('data-testid="held"');
    expect(seen.body).not.toContain(`/cabinet/payments/${paymentId}/capture"`);
    const forged = await support.client.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/capture`, { amount: '100' });
    expect(forged.statusCode).toBe(403);

    const over = await owner.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/capture`, { amount: '500.01' });
    expect(over.statusCode).toBe(422);
    expect(over.body).toContain('id="err-amount"');
    const ok = await owner.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/capture`, { amount: '120' });
    expect(ok.statusCode).toBe(303);
    expect(await paymentRow(paymentId)).toMatchObject({ status: 'SUCCESS', amount_received: '120.00' });
    expect((await balance(t, cm.merchantId)).available).toBe('120.00');
    const after = await owner.get(`/cabinet/payments/${paymentId}`);
    expect(after.body).not.toContain('data-testid="held"');
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });
});

describe('who may capture or cancel a hold', () => {
  it('only an admin operator: support, finance and auditor tokens get 403 and the payment stays held; the admin\'s capture is audited with the person', async () => {
    const { paymentId } = await held('70.00');
    const tokenOf = async (role: string) => {
      const c = await admin(t, 'POST', '/operators', { email: `${role}-${Math.random()}@ops.test`, role });
      expect(c.status, JSON.stringify(c.body)).toBe(201);
      const k = await admin(t, 'POST', `/operators/${c.body.id}/tokens`, { name: 'ci' });
      return { id: c.body.id as string, token: k.body.api_token as string };
    };
    for (const role of ['support', 'finance', 'auditor']) {
      const { token } = await tokenOf(role);
      for (const path of ['capture', 'cancel']) {
        const r = await t.app.inject({ method: 'POST', url: `/admin/v1/payments/${paymentId}/${path}`, headers: { authorization: `Bearer ${token}` }, payload: {} });
        expect(r.statusCode, `${role} ${path}`).toBe(403);
      }
    }
    expect(await paymentRow(paymentId)).toMatchObject({ status: 'PROCESS', capture_amount: null });
    const a = await tokenOf('admin');
    const ok = await t.app.inject({ method: 'POST', url: `/admin/v1/payments/${paymentId}/capture`, headers: { authorization: `Bearer ${a.token}` }, payload: { amount: '70.00' } });
    expect(ok.statusCode, ok.body).toBe(200);
    const audit = (await t.db.pool.query(`SELECT actor, actor_name FROM audit_log WHERE action = 'payment.capture' AND object_id = $1`, [paymentId])).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0].actor).toBe(`operator:${a.id}`);
    expect(audit[0].actor_name).toMatch(/^admin-.*@ops\.test$/);
  });
});
