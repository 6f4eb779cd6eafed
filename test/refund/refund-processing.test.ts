import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { RefundService } from '../../src/domain/refund/refund.service.js';
import { IllegalRefundTransitionError, assertTransition, REFUND_TRANSITIONS } from '../../src/domain/refund/refund.states.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { balance, expect422, grantedMerchant, refundFull, refundPartial, refundStatus, refundedAmount } from './helpers.js';
import { waitFor } from '../helpers/wait.js';
import { startOperationWorker } from '../../src/workers/operation-worker.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const runPass = () => t.app.services.refunds.processDue();

async function status(id: string): Promise<string> {
  const r = await t.db.pool.query<{ status: string }>(`SELECT status FROM refunds WHERE id = $1`, [id]);
  return r.rows[0]!.status;
}

async function entries(refundId: string) {
  // Per transfer: what it did to the merchant's available and locked (credits minus debits).
  const r = await t.db.pool.query<{ kind: string; a: string; l: string }>(
    `SELECT t.kind,
            sum(CASE WHEN e.credit_account LIKE '%:available' THEN e.amount WHEN e.debit_account LIKE '%:available' THEN -e.amount ELSE 0 END)::text AS a,
            sum(CASE WHEN e.credit_account LIKE '%:locked' THEN e.amount WHEN e.debit_account LIKE '%:locked' THEN -e.amount ELSE 0 END)::text AS l
       FROM ledger_transfers t JOIN ledger_entries e ON e.transfer_id = t.id WHERE t.ref_id = $1 GROUP BY t.id, t.kind, t.created_at ORDER BY t.created_at, t.id`,
    [refundId],
  );
  return r.rows.map((x) => `${x.kind} ${Number(x.a)} ${Number(x.l)}`);
}

/** Finishes every due refund, whatever else other tests left due. */
async function drain(): Promise<number> {
  let total = 0;
  for (let n = await runPass(); n > 0; n = await runPass()) total += n;
  return total;
}

describe('refund state table', () => {
  it('allows exactly NEW -> PROCESS -> SUCCESS | FAIL; final states never change', () => {
    expect(REFUND_TRANSITIONS).toEqual({ NEW: ['PROCESS'], PROCESS: ['SUCCESS', 'FAIL'], SUCCESS: [], FAIL: [] });
    expect(() => assertTransition('NEW', 'SUCCESS')).toThrow(IllegalRefundTransitionError);
    expect(() => assertTransition('SUCCESS', 'FAIL')).toThrow(IllegalRefundTransitionError);
    expect(() => assertTransition('FAIL', 'PROCESS')).toThrow(IllegalRefundTransitionError);
    expect(() => assertTransition('PROCESS', 'SUCCESS')).not.toThrow();
  });
});

describe('sandbox refund processing', () => {
  it('NEW -> PROCESS -> SUCCESS debits the locked amount; the payment stays refunded; the books balance', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const created = (await refundPartial(t, m, p.paymentId, '40')).json();
    expect(created.status).toBe('NEW');
    await drain();
    expect(await status(created.id)).toBe('SUCCESS');
    const st = await refundStatus(t, m, { id: created.id });
    expect(st.json()).toMatchObject({ id: created.id, status: 'SUCCESS', amount: 40, currency: 'RUB', success: true });
    expect(await balance(t, m.merchantId)).toEqual({ available: '60.00', locked: '0.00', hold: '0.00' });
    expect(await refundedAmount(t, p.paymentId)).toBe('40.00');
    expect(await entries(created.id)).toEqual(['REFUND_LOCK -40 40', 'REFUND_DEBIT 0 -40']);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a refund of a payment paid with a card ending 4444 FAILs: the amount returns to available and the room to the payment', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00', fromCard: '555555******4444' });
    const created = (await refundFull(t, m, p.paymentId)).json();
    expect(await balance(t, m.merchantId)).toEqual({ available: '0.00', locked: '100.00', hold: '0.00' });
    await drain();
    expect(await status(created.id)).toBe('FAIL');
    expect((await refundStatus(t, m, { payment_id: p.paymentId })).json().status).toBe('FAIL');
    expect(await balance(t, m.merchantId)).toEqual({ available: '100.00', locked: '0.00', hold: '0.00' });
    expect(await refundedAmount(t, p.paymentId)).toBe('0.00');
    expect(await entries(created.id)).toEqual(['REFUND_LOCK -100 100', 'REFUND_RELEASE 100 -100']);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
    // A failed refund gives the room back: the payment can be refunded again.
    expect((await refundFull(t, m, p.paymentId)).json().amount).toBe(100);
  });

  it('an SBP payment (no card) is refunded successfully', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '10.00', fromCard: null });
    const created = (await refundFull(t, m, p.paymentId)).json();
    await drain();
    expect(await status(created.id)).toBe('SUCCESS');
  });

  it('final states never change: a finished refund is not processed again and moves no more money', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '10.00' });
    const created = (await refundFull(t, m, p.paymentId)).json();
    await drain();
    expect(await runPass()).toBe(0);
    // Even a stale lease on a finished refund does not bring it back.
    await t.db.pool.query(`UPDATE refunds SET lease_until = now() - interval '1 hour' WHERE id = $1`, [created.id]);
    expect(await runPass()).toBe(0);
    expect(await entries(created.id)).toEqual(['REFUND_LOCK -10 10', 'REFUND_DEBIT 0 -10']);
  });

  it('a refund is not processed before SANDBOX_PROCESSING_DELAY_MS has passed', async () => {
    const slow = new RefundService({ ...t.config, sandboxProcessingDelayMs: 60_000 }, t.db, t.app.services.connectors);
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '10.00' });
    const r = await slow.createFull({ id: m.merchantId, grantRefunds: true }, p.paymentId);
    await drain();
    expect(await status(r.id)).toBe('NEW');
    await t.db.pool.query(`UPDATE refunds SET process_after = now() - interval '1 second' WHERE id = $1`, [r.id]);
    await drain();
    expect(await status(r.id)).toBe('SUCCESS');
  });

  it('a refund left in PROCESS by a crashed worker is finished once its lease expires, not before', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '10.00' });
    const created = (await refundFull(t, m, p.paymentId)).json();
    await t.db.pool.query(`UPDATE refunds SET status = 'PROCESS', lease_until = now() + interval '1 hour' WHERE id = $1`, [created.id]);
    await drain();
    expect(await status(created.id)).toBe('PROCESS');
    expect((await refundStatus(t, m, { id: created.id })).json().status).toBe('PROCESS');
    await t.db.pool.query(`UPDATE refunds SET lease_until = now() - interval '1 second' WHERE id = $1`, [created.id]);
    await drain();
    expect(await status(created.id)).toBe('SUCCESS');
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('concurrent workers finish each refund exactly once', async () => {
    const m = await grantedMerchant(t);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const p = await createPaidPayment(t, m, { amount: '5.00', fromCard: i % 3 === 0 ? '555555******4444' : undefined });
      ids.push((await refundFull(t, m, p.paymentId)).json().id);
    }
    const counts = await Promise.all(Array.from({ length: 6 }, () => t.app.services.refunds.processDue(3)));
    // Every refund is claimed once in all: SKIP LOCKED never hands one to two workers.
    expect(counts.reduce((a, b) => a + b, 0) + (await drain())).toBe(12);
    const r = await t.db.pool.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM refunds WHERE id = ANY($1) GROUP BY status ORDER BY status::text`, [ids],
    );
    expect(r.rows).toEqual([{ status: 'FAIL', n: 4 }, { status: 'SUCCESS', n: 8 }]);
    const e = await t.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = ANY($1)`, [ids]);
    expect(e.rows[0]!.n).toBe(24);
    expect(await balance(t, m.merchantId)).toEqual({ available: '20.00', locked: '0.00', hold: '0.00' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('the background worker processes due refunds and stops cleanly', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '10.00' });
    const created = (await refundFull(t, m, p.paymentId)).json();
    const worker = startOperationWorker({ config: t.config, db: t.db, services: t.app.services, log: t.app.log }, 'refund');
    try {
      await waitFor(async () => (await status(created.id)) === 'SUCCESS', 'the worker to finish the refund SUCCESS');
    } finally {
      await worker.stop();
    }
  });
});

