import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { ConnectorRefusedError, type Connector, type CreateRefund, type OperationOutcome } from '../../src/domain/providers/connector.js';
import { ConnectorRegistry } from '../../src/domain/providers/registry.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import { RefundService } from '../../src/domain/refund/refund.service.js';
import { ConflictError, NotFoundError, ValidationError } from '../../src/errors.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { balance, grantedMerchant, refundPartial, refundedAmount } from './helpers.js';

/**
 * Refunds whose outcome is unknown stay PROCESS; reconciliation asks the connector that took
 * the payment and applies its final answer once; past RECONCILE_GIVE_UP_MS the operator decides.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp({ SANDBOX_PROCESSING_DELAY_MS: '0' }); });
afterAll(async () => { await t.close(); });

const one = async (sql: string, v: unknown[]) => (await t.db.pool.query(sql, v)).rows[0];
const count = async (sql: string, v: unknown[]) => (await one(sql, v)).n as number;
const run = () => t.app.services.refunds.processDue();
const refund = (id: string) => one(`SELECT status::text, connector, provider_ref, sent_at, check_attempts FROM refunds WHERE id = $1`, [id]);
const due = (id: string) => t.db.pool.query(`UPDATE refunds SET next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);
const transfers = (id: string, kind: string) => count(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = $2 AND ref_id = $1`, [id, kind]);
const postbacks = (id: string) => count(`SELECT count(*)::int AS n FROM outbox_events WHERE kind = 'REFUND_POSTBACK' AND aggregate_id = $1`, [id]);

/** A merchant with a paid 100.00 payment and a partial refund of `amount` created. */
async function refunded(amount: string) {
  const m = await grantedMerchant(t);
  const p = await createPaidPayment(t, m, { amount: '100.00' });
  const r = await refundPartial(t, m, p.paymentId, amount);
  expect(r.statusCode).toBe(200);
  return { m, p, id: r.json().id as string };
}

function serviceWith(o: { refund?: (r: CreateRefund) => Promise<OperationOutcome>; get?: () => Promise<OperationOutcome> }) {
  const registry = new ConnectorRegistry(t.config, t.db);
  registry.override(new class extends SandboxConnector {
    override refund(r: CreateRefund) { return o.refund ? o.refund(r) : super.refund(r); }
    override getRefund(q: { refundId: string; ref: string | null }) { return o.get ? o.get() : super.getRefund(q); }
  }() as Connector);
  return new RefundService(t.config, t.db, registry);
}

describe('the sandbox refund that times out after applying (an amount ending in 19 kopecks)', () => {
  it('stays PROCESS after the lost answer; reconciliation finds it applied: SUCCESS, debited once, one postback', async () => {
    const { m, p, id } = await refunded('10.19');
    await run();
    const after = await refund(id);
    expect(after).toMatchObject({ status: 'PROCESS', connector: 'sandbox', provider_ref: null, check_attempts: 1 });
    expect(after.sent_at).not.toBeNull();
    expect(await one(`SELECT status, amount::text FROM sandbox_operations WHERE kind = 'refund' AND our_id = $1`, [id])).toEqual({ status: 'succeeded', amount: '10.19' });
    expect(await postbacks(id)).toBe(0);
    // Not asked again before its backoff is over.
    await run();
    expect((await refund(id)).status).toBe('PROCESS');
    await due(id);
    await run();
    const done = await refund(id);
    expect(done.status).toBe('SUCCESS');
    expect(done.provider_ref).toMatch(/^sbx_/);
    expect(await transfers(id, 'REFUND_DEBIT')).toBe(1);
    expect(await transfers(id, 'REFUND_RELEASE')).toBe(0);
    expect(await postbacks(id)).toBe(1);
    expect(await refundedAmount(t, p.paymentId)).toBe('10.19');
    expect((await balance(t, m.merchantId)).locked).toBe('0.00');
    await due(id);
    await run();
    expect(await transfers(id, 'REFUND_DEBIT')).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM sandbox_operations WHERE our_id = $1`, [id])).toBe(1);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('other amounts answer at once (10.20 succeeds in one pass)', async () => {
    const { id } = await refunded('10.20');
    await run();
    expect((await refund(id)).status).toBe('SUCCESS');
  });

  it('a worker that died after recording the send and before the call: the sandbox has nothing, the refund is sent again under its id, once', async () => {
    const { id } = await refunded('5.00');
    await t.db.pool.query(`UPDATE refunds SET status = 'PROCESS', sent_at = now(), lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    await run();
    expect((await refund(id)).status).toBe('SUCCESS');
    expect(await count(`SELECT count(*)::int AS n FROM sandbox_operations WHERE our_id = $1`, [id])).toBe(1);
    expect(await transfers(id, 'REFUND_DEBIT')).toBe(1);
  });
});

