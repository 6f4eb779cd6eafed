import { createHmac } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import type {
  CreatePayment, CreatePayout, CreateRefund, InboundNotification, OperationOutcome, ParsedNotification, PaymentOutcome, ProviderData,
} from '../../src/domain/providers/connector.js';
import type { OperationType } from '../../src/domain/operation-type.js';
import { verifyBalances, verifyLedger } from '../../src/domain/ledger/verify.js';
import { processDueOperations } from '../../src/workers/operation-worker.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payRequest, SUCCESS_CARD } from '../factories/payment.js';
import { card, fund, regular } from '../payout/helpers.js';
import { refundPartial } from '../refund/helpers.js';

/**
 * The three operation kinds share one send path (docs/adr/0120-one-worker-factory-and-one-map-of-kinds.md):
 * the same lifecycle scenarios, run on a payment, a refund and a payout through one table of
 * cases, the real services, the kinds' worker pass and the notifications route. The provider is
 * a test connector (kind sandbox, `prov-kinds`) that never answers a creation (its answer is
 * lost), answers reads as a case sets, and signs its notifications.
 */
const SECRET = 'kinds-secret';
const sign = (body: string) => createHmac('sha256', SECRET).update(body).digest('hex');
const LOST = { status: 'unknown', ref: null, reason: 'timeout after 300 ms' } as const;

/** What the provider answers when asked, per object id (unset: it cannot say). */
const says = new Map<string, PaymentOutcome | OperationOutcome>();
/** The provider's own state of the operation each read was handed (docs/adr/0118), per object id. */
const handed = new Map<string, ProviderData | null>();

class KindsProvider extends SandboxConnector {
  override async createPayment(r: CreatePayment): Promise<PaymentOutcome> {
    // The good card is paid at once (a refund needs a paid payment); any other's answer is lost.
    if (r.card?.number === SUCCESS_CARD) return { status: 'paid', amountReceived: r.amount, ref: `pay-${r.paymentId}` };
    return LOST;
  }
  override async getPayment(q: { paymentId: string; ref: string | null; data?: ProviderData | null }): Promise<PaymentOutcome> {
    handed.set(q.paymentId, q.data ?? null);
    return (says.get(q.paymentId) as PaymentOutcome | undefined) ?? { status: 'pending', ref: q.ref ?? `pay-${q.paymentId}` };
  }
  override async createPayout(_p: CreatePayout): Promise<OperationOutcome> { return LOST; }
  override async getPayout(q: { payoutId: string; data?: ProviderData | null }): Promise<OperationOutcome> {
    handed.set(q.payoutId, q.data ?? null);
    return (says.get(q.payoutId) as OperationOutcome | undefined) ?? LOST;
  }
  override async refund(_r: CreateRefund): Promise<OperationOutcome> { return LOST; }
  override async getRefund(q: { refundId: string; data?: ProviderData | null }): Promise<OperationOutcome> {
    handed.set(q.refundId, q.data ?? null);
    return (says.get(q.refundId) as OperationOutcome | undefined) ?? LOST;
  }
  override async parseNotification(n: InboundNotification): Promise<ParsedNotification> {
    const b = n.body as Record<string, string> | null;
    if (!b || typeof b !== 'object' || typeof b.event_id !== 'string') return { ok: false, reason: 'malformed' };
    const { signature, ...rest } = b;
    if (signature !== sign(JSON.stringify(rest))) return { ok: false, reason: 'bad signature' };
    const object = b.object as OperationType;
    return { ok: true, eventKey: b.event_id, object, ref: b.ref!, ourId: b.our_id!, outcome: outcome(object, b.our_id!, b.status as 'succeeded' | 'failed'), reply: { status: 200, body: 'OK' } };
  }
}

