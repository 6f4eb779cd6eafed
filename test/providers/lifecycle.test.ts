import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { withPgTx } from '../../src/db/client.js';
import { verifyBalances, verifyLedger } from '../../src/domain/ledger/verify.js';
import type { LifecycleEvent } from '../../src/domain/operations/lifecycle.js';
import { ConflictError } from '../../src/errors.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, cardForm, heldPayment, payRequest } from '../factories/payment.js';
import { card, fund, regular } from '../payout/helpers.js';
import { refundPartial } from '../refund/helpers.js';
import { processDueOperations } from '../../src/workers/operation-worker.js';

/**
 * One lifecycle, three users (src/domain/operations/lifecycle.ts), through the real services,
 * the sandbox and the database: a payment, a refund and a payout whose first answer is lost
 * (the sandbox made each and "lost" its answer) take the same path, and the app's observer
 * hears each provider answer before it is applied.
 */
let t: TestApp;
let app: FastifyInstance;
/** The test database with the observed app in front of it (what the request helpers drive). */
let on: TestApp;
let m: MerchantFixture;
const events: LifecycleEvent[] = [];
// The sandbox's lost answers: it charges, refunds or pays out, and its answer never arrives.
const LOST_CARD = '4000000000000119';
const LOST_REFUND = '10.19';

beforeAll(async () => {
  t = await setupTestApp({ SANDBOX_PROCESSING_DELAY_MS: '0', CONNECTOR_TIMEOUT_MS: '300' });
  // The app as a deployment builds it, with an observer of the lifecycle's phases.
  app = await buildApp({ config: t.config, db: t.db, logger: false, observers: { lifecycle: (e) => events.push(e) } });
  await app.ready();
  on = { ...t, app };
  m = await createMerchant(t, { merchant: { verified: true, grantRefunds: true, grantRegularPayouts: true } });
  await fund(t, m.merchantId, '1000');
});
afterAll(async () => {
  await app.close();
  await t.close();
});

const one = async (sql: string, v: unknown[]) => (await t.db.pool.query(sql, v)).rows[0];
const statusOf = async (table: string, id: string) => (await one(`SELECT status::text FROM ${table} WHERE id = $1`, [id])).status as string;
const transfersOf = async (id: string) => (await t.db.pool.query(`SELECT kind FROM ledger_transfers WHERE ref_id = $1 ORDER BY kind::text`, [id])).rows.map((r) => r.kind);
const answered = (type: string, id: string) => events.filter((e) => e.type === type && e.id === id && e.phase === 'provider-answered').length;

/** A payment, a refund and a payout each with its answer lost: all three PROCESS, on record with the sandbox. */
async function lostThree() {
  const pay = await payRequest(on, await createBill(t, m, { amount: '40.00' }), cardForm(LOST_CARD));
  const payment = pay.json().payment_id as string;
  const paid = await payRequest(on, await createBill(t, m, { amount: '100.00' }), cardForm());
  const refund = (await refundPartial(on, m, paid.json().payment_id, LOST_REFUND)).json().id as string;
  const payout = (await regular(on, m, card('30', { account_identifier: LOST_CARD }))).json().data[0].id as string;
  await app.services.refunds.processDue();
  await app.services.payouts.processDue();
  return { payment, refund, payout };
}

const due = async (ids: { payment: string; refund: string; payout: string }) => {
  await t.db.pool.query(`UPDATE payments SET next_check_at = now() - interval '1 second' WHERE id = $1`, [ids.payment]);
  await t.db.pool.query(`UPDATE refunds SET next_check_at = now() - interval '1 second' WHERE id = $1`, [ids.refund]);
  await t.db.pool.query(`UPDATE payouts SET next_check_at = now() - interval '1 second' WHERE id = $1`, [ids.payout]);
};

const reconcileAll = async () => {
  await processDueOperations({ services: app.services, config: t.config }, 'payment');
  await app.services.refunds.processDue();
  await app.services.payouts.processDue();
};

