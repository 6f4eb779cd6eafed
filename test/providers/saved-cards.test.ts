import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, payRequest, savedCardOf } from '../factories/payment.js';
import { paymentSignature, type PaymentPostbackFields } from '../../src/outbox/events.js';
import { balance } from '../refund/helpers.js';
import { admin } from '../admin/helpers.js';
import { cabinetMerchant, signedIn, teamMember } from '../cabinet/helpers.js';

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

const savedCard = (card = '4242424242424242', auth: Record<string, string> = m.auth) => savedCardOf(t, m, card, auth);
const charge = (payload: Record<string, unknown>, headers: Record<string, string> = m.auth) =>
  t.app.inject({ method: 'POST', url: '/api/v1/payment/charge', headers, payload: { amount: '250.00', ...payload } });
const available = async () => new Decimal((await balance(t, m.merchantId)).available);
const credits = async (id: string) => (await t.db.pool.query(
  `SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1 AND kind = 'PAYMENT_CREDIT'`, [id])).rows[0].n as number;

describe('the provider\'s word after the finish', () => {
  it('a card saved by a payment already SUCCESS (the saving notification overtaken) is saved once then; never without consent', async () => {
    const consented = await payRequest(t, await newBill({ save_payment_method: true }), { ...cardForm('4242424242424242'), save_payment_method: '1' });
    const id = consented.json().payment_id as string;
    // As if the finishing answer had not said it saved.
    await t.db.pool.query(`DELETE FROM saved_payment_methods WHERE payment_id = $1`, [id]);
    await t.db.pool.query(`UPDATE payments SET payment_method_id = NULL WHERE id = $1`, [id]);
    const late = { status: 'pending' as const, ref: 'sbx_late', saved: { providerId: 'tok-late', mask: '424242******4242', expiry: '12/30' } };
    for (let i = 0; i < 2; i++) expect((await t.app.services.payments.applyOutcome(id, late, { via: 'notification' })).applied).toBe(false);
    const rows = await savedOf(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ card_expiry: '12/30', status: 'ACTIVE', mode: 'live' });
    expect((await paymentStatus(id)).payment_method_id).toBe(rows[0].id);
    const plain = await payRequest(t, await newBill({ save_payment_method: true }), cardForm());
    await t.app.services.payments.applyOutcome(plain.json().payment_id, late, { via: 'notification' });
    expect(await savedOf(plain.json().payment_id)).toEqual([]);
  });
});