/** The provider's final word about an operation of `type`, in its connector's terms. */
function outcome(type: OperationType, id: string, word: 'succeeded' | 'failed'): PaymentOutcome | OperationOutcome {
  const ref = `ref-${id}`;
  if (type === 'payment') {
    return word === 'succeeded' ? { status: 'paid', amountReceived: new Decimal('40.00'), ref } : { status: 'declined', code: 'provider_declined', message: 'declined by the provider', ref };
  }
  return word === 'succeeded' ? { status: 'succeeded', ref } : { status: 'failed', code: 'provider_failed', message: 'failed by the provider', ref };
}

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '300', SANDBOX_PROCESSING_DELAY_MS: '0' });
  await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('prov-kinds', 'sandbox', 'test')`);
  t.app.services.connectors.override(new KindsProvider('prov-kinds'));
  m = await createMerchant(t, { merchant: { verified: true, grantRegularPayouts: true, grantRefunds: true } });
  await t.db.pool.query(`UPDATE merchants SET routing = $2::jsonb WHERE id = $1`, [m.merchantId, JSON.stringify({ payment_card: ['prov-kinds'], payout_card: ['prov-kinds'] })]);
  await fund(t, m.merchantId, '1000');
});
afterAll(async () => { await t?.close(); });

const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];
const count = async (sql: string, v: unknown[]) => (await one(sql, v)).n as number;

interface Case {
  type: OperationType;
  table: 'payments' | 'refunds' | 'payouts';
  /** The ledger transfer of the money moving when it finishes SUCCESS. */
  moved: string;
  /** One of this kind handed to the provider whose answer was lost: PROCESS, on record with `prov-kinds`. */
  lost(): Promise<string>;
}

const CASES: Case[] = [
  {
    type: 'payment', table: 'payments', moved: 'PAYMENT_CREDIT',
    lost: async () => (await payRequest(t, await createBill(t, m, { amount: '40.00' }), cardForm('4000000000000119'))).json().payment_id as string,
  },
  {
    type: 'refund', table: 'refunds', moved: 'REFUND_DEBIT',
    lost: async () => {
      const paid = await payRequest(t, await createBill(t, m, { amount: '100.00' }), cardForm(SUCCESS_CARD));
      expect(paid.json().status).toBe('SUCCESS');
      const id = (await refundPartial(t, m, paid.json().payment_id, '10.00')).json().id as string;
      await processDueOperations(t.app, 'refund');
      return id;
    },
  },
  {
    type: 'payout', table: 'payouts', moved: 'PAYOUT_DEBIT',
    lost: async () => {
      const id = (await regular(t, m, card('20'))).json().data[0].id as string;
      await processDueOperations(t.app, 'payout');
      return id;
    },
  },
];

const statusOf = async (c: Case, id: string) => (await one(`SELECT status::text FROM ${c.table} WHERE id = $1`, [id])).status as string;
const transfers = (id: string, kind: string) => count(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1 AND kind::text = $2`, [id, kind]);
const items = (id: string, kind: 'unknown_outcome' | 'conflict') =>
  t.db.pool.query(`SELECT object_type, last_heard FROM attention_items WHERE object_id = $1 AND kind = $2`, [id, kind]).then((r) => r.rows);