describe('the lifecycle: the same path for a payment, a refund and a payout', () => {
  it('an answer lost: each stays PROCESS with its connector, reconciliation applies the provider\'s answer once, and the observer hears every answer before it is applied', async () => {
    const ids = await lostThree();
    expect(await one(`SELECT status::text, connector FROM payments WHERE id = $1`, [ids.payment])).toEqual({ status: 'PROCESS', connector: 'sandbox' });
    expect(await one(`SELECT status::text, connector FROM refunds WHERE id = $1`, [ids.refund])).toEqual({ status: 'PROCESS', connector: 'sandbox' });
    expect(await one(`SELECT status::text, connector FROM payouts WHERE id = $1`, [ids.payout])).toEqual({ status: 'PROCESS', connector: 'sandbox' });
    expect([answered('payment', ids.payment), answered('refund', ids.refund), answered('payout', ids.payout)]).toEqual([1, 1, 1]);

    // Not due yet: nothing is asked.
    await reconcileAll();
    expect([answered('payment', ids.payment), answered('refund', ids.refund), answered('payout', ids.payout)]).toEqual([1, 1, 1]);

    await due(ids);
    await reconcileAll();
    expect([await statusOf('payments', ids.payment), await statusOf('refunds', ids.refund), await statusOf('payouts', ids.payout)]).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
    expect([answered('payment', ids.payment), answered('refund', ids.refund), answered('payout', ids.payout)]).toEqual([2, 2, 2]);

    // Asked again (a stale lease, a second worker): the same answer moves nothing twice.
    expect(await app.services.payments.askProvider({ id: ids.payment, connector: 'sandbox', ref: null, data: null })).toMatchObject({ result: { applied: false, status: 'SUCCESS' } });
    expect(await app.services.operations.refund.apply({ id: ids.refund }, { status: 'succeeded', ref: null }, { via: 'reconciliation' }))
      .toEqual({ applied: false, status: 'SUCCESS', id: ids.refund });
    expect(await app.services.operations.payout.apply({ id: ids.payout }, { status: 'succeeded', ref: null }, { via: 'reconciliation' }))
      .toEqual({ applied: false, status: 'SUCCESS', id: ids.payout });
    expect(await transfersOf(ids.payment)).toEqual(['PAYMENT_CREDIT']);
    expect(await transfersOf(ids.refund)).toEqual(['REFUND_DEBIT', 'REFUND_LOCK']);
    expect(await transfersOf(ids.payout)).toEqual(['PAYOUT_DEBIT', 'PAYOUT_LOCK']);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('the operator\'s decision goes through the same finish: applied once; the same decision again changes nothing, the other one is 409; the provider agreeing later moves nothing', async () => {
    const ids = await lostThree();
    const lifecycles = [
      ['payments', ids.payment, app.services.payments.lifecycle],
      ['refunds', ids.refund, app.services.refunds.lifecycle],
      ['payouts', ids.payout, app.services.payouts.lifecycle],
    ] as const;
    for (const [table, id, lifecycle] of lifecycles) {
      await withPgTx(t.db.pool, (c) => lifecycle.decide_(c, id, 'SUCCESS', 'seen on the bank statement'));
      expect(await statusOf(table, id)).toBe('SUCCESS');
      await withPgTx(t.db.pool, (c) => lifecycle.decide_(c, id, 'SUCCESS', 'again'));
      await expect(withPgTx(t.db.pool, (c) => lifecycle.decide_(c, id, 'FAIL', 'changed my mind'))).rejects.toBeInstanceOf(ConflictError);
      expect(await statusOf(table, id)).toBe('SUCCESS');
    }
    // The provider then says what the operator decided: no conflict, nothing moves again.
    await due(ids);
    await app.services.payments.askProvider({ id: ids.payment, connector: 'sandbox', ref: null, data: null });
    await app.services.operations.refund.apply({ id: ids.refund }, { status: 'succeeded', ref: null }, { via: 'reconciliation' });
    await app.services.operations.payout.apply({ id: ids.payout }, { status: 'succeeded', ref: null }, { via: 'reconciliation' });
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM attention_items WHERE object_id = ANY($1::text[]) AND kind = 'conflict'`,
      [[ids.payment, ids.refund, ids.payout]])).rows[0].n).toBe(0);
    expect(await transfersOf(ids.payment)).toEqual(['PAYMENT_CREDIT']);
    expect(await transfersOf(ids.refund)).toEqual(['REFUND_DEBIT', 'REFUND_LOCK']);
    expect(await transfersOf(ids.payout)).toEqual(['PAYOUT_DEBIT', 'PAYOUT_LOCK']);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a held payment\'s capture is sent through the same phase: its answer heard once before it is applied, credited once', async () => {
    const held = await heldPayment(on, m, '25.00');
    expect(answered('payment', held)).toBe(1);
    expect(await app.services.payments.captureHold(held, null)).toMatchObject({ status: 'SUCCESS' });
    expect(answered('payment', held)).toBe(2);
    expect(await transfersOf(held)).toEqual(['PAYMENT_CREDIT']);
    await expect(app.services.payments.captureHold(held, null)).rejects.toBeInstanceOf(ConflictError);
    expect(answered('payment', held)).toBe(2);
  });

  it('past the provider deadline each one gets one attention item, which keeps what was last heard while reconciliation goes on asking', async () => {
    const ids = await lostThree();
    // From now on the provider never answers about any of the three.
    const mute = { status: 'unknown' as const, ref: null, reason: 'no answer (1)' };
    app.services.connectors.override(new class extends SandboxConnector {
      override async getPayment() { return mute; }
      override async getRefund() { return mute; }
      override async getPayout() { return mute; }
    }('sandbox'));
    try {
      const pastDeadline = async () => {
        await t.db.pool.query(`UPDATE refunds SET sent_at = now() - interval '24 hours 1 minute' WHERE id = $1`, [ids.refund]);
        await t.db.pool.query(`UPDATE payouts SET sent_at = now() - interval '24 hours 1 minute' WHERE id = $1`, [ids.payout]);
        await due(ids);
        // A payment's deadline runs from its creation, its partition key: a worker whose give-up age has passed.
        await processDueOperations({ services: app.services, config: { ...t.config, reconcileGiveUpMs: 0 } }, 'payment');
        await app.services.refunds.processDue();
        await app.services.payouts.processDue();
      };
      await pastDeadline();
      mute.reason = 'no answer (2)';
      await pastDeadline();
      const items = (await t.db.pool.query(`SELECT object_type, last_heard FROM attention_items WHERE object_id = ANY($1::text[]) AND kind = 'unknown_outcome' ORDER BY object_type`,
        [[ids.payment, ids.refund, ids.payout]])).rows;
      expect(items.map((i) => i.object_type)).toEqual(['payment', 'payout', 'refund']);
      for (const i of items) expect(i.last_heard).toMatchObject({ status: 'unknown', reason: 'no answer (2)' });
      expect([await statusOf('payments', ids.payment), await statusOf('refunds', ids.refund), await statusOf('payouts', ids.payout)]).toEqual(['PROCESS', 'PROCESS', 'PROCESS']);
    } finally {
      app.services.connectors.override(new SandboxConnector('sandbox', 'test', {}, { db: t.db.pool }));
    }
  });
});