describe('POST /api/v1/payment/charge', () => {
  it('charges a saved card: SUCCESS, the payment object with payment_method_id, the balance credited exactly once', async () => {
    const method = await savedCard();
    const before = await available();
    const r = await charge({ payment_method_id: method, order_id: 'sub-1', description: 'November' });
    expect(r.statusCode, r.body).toBe(200);
    const p = r.json();
    expect(p).toMatchObject({ success: true, status: 'SUCCESS', amount: 250, amount_received: 250, payment_method_id: method, from_card: '424242******4242' });
    expect((await available()).sub(before).toFixed(2)).toBe('250.00');
    expect(await credits(p.id)).toBe(1);
    const bill = (await t.db.pool.query(`SELECT order_id, description, payment_method::text, status::text FROM bills WHERE id = $1`, [p.bill_id])).rows[0];
    expect(bill).toEqual({ order_id: 'sub-1', description: 'November', payment_method: 'BANK_CARD', status: 'SUCCESS' });
    // A charge saves nothing new.
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM saved_payment_methods WHERE payment_id = $1`, [p.id])).rows[0].n).toBe(0);
  });

  it('the same Idempotency-Key twice charges once (the second answer is the first payment), even when the key\'s stored answer is gone', async () => {
    const method = await savedCard();
    const before = await available();
    const headers = { ...m.auth, 'idempotency-key': `charge-${Math.random()}` };
    const a = await charge({ payment_method_id: method }, headers);
    const b = await charge({ payment_method_id: method }, headers);
    expect(a.statusCode, a.body).toBe(200);
    expect(b.statusCode, b.body).toBe(200);
    expect(b.json().id).toBe(a.json().id);
    // The key's row lost (its lease taken over after a crash): the bill keeps the key, no second charge.
    await t.db.pool.query(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`, [m.merchantId, headers['idempotency-key']]);
    const c = await charge({ payment_method_id: method }, headers);
    expect(c.json().id).toBe(a.json().id);
    expect((await available()).sub(before).toFixed(2)).toBe('250.00');
    expect(await credits(a.json().id)).toBe(1);
  });

  it('a lost answer leaves the charge PROCESS; reconciliation reads the provider and credits once', async () => {
    const method = await savedCard('4000000000000119');
    const before = await available();
    const r = await charge({ payment_method_id: method });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().status).toBe('PROCESS');
    const id = r.json().id as string;
    expect(await credits(id)).toBe(0);
    const first = await t.app.services.payments.askProvider({ id, connector: 'sandbox', ref: null, data: null });
    expect(first.result).toMatchObject({ applied: true, status: 'SUCCESS' });
    const again = await t.app.services.payments.askProvider({ id, connector: 'sandbox', ref: null, data: null });
    expect(again.result.applied).toBe(false);
    expect(await credits(id)).toBe(1);
    expect((await available()).sub(before).toFixed(2)).toBe('250.00');
  });

  it('refused 422 api:error.payment_method_not_found: unknown, revoked, another merchant\'s, the other mode\'s; nothing is created', async () => {
    const bills = async () => (await t.db.pool.query(`SELECT count(*)::int AS n FROM bills`)).rows[0].n as number;
    const refused = async (payload: Record<string, unknown>, headers?: Record<string, string>) => {
      const before = await bills();
      const r = await charge(payload, headers);
      expect(r.statusCode, r.body).toBe(422);
      expect(r.json().message).toBe('api:error.payment_method_not_found');
      expect(await bills()).toBe(before);
    };
    await refused({ payment_method_id: 'nope' });
    const other = await createMerchant(t, {});
    const othersMethod = await (async () => {
      const r0 = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: other.auth, payload: { shop_id: other.shopId, amount: '10.00', save_payment_method: true } });
      const r = await payRequest(t, r0.json().bill_id, { ...cardForm(), save_payment_method: '1' });
      return (await t.db.pool.query(`SELECT id FROM saved_payment_methods WHERE payment_id = $1`, [r.json().payment_id])).rows[0].id as string;
    })();
    await refused({ payment_method_id: othersMethod });
    // Test mode: a card saved through the test token is the twin's, never the live merchant's, and the other way.
    const testAuth = { authorization: `Bearer ${(await t.app.services.merchants.refreshTestToken(m.merchantId)).apiToken}` };
    const testMethod = await savedCard('4242424242424242', testAuth);
    expect((await t.db.pool.query(`SELECT mode FROM saved_payment_methods WHERE id = $1`, [testMethod])).rows[0].mode).toBe('test');
    await refused({ payment_method_id: testMethod });
    const liveMethod = await savedCard();
    await refused({ payment_method_id: liveMethod }, testAuth);
    const t1 = await charge({ payment_method_id: testMethod, amount: '5.00' }, testAuth);
    expect(t1.json().status).toBe('SUCCESS');
    // Revoked (twice is fine), then refused; the list no longer shows it.
    const rv = () => t.app.inject({ method: 'POST', url: '/api/v1/payment/methods/revoke', headers: m.auth, payload: { payment_method_id: liveMethod } });
    expect((await rv()).json()).toEqual({ id: liveMethod, status: 'REVOKED', success: true });
    expect((await rv()).statusCode).toBe(200);
    // Audited once (the second revoke changed nothing).
    const audit = await t.db.pool.query(`SELECT action, actor, after FROM audit_log WHERE object_id = $1`, [liveMethod]);
    expect(audit.rows).toEqual([{ action: 'payment_method.revoke', actor: `merchant-api:${m.merchantId}`, after: { merchant_id: m.merchantId, status: 'REVOKED' } }]);
    await refused({ payment_method_id: liveMethod });
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/payment/methods', headers: m.auth });
    expect(list.json().data.map((x: { id: string }) => x.id)).not.toContain(liveMethod);
    const revokeOthers = await t.app.inject({ method: 'POST', url: '/api/v1/payment/methods/revoke', headers: m.auth, payload: { payment_method_id: othersMethod } });
    expect(revokeOthers.statusCode).toBe(422);
  });

  it('a restricted key cannot charge nor revoke (403 insufficient_scope); payments:read lists', async () => {
    const method = await savedCard();
    const k = await admin(t, 'POST', `/merchants/${m.merchantId}/keys`, { name: 'all', scopes: ['payments:read', 'bills:write', 'refunds:write'] });
    expect(k.status, JSON.stringify(k.body)).toBe(201);
    const auth = { authorization: `Bearer ${k.body.api_token}` };
    const r = await charge({ payment_method_id: method }, auth);
    expect(r.statusCode).toBe(403);
    expect(r.json().message).toBe('api:error.insufficient_scope');
    const rv = await t.app.inject({ method: 'POST', url: '/api/v1/payment/methods/revoke', headers: auth, payload: { payment_method_id: method } });
    expect(rv.statusCode).toBe(403);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/payment/methods', headers: auth });
    expect(list.statusCode).toBe(200);
    const mine = list.json().data.find((x: { id: string }) => x.id === method);
    expect(mine).toMatchObject({ id: method, card_mask: '424242******4242', card_expiry: '12/39', connector: 'sandbox' });
    expect(Object.keys(mine).sort()).toEqual(['card_expiry', 'card_mask', 'connector', 'created_at', 'id']);
  });
});

