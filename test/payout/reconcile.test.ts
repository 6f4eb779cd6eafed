import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayoutService } from '../../src/domain/payout/payout.service.js';
import { IDEMPOTENCE_KEY_EXPIRED, type Connector, type CreatePayout, type OperationOutcome } from '../../src/domain/providers/connector.js';
import { ConnectorRegistry } from '../../src/domain/providers/registry.js';
import { RECONCILE_FIRST_DELAY_MS, RECONCILE_MAX_DELAY_MS, reconcileDelayMs } from '../../src/domain/operations/reconcile.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../src/errors.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { balance, booksBalance, card, fund, payoutMerchant, regular, sbp, seedBanks } from './helpers.js';

/**
 * Payouts whose outcome is unknown (PROVIDERS.md "Unknown outcomes are never guessed"): they stay
 * PROCESS with their connector, reconciliation asks that connector and applies its final answer
 * once; past RECONCILE_GIVE_UP_MS they go to the attention list, where the operator decides.
 */
let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '300', SANDBOX_PROCESSING_DELAY_MS: '0' });
  await seedBanks(t);
});
afterAll(async () => { await t.close(); });

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const LOST_CARD = '4000000000000119';
const LOST_PHONE = '+79160000119';
const HOOK = 'http://127.0.0.1:9/payout-hook';

