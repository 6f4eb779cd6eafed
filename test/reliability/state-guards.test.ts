import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import { ConnectorRegistry } from '../../src/domain/providers/registry.js';
import type { CreatePayment, PaymentOutcome } from '../../src/domain/providers/connector.js';
import { PaymentService } from '../../src/domain/payment/payment.service.js';
import { IllegalPaymentTransitionError } from '../../src/domain/payment/payment.states.js';
import { transitionPayout } from '../../src/domain/payout/payout.repository.js';
import { IllegalPayoutTransition } from '../../src/domain/payout/payout.states.js';
import { finishRefund } from '../../src/domain/refund/refund.repository.js';
import { IllegalRefundTransitionError } from '../../src/domain/refund/refund.states.js';
import { ConflictError } from '../../src/errors.js';
import { OutboxDeliverer } from '../../src/outbox/deliverer.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { createBill } from '../factories/payment.js';
import { admin } from '../admin/helpers.js';
import { card, fund, payoutMerchant, regular } from '../payout/helpers.js';

/**
 * Every status change is a conditional UPDATE whose from-states come from the entity's
 * transition table, its row count checked: these tests move rows behind the service's back (as
 * a concurrent process would) and call the statements, so only the SQL guard can refuse.
 */
let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await payoutMerchant(t, { grantRefunds: true, moderationThreshold: '1000' });
  await fund(t, m.merchantId, '10000');
});
afterAll(async () => { await t.close(); });

const one = async (sql: string, args: unknown[]) => (await t.db.pool.query(sql, args)).rows[0];

describe('payouts', () => {
  it('a payout read as PROCESS but already SUCCESS is not finished again: 409 naming SUCCESS, the row unchanged', async () => {
    const id = (await regular(t, m, card('100'))).json().data[0].id as string;
    await t.db.pool.query(`UPDATE payouts SET status = 'SUCCESS' WHERE id = $1`, [id]);
    const err = await withPgTx(t.db.pool, (c) => transitionPayout(c, id, 'PROCESS', 'FAIL', { failureReason: 'late' })).catch((e) => e);
    expect(err).toBeInstanceOf(IllegalPayoutTransition);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.message).toBe('Payout is SUCCESS; it cannot become FAIL.');
    expect(await one(`SELECT status::text, failure_reason FROM payouts WHERE id = $1`, [id])).toEqual({ status: 'SUCCESS', failure_reason: null });
  });

  it('approve of a payout that is not MODERATING is a 409 with its status, through the operator API', async () => {
    const id = (await regular(t, m, card('2000'))).json().data[0].id as string;
    expect((await admin(t, 'POST', `/payouts/${id}/approve`)).status).toBe(200);
    const again = await admin(t, 'POST', `/payouts/${id}/approve`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, message: 'Payout is PROCESS; it cannot become PROCESS.' });
    const decline = await admin(t, 'POST', `/payouts/${id}/decline`);
    expect(decline.status).toBe(409);
    expect(await one(`SELECT status::text FROM payouts WHERE id = $1`, [id])).toEqual({ status: 'PROCESS' });
  });

  it('the UPDATE itself refuses MODERATING -> SUCCESS (not in the table)', async () => {
    const id = (await regular(t, m, card('3000'))).json().data[0].id as string;
    const err = await withPgTx(t.db.pool, (c) => transitionPayout(c, id, 'MODERATING', 'SUCCESS')).catch((e) => e);
    expect(err).toBeInstanceOf(IllegalPayoutTransition);
    expect(await one(`SELECT status::text FROM payouts WHERE id = $1`, [id])).toEqual({ status: 'MODERATING' });
  });
});

describe('refunds', () => {
  it('finishing a refund that is still NEW (never claimed) is refused by the statement: 409, nothing changes', async () => {
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: m.auth, payload: { payment_id: p.paymentId, amount: '10.00' } });
    const id = r.json().id as string;
    const err = await withPgTx(t.db.pool, (c) => finishRefund(c, id, 'SUCCESS', null)).catch((e) => e);
    expect(err).toBeInstanceOf(IllegalRefundTransitionError);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.message).toBe('Refund is NEW; it cannot become SUCCESS.');
    expect(await one(`SELECT status::text, finished_at FROM refunds WHERE id = $1`, [id])).toEqual({ status: 'NEW', finished_at: null });
  });
});

describe('payments', () => {
  it('a payment finished by someone else while the acquirer ran is not finished again: the acquirer\'s word is a recorded conflict and the money follows it once, never as a second SUCCESS', async () => {
    const billId = await createBill(t, m, { amount: '50.00' });
    // The acquirer answers PAID, but meanwhile the payment was failed (as an operator's decision would).
    const racing = new class extends SandboxConnector {
      override async createPayment(o: CreatePayment): Promise<PaymentOutcome> {
        await t.db.pool.query(`UPDATE payments SET status = 'FAIL' WHERE id = $1`, [o.paymentId]);
        return { status: 'paid', amountReceived: o.amount, ref: 'r' };
      }
    }();
    const registry = new ConnectorRegistry(t.config, t.db);
    registry.override(racing);
    const svc = new PaymentService(t.config, t.db, registry);
    const before = await one(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId]);
    // The answer of our own call, arriving after the payment was final, is applied as a read of the
    // provider (docs/adr/0090-unknown-is-unknown.md): the payment's status stands, the disagreement
    // goes to the operator as a conflict, and the money follows the provider once through the
    // conflict's own transfer (docs/adr/0021-provider-answer-after-final-state.md), no postback.
    const res = await svc.pay(billId, { method: 'SBP', payer: { email: null, phone: null, name: null, comment: null } });
    expect(res.status).toBe('FAIL');
    const pid = (await one(`SELECT id FROM payments WHERE bill_id = $1`, [billId])).id;
    expect(await one(`SELECT status::text FROM payments WHERE id = $1`, [pid])).toEqual({ status: 'FAIL' });
    expect(await one(`SELECT count(*)::int AS n FROM attention_items WHERE object_id = $1 AND kind = 'conflict'`, [pid])).toEqual({ n: 1 });
    const after = await one(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId]);
    expect(new Decimal(after.available).minus(before.available).toFixed(2)).toBe('50.00');
    expect((await t.db.pool.query(`SELECT kind::text FROM ledger_transfers WHERE ref_id = $1`, [pid])).rows).toEqual([{ kind: 'PAYMENT_CONFLICT_CREDIT' }]);
    expect(await one(`SELECT count(*)::int AS n FROM outbox_events WHERE aggregate_id = $1`, [pid])).toEqual({ n: 0 });
  });
});

describe('outbox events', () => {
  it("the worker's batch statement only writes (current, result) pairs the table lists: a DELIVERED event is not made DEAD", async () => {
    const ev = await one(
      `INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, status, lease_owner, lease_until)
       VALUES ($1, 'TEST_POSTBACK', 'guard-1', 'http://127.0.0.1:9/x', '{"fields":{}}', 'DELIVERED', 'w1', now() + interval '1 minute')
       RETURNING id::text`, [m.merchantId]);
    const d = new OutboxDeliverer({ config: t.config, db: t.db, services: { merchants: t.app.services.merchants }, log: t.app.log }, { workerId: 'w1' });
    const n = await d.record([{ eventId: ev.id, decision: { status: 'DEAD' }, lastError: 'x', attempt: null }]);
    expect(n).toBe(0);
    expect(await one(`SELECT status::text FROM outbox_events WHERE id = $1::bigint`, [ev.id])).toEqual({ status: 'DELIVERED' });
  });
});
