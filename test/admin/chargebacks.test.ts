import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { deliverUntil } from '../outbox/deliver-until.js';
import { buildCall } from '../../src/admin/cli.js';
import { startReceiver, type Receiver } from '../outbox/receiver.js';
import { balance } from '../refund/helpers.js';
import { admin } from './helpers.js';

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

const chargeback = (paymentId: string, body: Record<string, unknown>) => admin(t, 'POST', `/payments/${paymentId}/chargebacks`, body);
const count = async (paymentId: string) => Number((await t.db.pool.query('SELECT count(*) AS n FROM chargebacks WHERE payment_id = $1', [paymentId])).rows[0].n);

describe('POST /admin/v1/payments/{id}/chargebacks', () => {
  it('201: stored, the amount leaves available through a CHARGEBACK_DEBIT entry, the books balance, payment/status chargeback=1 shows it', async () => {
    const p = await createPaidPayment(t, m, { amount: '300.00' });
    const before = await balance(t, m.merchantId);
    const r = await chargeback(p.paymentId, { amount: '120.50', reason: 'fraud: card not present' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ success: true, merchant_id: m.merchantId, payment_id: p.paymentId, amount: '120.50', currency: 'RUB', reason: 'fraud: card not present' });
    const after = await balance(t, m.merchantId);
    expect(Number(before.available) - Number(after.available)).toBeCloseTo(120.5, 2);
    const entry = (await t.db.pool.query(
      `SELECT t.kind::text, e.debit_account, e.credit_account, e.amount::text
         FROM ledger_transfers t JOIN ledger_entries e ON e.transfer_id = t.id WHERE t.ref_id = $1`, [r.body.id])).rows;
    expect(entry).toEqual([{ kind: 'CHARGEBACK_DEBIT', debit_account: `RUB:merchant:${m.merchantId}:available`, credit_account: 'RUB:chargebacks', amount: '120.50000000' }]);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
    const s = (await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${p.paymentId}&chargeback=1`, headers: m.auth })).json();
    expect(s.chargeback).toEqual([{ id: r.body.id, payment_id: p.paymentId, amount: 120.5, currency: 'RUB', reason: 'fraud: card not present', created_at: expect.any(String) }]);
  });

  it('is bounded by what the payment received less refunds and chargebacks; refunds cannot take back what a chargeback took', async () => {
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const ref = await t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: m.auth, payload: { payment_id: p.paymentId, amount: '30' } });
    expect(ref.statusCode, ref.body).toBe(200);
    const over = await chargeback(p.paymentId, { amount: '70.01', reason: 'x' });
    expect(over.status).toBe(422);
    expect(Object.keys(over.body.errors)).toEqual(['amount']);
    expect((await chargeback(p.paymentId, { amount: '70.00', reason: 'x' })).status).toBe(201);
    expect((await chargeback(p.paymentId, { amount: '0.01', reason: 'x' })).status).toBe(422);
    const refund = await t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: m.auth, payload: { payment_id: p.paymentId, amount: '0.01' } });
    expect(refund.statusCode).toBe(422);
    expect(await count(p.paymentId)).toBe(1);
  });

  it('refuses 422 api:error.balance_not_enough when available cannot cover it, and nothing is stored or posted', async () => {
    const p = await createPaidPayment(t, m, { amount: '50.00' });
    // The merchant paid the money out: available is below the chargeback.
    const avail = (await balance(t, m.merchantId)).available;
    await admin(t, 'POST', `/merchants/${m.merchantId}/balance-adjustments`, { currency: 'RUB', amount: `-${avail}`, reason: 'paid out' });
    const before = await balance(t, m.merchantId);
    const r = await chargeback(p.paymentId, { amount: '50.00', reason: 'dispute' });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('api:error.balance_not_enough');
    expect(await count(p.paymentId)).toBe(0);
    expect(await balance(t, m.merchantId)).toEqual(before);
    const ev = await t.db.pool.query(`SELECT count(*)::int AS n FROM outbox_events e JOIN chargebacks c ON c.id = e.aggregate_id WHERE c.payment_id = $1`, [p.paymentId]);
    expect(ev.rows[0].n).toBe(0);
    expect((await t.db.pool.query('SELECT chargeback_amount::text AS c FROM payments WHERE id = $1', [p.paymentId])).rows[0].c).toBe('0.00');
  });

  it('bad input is 422 on the field, an unknown payment 404, a payment that received nothing 422', async () => {
    const p = await createPaidPayment(t, m);
    expect(Object.keys((await chargeback(p.paymentId, { reason: 'x' })).body.errors)).toEqual(['amount']);
    expect(Object.keys((await chargeback(p.paymentId, { amount: '1' })).body.errors)).toEqual(['reason']);
    expect((await chargeback(p.paymentId, { amount: '-1', reason: 'x' })).status).toBe(422);
    expect((await chargeback(p.paymentId, { amount: '1.001', reason: 'x' })).status).toBe(422);
    expect((await chargeback('nope', { amount: '1', reason: 'x' })).status).toBe(404);
    const failed = await createPaidPayment(t, m, { status: 'FAIL' });
    expect((await chargeback(failed.paymentId, { amount: '1', reason: 'x' })).status).toBe(422);
  });

  it('posts a chargeback postback to the Result URL signed MD5(BillId:PaymentId:Id:token)', async () => {
    const p = await createPaidPayment(t, m);
    const r = await chargeback(p.paymentId, { amount: '10', reason: 'dispute 4837' });
    await deliverUntil(t, () => rx.received.some((x) => x.fields.Id === r.body.id));
    const got = rx.received.find((x) => x.fields.Id === r.body.id)!;
    expect(got.fields).toEqual({
      Id: r.body.id, PaymentId: p.paymentId, BillId: p.billId, InvId: '', Amount: '10.00', Currency: 'RUB', Reason: 'dispute 4837',
      Status: 'CHARGEBACK', SignatureValue: md5Upper(`${p.billId}:${p.paymentId}:${r.body.id}:${m.token}`),
    });
  });

  it('the CLI verb chargebacks:create mirrors it', async () => {
    const p = await createPaidPayment(t, m);
    const call = buildCall(['chargebacks:create', p.paymentId, '--amount', '5.00', '--reason', 'cli']);
    expect(call).toEqual({ method: 'POST', path: `/payments/${p.paymentId}/chargebacks`, body: { amount: '5.00', reason: 'cli' } });
    if (call === 'help') throw new Error('help');
    // The CLI runs the very route in-process (src/entry/admin-cli.ts runs src/admin/cli.ts's verb): the same call here.
    const r = await admin(t, call.method, call.path, call.body);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ success: true, amount: '5.00', reason: 'cli' });
    expect(buildCall(['chargebacks:list', p.paymentId])).toEqual({ method: 'GET', path: `/payments/${p.paymentId}/chargebacks` });
    expect((await admin(t, 'GET', `/payments/${p.paymentId}/chargebacks`)).body.data).toHaveLength(1);
    expect(await count(p.paymentId)).toBe(1);
  });
});