describe('refund/status', () => {
  it('by payment_id answers the payment\'s latest refund; by id that refund', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const first = (await refundPartial(t, m, p.paymentId, '10')).json();
    const second = (await refundPartial(t, m, p.paymentId, '20')).json();
    const latest = await refundStatus(t, m, { payment_id: p.paymentId });
    expect(latest.statusCode).toBe(200);
    expect(latest.json()).toEqual(second);
    const byId = await refundStatus(t, m, { id: first.id });
    expect(byId.json()).toEqual(first);
    expect(byId.json()).toMatchObject({ entity_type: 'payment', entity_id: p.paymentId, amount: 10, success: true });
  });

  it('accepts the parameters as a JSON body on GET', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const created = (await refundFull(t, m, p.paymentId)).json();
    const res = await t.app.inject({
      method: 'GET', url: '/api/v1/refund/status', headers: { ...m.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ payment_id: p.paymentId }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(created.id);
  });

  it('a payment id sent as id answers that payment\'s latest refund', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const created = (await refundPartial(t, m, p.paymentId, '5')).json();
    expect((await refundStatus(t, m, { id: p.paymentId })).json()).toEqual(created);
  });

  it('neither payment_id nor id: 422 errors.payment_id', async () => {
    const m = await grantedMerchant(t);
    expect422(await refundStatus(t, m, {}), 'payment_id');
  });

  it('an unknown refund id, or a payment without refunds: 422', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    expect422(await refundStatus(t, m, { id: 'nope' }), 'id');
    expect422(await refundStatus(t, m, { payment_id: p.paymentId }), 'payment_id');
    expect422(await refundStatus(t, m, { payment_id: 'nope' }), 'payment_id');
  });

  it('another merchant\'s refund is not found, by id or by payment_id', async () => {
    const a = await grantedMerchant(t);
    const b = await grantedMerchant(t);
    const p = await createPaidPayment(t, a, { amount: '100.00' });
    const created = (await refundFull(t, a, p.paymentId)).json();
    expect422(await refundStatus(t, b, { id: created.id }), 'id');
    expect422(await refundStatus(t, b, { payment_id: p.paymentId }), 'payment_id');
  });

  it('an id that is not a refund of the given payment_id: 422 errors.id', async () => {
    const m = await grantedMerchant(t);
    const p1 = await createPaidPayment(t, m, { amount: '100.00' });
    const p2 = await createPaidPayment(t, m, { amount: '100.00' });
    const r1 = (await refundFull(t, m, p1.paymentId)).json();
    expect422(await refundStatus(t, m, { id: r1.id, payment_id: p2.paymentId }), 'id');
    expect((await refundStatus(t, m, { id: r1.id, payment_id: p1.paymentId })).statusCode).toBe(200);
  });
});