describe('a refusal is not an answer about the money', () => {
  it('a refund refused on its first send stays PROCESS, its money locked; the next check repeats it under the same id and it succeeds once', async () => {
    const { m, id } = await refunded('8.00');
    await serviceWith({ refund: async () => { throw new ConnectorRefusedError('http_503', 'acquirer down'); } }).processDue();
    expect(await refund(id)).toMatchObject({ status: 'PROCESS', check_attempts: 1 });
    expect((await balance(t, m.merchantId)).locked).toBe('8.00');
    await due(id);
    await run();
    expect((await refund(id)).status).toBe('SUCCESS');
    expect(await transfers(id, 'REFUND_DEBIT')).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM sandbox_operations WHERE our_id = $1`, [id])).toBe(1);
  });
});

/** A refund the provider never answers for, handed to it a day and a minute ago: on the attention list. */
async function stuckRefund(amount = '30.00') {
  const x = await refunded(amount);
  const unknown: OperationOutcome = { status: 'unknown', ref: null, reason: 'timeout after 15000 ms' };
  const svc = serviceWith({ refund: async () => unknown, get: async () => unknown });
  await svc.processDue();
  await t.db.pool.query(`UPDATE refunds SET sent_at = now() - interval '24 hours 1 minute', next_check_at = now() - interval '1 second' WHERE id = $1`, [x.id]);
  await svc.processDue();
  const item = await one(`SELECT * FROM attention_items WHERE object_type = 'refund' AND object_id = $1`, [x.id]);
  return { ...x, svc, item };
}

describe('past the provider deadline: attention and the operator decision', () => {
  it('one attention item with what was last heard; the refund stays PROCESS, its money locked', async () => {
    const { m, id, item, svc } = await stuckRefund();
    expect(item).toMatchObject({ object_type: 'refund', object_id: id, merchant_id: m.merchantId, connector: 'sandbox', resolved_at: null,
      last_heard: { status: 'unknown', reason: 'timeout after 15000 ms' } });
    expect((await refund(id)).status).toBe('PROCESS');
    expect((await balance(t, m.merchantId)).locked).toBe('30.00');
    await due(id);
    await svc.processDue();
    expect(await count(`SELECT count(*)::int AS n FROM attention_items WHERE object_id = $1`, [id])).toBe(1);
  });

  it('resolveAttention FAIL returns the money and the room on the payment; a second decision is 409', async () => {
    const { m, p, id, item } = await stuckRefund('40.00');
    const before = await balance(t, m.merchantId);
    const r = await t.app.services.refunds.lifecycle.resolveAttention(item.id, 'FAIL', 'the acquirer has no such refund', 'op:alice');
    expect(r).toMatchObject({ resolution: 'FAIL', note: 'the acquirer has no such refund', resolved_by: 'op:alice' });
    expect(await one(`SELECT status::text, failure_reason FROM refunds WHERE id = $1`, [id]))
      .toEqual({ status: 'FAIL', failure_reason: 'operator: the acquirer has no such refund' });
    expect(await balance(t, m.merchantId)).toMatchObject({ locked: '0.00', available: (Number(before.available) + 40).toFixed(2) });
    expect(await refundedAmount(t, p.paymentId)).toBe('0.00');
    expect(await postbacks(id)).toBe(1);
    await expect(t.app.services.refunds.lifecycle.resolveAttention(item.id, 'SUCCESS', null, 'op:bob')).rejects.toBeInstanceOf(ConflictError);
    expect(await transfers(id, 'REFUND_DEBIT')).toBe(0);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('resolveAttention SUCCESS debits once; bad outcome 422, unknown item or a payout\'s service 404, nothing changes', async () => {
    const { id, item } = await stuckRefund('20.00');
    const err = await t.app.services.refunds.lifecycle.resolveAttention(item.id, 'succeeded', null, 'op:alice').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    await expect(t.app.services.refunds.lifecycle.resolveAttention('att_none', 'SUCCESS', null, 'op:alice')).rejects.toBeInstanceOf(NotFoundError);
    await expect(t.app.services.payouts.lifecycle.resolveAttention(item.id, 'SUCCESS', null, 'op:alice')).rejects.toBeInstanceOf(NotFoundError);
    expect((await refund(id)).status).toBe('PROCESS');
    await t.app.services.refunds.lifecycle.resolveAttention(item.id, 'SUCCESS', 'seen on the acquirer report', 'op:alice');
    expect((await refund(id)).status).toBe('SUCCESS');
    expect(await transfers(id, 'REFUND_DEBIT')).toBe(1);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });
});

describe('the refund kind\'s apply (what the notifications route calls for object refund)', () => {
  it('a final answer applies once, by id or connector and reference; other connectors, non-final answers and repeats change nothing', async () => {
    const { id } = await refunded('12.00');
    const pending: OperationOutcome = { status: 'pending', ref: 'rf-9' };
    await serviceWith({ refund: async () => pending, get: async () => pending }).processDue();
    expect(await refund(id)).toMatchObject({ status: 'PROCESS', provider_ref: 'rf-9' });
    const refunds = t.app.services.operations.refund;
    expect(await refunds.apply({ id }, pending, { via: 'notification' })).toEqual({ applied: false, status: 'PROCESS', id });
    expect(await refunds.apply({ connector: 'other', ref: 'rf-9' }, { status: 'succeeded', ref: 'rf-9' }, { via: 'notification' })).toEqual({ applied: false, status: null });
    expect(await refunds.apply({ id, connector: 'other' }, { status: 'succeeded', ref: 'rf-9' }, { via: 'notification' })).toEqual({ applied: false, status: 'PROCESS' });
    expect(await refunds.apply({ connector: 'sandbox', ref: 'rf-9' }, { status: 'failed', code: 'refund_declined', message: 'no', ref: 'rf-9' }, { via: 'notification' }))
      .toEqual({ applied: true, status: 'FAIL', id });
    expect(await refunds.apply({ id }, { status: 'succeeded', ref: 'rf-9' }, { via: 'notification' })).toEqual({ applied: false, status: 'FAIL', id });
    expect(await transfers(id, 'REFUND_RELEASE')).toBe(1);
    expect(await transfers(id, 'REFUND_DEBIT')).toBe(0);
    expect(await postbacks(id)).toBe(1);
  });

  it('a late answer closes the open attention item as resolved by the provider', async () => {
    const { id, item } = await stuckRefund('7.00');
    expect(await t.app.services.operations.refund.apply({ id, connector: 'sandbox' }, { status: 'succeeded', ref: 'rf-late' }, { via: 'notification' }))
      .toEqual({ applied: true, status: 'SUCCESS', id });
    expect(await one(`SELECT resolution, resolved_by FROM attention_items WHERE id = $1`, [item.id])).toEqual({ resolution: 'SUCCESS', resolved_by: 'provider' });
  });
});