const one = async (sql: string, v: unknown[]) => (await t.db.pool.query(sql, v)).rows[0];
const count = async (sql: string, v: unknown[]) => (await one(sql, v)).n as number;
const run = () => t.app.services.payouts.processDue();
const payout = (id: string) => one(`SELECT status::text, connector, provider_ref, sent_at, check_attempts, next_check_at FROM payouts WHERE id = $1`, [id]);
const due = (id: string) => t.db.pool.query(`UPDATE payouts SET next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);
const webhooks = (id: string) => count(`SELECT count(*)::int AS n FROM outbox_events WHERE kind = 'PAYOUT_WEBHOOK' AND aggregate_id = $1`, [id]);
const debits = (id: string) => count(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYOUT_DEBIT' AND ref_id = $1`, [id]);
const releases = (id: string) => count(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYOUT_RELEASE' AND ref_id = $1`, [id]);

async function merchant() {
  const m = await payoutMerchant(t, { payoutWebhookUrl: HOOK });
  await fund(t, m.merchantId, '1000');
  return m;
}

/** A connector named `name` that answers payouts as told (a stand-in for a provider misbehaving). */
function registryWith(name: string, o: { create?: (p: CreatePayout) => Promise<OperationOutcome>; get?: () => Promise<OperationOutcome> }) {
  const registry = new ConnectorRegistry(t.config, t.db);
  const c = new class extends SandboxConnector {
    override createPayout(p: CreatePayout) { return o.create ? o.create(p) : super.createPayout(p); }
    override getPayout(q: { payoutId: string; ref: string | null }) { return o.get ? o.get() : super.getPayout(q); }
  }(name);
  registry.override(c as Connector);
  return registry;
}

/** A payout handed to a `sandbox` stand-in that answers every creation and question with `answer()`. */
async function handedOver(amount: string, answer: () => OperationOutcome) {
  const m = await merchant();
  const svc = new PayoutService(t.config, t.db, registryWith('sandbox', { create: async () => answer(), get: async () => answer() }));
  const p = (await regular(t, m, card(amount))).json().data[0];
  await svc.processDue();
  return { m, p, svc };
}

describe('the sandbox payout that times out after applying (card or phone ending 0119)', () => {
  it('stays PROCESS with its connector after the lost answer; reconciliation finds it applied: SUCCESS, debited once, one webhook', async () => {
    const m = await merchant();
    const p = (await regular(t, m, card('100', { account_identifier: LOST_CARD }))).json().data[0];
    expect(await run()).toBe(0);
    const after = await payout(p.id);
    expect(after).toMatchObject({ status: 'PROCESS', connector: 'sandbox', provider_ref: null, check_attempts: 1 });
    expect(after.sent_at).not.toBeNull();
    expect(after.next_check_at.getTime()).toBeGreaterThan(Date.now());
    // The sandbox applied it and remembers it.
    expect(await one(`SELECT status, amount::text FROM sandbox_operations WHERE kind = 'payout' AND our_id = $1`, [p.id])).toEqual({ status: 'succeeded', amount: '100.00' });
    expect(await balance(t, m.merchantId)).toEqual({ available: '900.00', locked: '100.00', hold: '0.00' });
    expect(await webhooks(p.id)).toBe(0);
    // Not asked again before its backoff is over.
    expect(await run()).toBe(0);
    expect((await payout(p.id)).status).toBe('PROCESS');
    await due(p.id);
    expect(await run()).toBe(1);
    const done = await payout(p.id);
    expect(done.status).toBe('SUCCESS');
    expect(done.provider_ref).toMatch(/^sbx_/);
    expect(await balance(t, m.merchantId)).toEqual({ available: '900.00', locked: '0.00', hold: '0.00' });
    expect(await debits(p.id)).toBe(1);
    expect(await webhooks(p.id)).toBe(1);
    // A further pass changes nothing; the sandbox applied it once.
    await due(p.id);
    expect(await run()).toBe(0);
    expect(await debits(p.id)).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM sandbox_operations WHERE our_id = $1`, [p.id])).toBe(1);
    expect(await booksBalance(t)).toEqual([]);
  });

  it('an SBP phone ending 0119 is reconciled the same way', async () => {
    const m = await merchant();
    const p = (await regular(t, m, sbp('50', { account_identifier: LOST_PHONE }))).json().data[0];
    await run();
    expect((await payout(p.id)).status).toBe('PROCESS');
    await due(p.id);
    await run();
    expect((await payout(p.id)).status).toBe('SUCCESS');
    expect(await debits(p.id)).toBe(1);
  });

  it('the connector health counts it as an operation with an unknown outcome while it waits', async () => {
    await t.app.inject({ method: 'PUT', url: '/admin/v1/connectors/sbx-lost', headers: admin, payload: { kind: 'sandbox', mode: 'test', settings: {} } });
    const m = await merchant();
    await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing: { payout_card: ['sbx-lost'] } } });
    const p = (await regular(t, m, card('10', { account_identifier: LOST_CARD }))).json().data[0];
    await run();
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/connectors/sbx-lost', headers: admin })).json().unknown_outcomes).toBe(1);
    await due(p.id);
    await run();
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/connectors/sbx-lost', headers: admin })).json().unknown_outcomes).toBe(0);
  });
});

describe('reconciliation asks the connector that has the payout, never another', () => {
  it('a process that died after recording its connector and before the call: the provider has nothing, the payout is sent again under the same id, once', async () => {
    const m = await merchant();
    const p = (await regular(t, m, card('20'))).json().data[0];
    // What a worker killed between `before` (connector on record) and the call leaves behind.
    await t.db.pool.query(`UPDATE payouts SET connector = 'sandbox', sent_at = now() WHERE id = $1`, [p.id]);
    expect(await run()).toBe(1);
    expect((await payout(p.id)).status).toBe('SUCCESS');
    expect(await count(`SELECT count(*)::int AS n FROM sandbox_operations WHERE our_id = $1`, [p.id])).toBe(1);
    expect(await debits(p.id)).toBe(1);
  });

  it('after a timeout at the first connector the second is never tried, even when the first refuses later', async () => {
    await t.app.inject({ method: 'PUT', url: '/admin/v1/connectors/sbx-second', headers: admin, payload: { kind: 'sandbox', mode: 'test', settings: {} } });
    const m = await merchant();
    const registry = registryWith('sbx-hang', {
      create: () => new Promise(() => undefined), // never answers: the call times out (unknown)
      get: async () => ({ status: 'refused', code: 'http_503', message: 'down' }),
    });
    await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('sbx-hang', 'sandbox', 'test') ON CONFLICT DO NOTHING`);
    await t.db.pool.query(`UPDATE merchants SET routing = $2::jsonb WHERE id = $1`, [m.merchantId, JSON.stringify({ payout_card: ['sbx-hang', 'sbx-second'] })]);
    const svc = new PayoutService(t.config, t.db, registry);
    const p = (await regular(t, m, card('30'))).json().data[0];
    expect(await svc.processDue()).toBe(0);
    expect(await payout(p.id)).toMatchObject({ status: 'PROCESS', connector: 'sbx-hang' });
    await due(p.id);
    expect(await svc.processDue()).toBe(0);
    expect(await payout(p.id)).toMatchObject({ status: 'PROCESS', connector: 'sbx-hang', check_attempts: 2 });
    expect(await count(`SELECT count(*)::int AS n FROM sandbox_operations WHERE our_id = $1`, [p.id])).toBe(0);
    expect(await balance(t, m.merchantId)).toEqual({ available: '970.00', locked: '30.00', hold: '0.00' });
  });

  it('a provider still processing (pending) keeps it PROCESS with the provider reference, then its final answer applies', async () => {
    let answer: OperationOutcome = { status: 'pending', ref: 'prov-1' };
    const { m, p, svc } = await handedOver('40', () => answer);
    expect(await payout(p.id)).toMatchObject({ status: 'PROCESS', connector: 'sandbox', provider_ref: 'prov-1' });
    answer = { status: 'failed', code: 'payout_declined', message: 'the bank refused', ref: 'prov-1' };
    await due(p.id);
    expect(await svc.processDue()).toBe(1);
    expect(await one(`SELECT status::text, failure_reason FROM payouts WHERE id = $1`, [p.id])).toEqual({ status: 'FAIL', failure_reason: 'the bank refused' });
    expect(await balance(t, m.merchantId)).toEqual({ available: '1000.00', locked: '0.00', hold: '0.00' });
    expect(await releases(p.id)).toBe(1);
    expect(await webhooks(p.id)).toBe(1);
  });
});