/** Due for its next check now (the backoff skipped). */
const due = (c: Case, id: string) => t.db.pool.query(`UPDATE ${c.table} SET next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);

let eventNo = 0;
/** The provider's signed notification through the public route, a fresh event id each time. */
async function notify(type: OperationType, id: string, word: 'succeeded' | 'failed') {
  const body = { event_id: `kinds-${++eventNo}`, object: type, our_id: id, ref: `ref-${id}`, status: word };
  const r = await t.app.inject({ method: 'POST', url: '/providers/prov-kinds/notifications', payload: { ...body, signature: sign(JSON.stringify(body)) } });
  expect(r.statusCode, r.body).toBe(200);
}

describe.each(CASES)('the $type kind, through the one send path', (c) => {
  it('the provider\'s own state of the operation is kept with it and handed back to the next question; a final answer\'s replaces it', async () => {
    const id = await c.lost();
    const dataOf = async () => (await one(`SELECT provider_data FROM ${c.table} WHERE id = $1`, [id])).provider_data;
    expect(await dataOf()).toBeNull();
    says.set(id, { status: 'pending', ref: `ref-${id}`, data: { asked: 1 } });
    await due(c, id);
    await processDueOperations(t.app, c.type);
    expect(handed.get(id)).toBeNull();
    expect(await statusOf(c, id)).toBe('PROCESS');
    expect(await dataOf()).toEqual({ asked: 1 });
    // An answer without data keeps what was kept.
    says.set(id, { status: 'pending', ref: `ref-${id}` });
    await due(c, id);
    await processDueOperations(t.app, c.type);
    expect(await dataOf()).toEqual({ asked: 1 });
    says.set(id, { ...outcome(c.type, id, 'succeeded'), data: { asked: 2 } });
    await due(c, id);
    await processDueOperations(t.app, c.type);
    expect(handed.get(id)).toEqual({ asked: 1 });
    expect(await statusOf(c, id)).toBe('SUCCESS');
    expect(await dataOf()).toEqual({ asked: 2 });
  });

  it('a non-final answer heard outside the worker\'s question (a notification) keeps its provider state and hands it to the next question', async () => {
    const id = await c.lost();
    const row = async () => one(`SELECT provider_data, provider_ref, status::text FROM ${c.table} WHERE id = $1`, [id]);
    expect((await row()).provider_data).toBeNull();
    await t.app.services.operations[c.type].apply({ id }, { status: 'pending', ref: `ref-${id}`, data: { heard: 'notification' } } as never, { via: 'notification' });
    expect(await row()).toMatchObject({ status: 'PROCESS', provider_data: { heard: 'notification' }, provider_ref: `ref-${id}` });
    // The worker's next question hands it back.
    says.set(id, { status: 'pending', ref: `ref-${id}` });
    await due(c, id);
    await processDueOperations(t.app, c.type);
    expect(handed.get(id)).toEqual({ heard: 'notification' });
  });

  it('an answer lost, then reconciled: finished SUCCESS once, the money moved once however often it is asked again', async () => {
    const id = await c.lost();
    expect(await one(`SELECT status::text, connector FROM ${c.table} WHERE id = $1`, [id])).toEqual({ status: 'PROCESS', connector: 'prov-kinds' });
    expect(await transfers(id, c.moved)).toBe(0);

    says.set(id, outcome(c.type, id, 'succeeded'));
    await due(c, id);
    expect((await processDueOperations(t.app, c.type)).claimed).toBeGreaterThanOrEqual(1);
    expect(await statusOf(c, id)).toBe('SUCCESS');
    // A second question (a stale lease, a second worker) and the provider's notification of it: nothing moves twice.
    await due(c, id);
    await processDueOperations(t.app, c.type);
    await notify(c.type, id, 'succeeded');
    expect(await t.app.services.operations[c.type].apply({ id }, outcome(c.type, id, 'succeeded'), { via: 'reconciliation' }))
      .toMatchObject({ applied: false, status: 'SUCCESS', id });
    expect(await statusOf(c, id)).toBe('SUCCESS');
    expect(await transfers(id, c.moved)).toBe(1);
    expect(await items(id, 'conflict')).toEqual([]);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('no final answer: asked again while RECONCILE_GIVE_UP_MS has not passed, then one attention item for the operator, still PROCESS', async () => {
    const id = await c.lost();
    await due(c, id);
    await processDueOperations({ services: t.app.services, config: t.config }, c.type);
    expect(await items(id, 'unknown_outcome')).toEqual([]);

    // A worker whose RECONCILE_GIVE_UP_MS has passed since the operation went to its provider.
    const gaveUp = { services: t.app.services, config: { ...t.config, reconcileGiveUpMs: 0 } };
    await due(c, id);
    await processDueOperations(gaveUp, c.type);
    await due(c, id);
    await processDueOperations(gaveUp, c.type);
    const raised = await items(id, 'unknown_outcome');
    expect(raised.map((i) => i.object_type)).toEqual([c.type]);
    expect(raised[0].last_heard).toMatchObject({ status: c.type === 'payment' ? 'pending' : 'unknown' });
    expect(await statusOf(c, id)).toBe('PROCESS');
    expect(await transfers(id, c.moved)).toBe(0);
  });

  it('a late provider answer contradicting the final state: the status stays, one conflict is recorded and the money follows the provider once', async () => {
    const id = await c.lost();
    says.set(id, outcome(c.type, id, 'succeeded'));
    await due(c, id);
    await processDueOperations(t.app, c.type);
    expect(await statusOf(c, id)).toBe('SUCCESS');
    const before = (await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [id])).rows[0].n as number;

    // The provider now says it failed: its notification, confirmed by a read of the provider.
    says.set(id, outcome(c.type, id, 'failed'));
    await notify(c.type, id, 'failed');
    await notify(c.type, id, 'failed');
    expect(await statusOf(c, id)).toBe('SUCCESS');
    const conflicts = await items(id, 'conflict');
    expect(conflicts.map((i) => i.object_type)).toEqual([c.type]);
    expect(conflicts[0].last_heard).toMatchObject({ provider: { status: 'failed', via: 'notification+read' } });
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [id])).rows[0].n).toBe(before + 1);
    expect(await transfers(id, c.moved)).toBe(1);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });
});