describe('the cabinet\'s saved cards', () => {
  it('lists the ACTIVE cards with a revoke button for the owner; a revoked card cannot be charged; other roles see no button and a forged revoke is 403', async () => {
    const cm = await cabinetMerchant(t, {});
    const b = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: cm.auth, payload: { shop_id: cm.shopId, amount: '10.00', save_payment_method: true } });
    const paid = await payRequest(t, b.json().bill_id, { ...cardForm('4242424242424242'), save_payment_method: '1' });
    const method = (await t.db.pool.query(`SELECT id FROM saved_payment_methods WHERE payment_id = $1`, [paid.json().payment_id])).rows[0].id as string;
    const owner = await signedIn(t, cm);
    const page = await owner.get('/cabinet/cards');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`data-testid="card-${method}"`);
    expect(page.body).toContain('424242******4242');
    expect(page.body).toContain(`data-testid="revoke-${method}"`);

    const support = await teamMember(t, cm, 'support');
    const seen = await support.client.get('/cabinet/cards');
    expect(seen.body).toContain(`data-testid="card-${method}"`);
    expect(seen.body).not.toContain(`data-testid="revoke-${method}"`);
    const forged = await support.client.submit('/cabinet/cards', `/cabinet/cards/${method}/revoke`, {});
    expect(forged.statusCode).toBe(403);
    expect((await t.db.pool.query(`SELECT status::text FROM saved_payment_methods WHERE id = $1`, [method])).rows[0].status).toBe('ACTIVE');

    const done = await owner.submit('/cabinet/cards', `/cabinet/cards/${method}/revoke`, {});
    expect(done.statusCode).toBe(303);
    expect((await t.db.pool.query(`SELECT action, actor FROM audit_log WHERE object_id = $1`, [method])).rows).toEqual([{ action: 'payment_method.revoke', actor: `merchant:${cm.merchantId}` }]);
    expect((await owner.get('/cabinet/cards')).body).not.toContain(`data-testid="card-${method}"`);
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/payment/charge', headers: cm.auth, payload: { payment_method_id: method, amount: '5.00' } });
    expect(r.statusCode).toBe(422);
    expect(r.json().message).toBe('api:error.payment_method_not_found');
  });
});