const UNKNOWN: OperationOutcome = { status: 'unknown', ref: null, reason: 'timeout after 300 ms' };

/** A payout whose provider never answers, made past the deadline: on the attention list. */
async function stuckPayout(amount = '60') {
  const { m, p, svc } = await handedOver(amount, () => UNKNOWN);
  // Handed to the provider a day and a minute ago (RECONCILE_GIVE_UP_MS defaults to 24 h).
  await t.db.pool.query(`UPDATE payouts SET sent_at = now() - interval '24 hours 1 minute', next_check_at = now() - interval '1 second' WHERE id = $1`, [p.id]);
  await svc.processDue();
  const item = await one(`SELECT * FROM attention_items WHERE object_type = 'payout' AND object_id = $1`, [p.id]);
  return { m, p, svc, item };
}

describe('a connector that can only be asked by its own reference', () => {
  it('has none yet (refused :no_ref): the creation is repeated under the same key, saying when it was first sent, and its answer applies', async () => {
    const m = await merchant();
    const creates: CreatePayout[] = [];
    const svc = new PayoutService(t.config, t.db, registryWith('sandbox', {
      create: async (q) => { creates.push(q); return creates.length === 1 ? UNKNOWN : { status: 'succeeded', ref: 'again-1' }; },
      get: async () => ({ status: 'refused', code: 'sandbox:no_ref', message: 'nothing to ask by' }),
    }));
    const p = (await regular(t, m, card('12'))).json().data[0];
    await svc.processDue();
    const sent = await payout(p.id);
    expect(sent.status).toBe('PROCESS');
    await due(p.id);
    await svc.processDue();
    expect(await payout(p.id)).toMatchObject({ status: 'SUCCESS', provider_ref: 'again-1' });
    expect(creates.map((q) => q.payoutId)).toEqual([p.id, p.id]);
    expect(creates[1]!.firstSentAt?.getTime()).toBe(sent.sent_at.getTime());
    expect(await debits(p.id)).toBe(1);
  });
});

