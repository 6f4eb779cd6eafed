import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { paymentSignature, type PaymentPostbackFields } from '../../src/outbox/events.js';

/**
 * Saved cards through the service and the sandbox connector
 * (docs/adr/0074-saved-cards-and-recurring-charges.md): bill/create's save_payment_method, the
 * payer's consent on the page, the saved method written once when the payment succeeds, and
 * what the payment object and the postback say of it.
 */
let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  m = await createMerchant(t, { merchant: { paymentCardPercent: '0', paymentCardFixed: '0' } });
});
afterAll(async () => { await t.close(); });

const billCreate = (payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, amount: '100.00', ...payload } });
const newBill = async (payload: Record<string, unknown> = {}) => {
  const r = await billCreate({ order_id: `o-${Math.random()}`, ...payload });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
};
const savedOf = async (paymentId: string) => (await t.db.pool.query(
  `SELECT id, merchant_id, shop_id, mode, connector, provider_id_enc, card_mask, card_expiry, status::text FROM saved_payment_methods WHERE payment_id = $1`, [paymentId])).rows;
const postbackFields = async (paymentId: string) => (await t.db.pool.query(
  `SELECT payload->'fields' AS f FROM outbox_events WHERE kind = 'PAYMENT_POSTBACK' AND aggregate_id = $1`, [paymentId])).rows[0]?.f as Record<string, string>;
const paymentStatus = async (id: string) => {
  const r = await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${id}`, headers: m.auth });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};

describe('bill/create save_payment_method', () => {
  it('is refused 422 on the field with capture=false, and nothing is stored', async () => {
    const before = (await t.db.pool.query(`SELECT count(*)::int AS n FROM bills`)).rows[0].n;
    const r = await billCreate({ save_payment_method: true, capture: false });
    expect(r.statusCode).toBe(422);
    expect(Object.keys(r.json().errors)).toEqual(['save_payment_method']);
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM bills`)).rows[0].n).toBe(before);
  });

  it('is refused 422 on the field when the only method is SBP (saving is for cards)', async () => {
    const r = await billCreate({ save_payment_method: '1', payment_method: 'SBP' });
    expect(r.statusCode).toBe(422);
    expect(Object.keys(r.json().errors)).toEqual(['save_payment_method']);
  });

  it('the page shows the consent box unchecked only on a bill that asks for it', async () => {
    const withSave = await t.app.inject({ method: 'GET', url: `/pay/${await newBill({ save_payment_method: true })}` });
    expect(withSave.body).toContain('data-testid="save-card"');
    expect(withSave.body).toMatch(/Save this card for future payments to /);
    expect(withSave.body).not.toMatch(/name="save_payment_method"[^>]*checked/);
    const without = await t.app.inject({ method: 'GET', url: `/pay/${await newBill()}` });
    expect(without.body).not.toContain('save_payment_method');
  });
});

describe('saving a card with the payer\'s consent', () => {
  it('consent unchecked: the payment succeeds and nothing is saved (no payment_method_id, no PaymentMethodId)', async () => {
    const billId = await newBill({ save_payment_method: true });
    const r = await payRequest(t, billId, cardForm());
    expect(r.json().status).toBe('SUCCESS');
    const id = r.json().payment_id as string;
    expect(await savedOf(id)).toEqual([]);
    expect((await paymentStatus(id)).payment_method_id).toBeNull();
    expect(await postbackFields(id)).not.toHaveProperty('PaymentMethodId');
  });

  it('consent on a bill that did not offer saving saves nothing', async () => {
    const r = await payRequest(t, await newBill(), { ...cardForm(), save_payment_method: '1' });
    expect(r.json().status).toBe('SUCCESS');
    expect(await savedOf(r.json().payment_id)).toEqual([]);
  });

  it('consent: one ACTIVE method (mask, expiry, encrypted provider id), on the payment object and in the postback outside the signature; a repeated answer saves nothing more', async () => {
    const billId = await newBill({ save_payment_method: true });
    const r = await payRequest(t, billId, { ...cardForm('4242424242424242'), save_payment_method: '1' });
    expect(r.json().status).toBe('SUCCESS');
    const id = r.json().payment_id as string;
    const rows = await savedOf(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ merchant_id: m.merchantId, shop_id: m.shopId, mode: 'live', connector: 'sandbox', card_mask: '424242******4242', card_expiry: '12/39', status: 'ACTIVE' });
    expect(rows[0].provider_id_enc).not.toMatch(/^sbxpm_/);
    expect((await paymentStatus(id)).payment_method_id).toBe(rows[0].id);
    const f = await postbackFields(id);
    expect(f.PaymentMethodId).toBe(rows[0].id);
    // The signature is the spec's, over the spec's fields: the extra field does not enter it.
    const { PaymentMethodId: _x, ...rest } = f;
    expect(paymentSignature(f as unknown as PaymentPostbackFields, 'tok')).toBe(paymentSignature(rest as unknown as PaymentPostbackFields, 'tok'));
    // The provider says it again (a repeated notification): the payment is final, nothing more is saved.
    const again = await t.app.services.payments.applyOutcome(id, {
      status: 'paid', amountReceived: new Decimal('100.00'), ref: 'sbx_again', saved: { providerId: 'sbxpm_other', mask: '424242******4242', expiry: null },
    }, { via: 'notification' });
    expect(again.applied).toBe(false);
    expect(await savedOf(id)).toHaveLength(1);
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM saved_payment_methods WHERE merchant_id = $1`, [m.merchantId])).rows[0].n).toBe(1);
  });
});
