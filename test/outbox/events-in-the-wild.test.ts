import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, DECLINED_CARD, payRequest } from '../factories/payment.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { deliverUntil } from './deliver-until.js';
import { startReceiver, type Receiver } from './receiver.js';
import { REFUND_FAIL_CARD } from '../factories/payment.js';

let t: TestApp;
let rx: Receiver;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  rx = await startReceiver();
  m = await createMerchant(t, { merchant: { grantRefunds: true }, shop: { resultUrl: `${rx.url}/result` } });
});
afterAll(async () => { await rx.close(); await t.close(); });
beforeEach(() => { rx.received.length = 0; });

/** Delivers due events to the receiver, as the outbox worker does, until a postback of each of these ids arrived. */
const deliver = (ids: string[], before?: () => Promise<unknown>): Promise<void> =>
  deliverUntil(t, () => ids.every((id) => rx.received.some((x) => x.fields.TrsId === id || x.fields.Id === id)), { before });

async function bill(payload: Record<string, unknown>): Promise<string> {
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '250.00', shop_id: m.shopId, ...payload } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
}

describe('payment postback: optional fields', () => {
  it('a card payment posts AccountType, the masked card, BalanceAmount/Currency and the payer fields; the signature is unchanged', async () => {
    const id = await bill({ order_id: 'ord-9', request_fields: ['email', 'phone', 'name', 'comment'] });
    const r = await payRequest(t, id, { ...cardForm(), payer_email: 'a@example.test', payer_phone: '89001234567', payer_name: 'Anna', payer_comment: 'gift' });
    expect(r.statusCode, r.body).toBe(200);
    await deliver([r.json().payment_id]);
    const got = rx.received.find((x) => x.fields.TrsId === r.json().payment_id)!;
    expect(got.fields).toMatchObject({
      InvId: 'ord-9', OutSum: '250.00', Status: 'SUCCESS', AccountType: 'BANK_CARD', AccountNumber: '424242******4242',
      BalanceAmount: '250.00000000', BalanceCurrency: 'RUB', PayerEmail: 'a@example.test', PayerPhone: '+79001234567',
      PayerName: 'Anna', PayerComment: 'gift',
    });
    expect(got.fields).not.toHaveProperty('ErrorCode');
    expect(got.fields.SignatureValue).toBe(md5Upper(`250.00:ord-9:${m.token}`));
    // Spec fields first, then the optional ones, then the signature.
    expect(Object.keys(got.fields).slice(0, 8)).toEqual(['InvId', 'OutSum', 'Commission', 'Currency', 'CurrencyIn', 'TrsId', 'Status', 'custom']);
    expect(Object.keys(got.fields).at(-1)).toBe('SignatureValue');
  });

  it('a FAIL posts ErrorCode and ErrorMessage and a zero BalanceAmount; an SBP payment posts AccountType SBP and the payer phone as AccountNumber', async () => {
    const failed = await payRequest(t, await bill({}), cardForm(DECLINED_CARD));
    const sbp = await payRequest(t, await bill({ request_fields: ['phone'] }), { method: 'SBP', amount: '250.00', payer_phone: '+7 900 000-11-22' });
    await deliver([failed.json().payment_id, sbp.json().payment_id]);
    const f = rx.received.find((x) => x.fields.TrsId === failed.json().payment_id)!;
    expect(f.fields).toMatchObject({ Status: 'FAIL', ErrorCode: 'card_declined', ErrorMessage: 'The card was declined by the issuer.', BalanceAmount: '0.00000000', AccountType: 'BANK_CARD' });
    expect(f.fields).not.toHaveProperty('PayerEmail');
    const s = rx.received.find((x) => x.fields.TrsId === sbp.json().payment_id)!;
    expect(s.fields).toMatchObject({ Status: 'SUCCESS', AccountType: 'SBP', AccountNumber: '+79000001122', PayerPhone: '+79000001122' });
  });
});

describe('refund postback', () => {
  it('a refund reaching SUCCESS or FAIL posts Id, PaymentId, BillId, InvId, Amount, Currency, Status to the Result URL, signed MD5(Amount:Currency:BillId:PaymentId:Id:token)', async () => {
    const okBill = await bill({ order_id: 'ord-r1' });
    const ok = (await payRequest(t, okBill)).json();
    const failBill = await bill({});
    const bad = (await payRequest(t, failBill, cardForm(REFUND_FAIL_CARD))).json();
    const r1 = await t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: m.auth, payload: { payment_id: ok.payment_id, amount: '50.5' } });
    const r2 = await t.app.inject({ method: 'POST', url: '/api/v1/refund/full/create', headers: m.auth, payload: { payment_id: bad.payment_id } });
    expect(r1.statusCode, r1.body).toBe(200);
    // NEW: nothing is posted for a refund that is not final.
    const pending = await t.db.pool.query(`SELECT count(*)::int AS n FROM outbox_events WHERE kind = 'REFUND_POSTBACK'`);
    expect(pending.rows[0].n).toBe(0);
    // Until both postbacks arrived: under load a sandbox call can time out and leave a refund for the next pass.
    await deliver([r1.json().id, r2.json().id], async () => {
      await t.db.pool.query(`UPDATE refunds SET process_after = now(), next_check_at = NULL WHERE id = ANY($1) AND status IN ('NEW', 'PROCESS')`, [[r1.json().id, r2.json().id]]);
      await t.app.services.refunds.processDue();
    });
    const got = rx.received.filter((x) => x.path === '/result' && x.fields.PaymentId);
    const a = got.find((x) => x.fields.Id === r1.json().id)!;
    expect(a.fields).toEqual({
      Id: r1.json().id, PaymentId: ok.payment_id, BillId: okBill, InvId: 'ord-r1', Amount: '50.50', Currency: 'RUB', Status: 'SUCCESS',
      SignatureValue: md5Upper(`50.50:RUB:${okBill}:${ok.payment_id}:${r1.json().id}:${m.token}`),
    });
    const b = got.find((x) => x.fields.Id === r2.json().id)!;
    expect(b.fields).toMatchObject({ Status: 'FAIL', Amount: '250.00', BillId: failBill, InvId: '' });
    expect(b.fields.SignatureValue).toBe(md5Upper(`250.00:RUB:${failBill}:${bad.payment_id}:${r2.json().id}:${m.token}`));
    // Written in the refund's final transaction: exactly one per refund.
    const n = await t.db.pool.query(`SELECT count(*)::int AS n FROM outbox_events WHERE kind = 'REFUND_POSTBACK' AND aggregate_id = ANY($1)`, [[r1.json().id, r2.json().id]]);
    expect(n.rows[0].n).toBe(2);
    // The operator's event list filters by the new kind.
    const list = await t.app.inject({ method: 'GET', url: '/admin/v1/events?kind=REFUND_POSTBACK', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(list.statusCode, list.body).toBe(200);
    expect(JSON.stringify(list.json())).toContain(r1.json().id);
  });
});