describe('past the provider deadline: the attention list and the operator decision', () => {
  it('no attention item before the deadline; after it, one item with what was last heard, the payout still PROCESS', async () => {
    const { p } = await handedOver('60', () => UNKNOWN);
    expect(await count(`SELECT count(*)::int AS n FROM attention_items WHERE object_id = $1`, [p.id])).toBe(0);
    const { p: q, item, svc: s2 } = await stuckPayout();
    expect(item).toMatchObject({
      object_type: 'payout', object_id: q.id, connector: 'sandbox', resolved_at: null,
      last_heard: { status: 'unknown', reason: 'timeout after 300 ms' },
    });
    expect(item.id).toMatch(/^att_/);
    expect(item.reason).toMatch(/no final answer from sandbox/);
    expect((await payout(q.id)).status).toBe('PROCESS');
    // Asked again later: still one item.
    await due(q.id);
    await s2.processDue();
    expect(await count(`SELECT count(*)::int AS n FROM attention_items WHERE object_id = $1`, [q.id])).toBe(1);
  });

  it('a provider that no longer keeps the creation\'s idempotency key: on the attention list at once, long before the deadline', async () => {
    const { p } = await handedOver('40', () => ({ status: 'unknown', ref: null, reason: IDEMPOTENCE_KEY_EXPIRED }));
    const item = await one(`SELECT * FROM attention_items WHERE object_type = 'payout' AND object_id = $1`, [p.id]);
    expect(item).toMatchObject({ connector: 'sandbox', resolved_at: null, last_heard: { status: 'unknown', reason: IDEMPOTENCE_KEY_EXPIRED } });
    expect(item.reason).toMatch(/^sandbox no longer knows this creation's idempotency key/);
    expect((await payout(p.id)).status).toBe('PROCESS');
  });

  it('the item keeps what was last heard, as heard: a code and message, a reference, nothing invented', async () => {
    const lastHeardOf = async (answer: OperationOutcome) => {
      const { p, svc } = await handedOver('20', () => answer);
      await t.db.pool.query(`UPDATE payouts SET sent_at = now() - interval '24 hours 1 minute', next_check_at = now() - interval '1 second' WHERE id = $1`, [p.id]);
      await svc.processDue();
      return (await one(`SELECT last_heard FROM attention_items WHERE object_type = 'payout' AND object_id = $1`, [p.id])).last_heard;
    };
    const notFound = await lastHeardOf({ status: 'failed', code: 'not_found', message: 'nothing under that id', ref: null });
    expect(notFound).toEqual({ status: 'failed', code: 'not_found', message: 'nothing under that id', at: expect.any(String) });
    const pending = await lastHeardOf({ status: 'pending', ref: 'prov-5' });
    expect(pending).toEqual({ status: 'pending', ref: 'prov-5', at: expect.any(String) });
  });

  it('a final answer that reconciliation finds after the deadline closes the open item: the provider\'s outcome, decided by reconciliation', async () => {
    let answer: OperationOutcome = UNKNOWN;
    const { m, p, svc } = await handedOver('35', () => answer);
    await t.db.pool.query(`UPDATE payouts SET sent_at = now() - interval '24 hours 1 minute', next_check_at = now() - interval '1 second' WHERE id = $1`, [p.id]);
    await svc.processDue();
    const item = await one(`SELECT id, resolved_at FROM attention_items WHERE object_type = 'payout' AND object_id = $1`, [p.id]);
    expect(item.resolved_at).toBeNull();
    answer = { status: 'failed', code: 'payout_declined', message: 'the bank refused', ref: 'late-2' };
    await due(p.id);
    await svc.processDue();
    expect((await payout(p.id)).status).toBe('FAIL');
    const closed = await one(`SELECT resolution, note, resolved_by, resolved_at FROM attention_items WHERE id = $1`, [item.id]);
    expect(closed).toMatchObject({ resolution: 'FAIL', note: 'the provider answered', resolved_by: 'reconciliation' });
    expect(closed.resolved_at).not.toBeNull();
    expect(await balance(t, m.merchantId)).toEqual({ available: '1000.00', locked: '0.00', hold: '0.00' });
  });

  it('resolveAttention SUCCESS: the payout SUCCESS through the ledger once, the item closed with the note and the operator', async () => {
    const { m, p, item } = await stuckPayout('70');
    const r = await t.app.services.payouts.lifecycle.resolveAttention(item.id, 'SUCCESS', 'confirmed by the bank statement', 'op:alice');
    expect(r).toMatchObject({ id: item.id, resolution: 'SUCCESS', note: 'confirmed by the bank statement', resolved_by: 'op:alice' });
    expect(r.resolved_at).not.toBeNull();
    expect((await payout(p.id)).status).toBe('SUCCESS');
    expect(await debits(p.id)).toBe(1);
    expect(await webhooks(p.id)).toBe(1);
    expect(await balance(t, m.merchantId)).toEqual({ available: '930.00', locked: '0.00', hold: '0.00' });
    // Resolved once: a second decision is 409 and changes nothing.
    await expect(t.app.services.payouts.lifecycle.resolveAttention(item.id, 'FAIL', 'oops', 'op:bob')).rejects.toBeInstanceOf(ConflictError);
    expect((await payout(p.id)).status).toBe('SUCCESS');
    expect(await releases(p.id)).toBe(0);
    expect(await booksBalance(t)).toEqual([]);
  });

  it('resolveAttention FAIL returns the money; a bad outcome is 422 on outcome and an unknown item 404, changing nothing', async () => {
    const { m, p, item } = await stuckPayout('80');
    const err = await t.app.services.payouts.lifecycle.resolveAttention(item.id, 'MAYBE', null, 'op:alice').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(Object.keys((err as ValidationError).errors)).toEqual(['outcome']);
    await expect(t.app.services.payouts.lifecycle.resolveAttention('att_nope', 'FAIL', null, 'op:alice')).rejects.toBeInstanceOf(NotFoundError);
    // A payout item is not a refund's.
    await expect(t.app.services.refunds.lifecycle.resolveAttention(item.id, 'FAIL', null, 'op:alice')).rejects.toBeInstanceOf(NotFoundError);
    expect((await payout(p.id)).status).toBe('PROCESS');
    expect((await one(`SELECT resolved_at FROM attention_items WHERE id = $1`, [item.id])).resolved_at).toBeNull();
    await t.app.services.payouts.lifecycle.resolveAttention(item.id, 'FAIL', 'the bank has no trace of it', 'op:alice');
    expect((await payout(p.id)).status).toBe('FAIL');
    expect(await balance(t, m.merchantId)).toEqual({ available: '1000.00', locked: '0.00', hold: '0.00' });
    expect(await releases(p.id)).toBe(1);
    expect(await booksBalance(t)).toEqual([]);
  });
});

describe('the payout kind\'s apply (what the notifications route calls for object payout)', () => {
  it('applies a final answer once, by our id or by connector and reference; another connector, a non-final answer or a repeat change nothing', async () => {
    const { m, p } = await handedOver('25', () => ({ status: 'pending', ref: 'prov-77' }));
    const payouts = t.app.services.operations.payout;
    expect(await payouts.apply({ id: p.id }, { status: 'pending', ref: 'prov-77' }, { via: 'notification' })).toEqual({ applied: false, status: 'PROCESS', id: p.id });
    expect(await payouts.apply({ connector: 'other', ref: 'prov-77' }, { status: 'succeeded', ref: 'prov-77' }, { via: 'notification' })).toEqual({ applied: false, status: null });
    expect(await payouts.apply({ id: p.id, connector: 'other' }, { status: 'succeeded', ref: 'prov-77' }, { via: 'notification' })).toEqual({ applied: false, status: 'PROCESS' });
    expect(await payouts.apply({ connector: 'sandbox', ref: 'prov-77' }, { status: 'failed', code: 'not_found', message: 'x', ref: null }, { via: 'notification' }))
      .toEqual({ applied: false, status: 'PROCESS', id: p.id });
    expect((await payout(p.id)).status).toBe('PROCESS');
    expect(await payouts.apply({ connector: 'sandbox', ref: 'prov-77' }, { status: 'succeeded', ref: 'prov-77' }, { via: 'notification' })).toEqual({ applied: true, status: 'SUCCESS', id: p.id });
    expect(await payouts.apply({ id: p.id }, { status: 'succeeded', ref: 'prov-77' }, { via: 'notification' })).toEqual({ applied: false, status: 'SUCCESS', id: p.id });
    expect(await payouts.apply({ id: p.id }, { status: 'failed', code: 'x', message: 'late contradiction', ref: 'prov-77' }, { via: 'notification' }))
      .toEqual({ applied: false, status: 'SUCCESS', id: p.id });
    expect(await payouts.apply({ id: 'nope' }, { status: 'succeeded', ref: null }, { via: 'notification' })).toEqual({ applied: false, status: null });
    expect(await debits(p.id)).toBe(1);
    expect(await releases(p.id)).toBe(0);
    expect(await webhooks(p.id)).toBe(1);
    expect(await balance(t, m.merchantId)).toEqual({ available: '975.00', locked: '0.00', hold: '0.00' });
  });

  it('a late answer from the provider closes the open attention item (resolved by the provider)', async () => {
    const { p, item } = await stuckPayout('15');
    expect(await t.app.services.operations.payout.apply({ id: p.id, connector: 'sandbox' }, { status: 'succeeded', ref: 'late-1' }, { via: 'notification' }))
      .toEqual({ applied: true, status: 'SUCCESS', id: p.id });
    expect(await one(`SELECT resolution, note, resolved_by FROM attention_items WHERE id = $1`, [item.id]))
      .toEqual({ resolution: 'SUCCESS', note: 'the provider answered', resolved_by: 'provider' });
    await expect(t.app.services.payouts.lifecycle.resolveAttention(item.id, 'FAIL', null, 'op:alice')).rejects.toBeInstanceOf(ConflictError);
  });
});

describe('reconciliation backoff', () => {
  it('starts at 5 s, doubles per question, stops growing at an hour, with at most 20% jitter', () => {
    const within = (ms: number, base: number) => ms >= base && ms <= base * 1.2;
    for (let i = 0; i < 50; i += 1) {
      expect(within(reconcileDelayMs(0), RECONCILE_FIRST_DELAY_MS)).toBe(true);
      expect(within(reconcileDelayMs(3), RECONCILE_FIRST_DELAY_MS * 8)).toBe(true);
      expect(within(reconcileDelayMs(20), RECONCILE_MAX_DELAY_MS)).toBe(true);
      expect(within(reconcileDelayMs(10_000), RECONCILE_MAX_DELAY_MS)).toBe(true);
    }
  });

  it('each unanswered question pushes the next one further out', async () => {
    const { p, svc } = await handedOver('5', () => UNKNOWN);
    const waits: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      if (i > 0) { await due(p.id); await svc.processDue(); }
      const r = await one(`SELECT extract(epoch FROM next_check_at - now()) * 1000 AS ms, check_attempts FROM payouts WHERE id = $1`, [p.id]);
      expect(r.check_attempts).toBe(i + 1);
      waits.push(Number(r.ms));
    }
    expect(waits[0]).toBeGreaterThan(RECONCILE_FIRST_DELAY_MS * 0.8);
    expect(waits[1]).toBeGreaterThan(RECONCILE_FIRST_DELAY_MS * 1.8);
    expect(waits[2]).toBeGreaterThan(RECONCILE_FIRST_DELAY_MS * 3.6);
    expect((await payout(p.id)).status).toBe('PROCESS');
  });
});
