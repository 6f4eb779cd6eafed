import { createHmac } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConflictLog } from '../../src/domain/providers/conflict.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import type {
  CreatePayment, CreatePayout, CreateRefund, InboundNotification, OperationOutcome, ParsedNotification, PaymentOutcome,
} from '../../src/domain/providers/connector.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payRequest, SUCCESS_CARD } from '../factories/payment.js';
import { card, fund, regular } from '../payout/helpers.js';
import { refundPartial } from '../refund/helpers.js';
import { enrolledOperator } from '../operator/helpers.js';

/**
 * A provider's word after a final state is never dropped (issue 28 item 2; docs/adr/0021-provider-answer-after-final-state.md): an operator resolves an operation reconciliation gave
 * up on, then the provider's verified notification says the opposite. The status stays, a
 * conflict attention item holds both facts, the money follows the provider through a transfer
 * of its own kind (once, however often the provider repeats itself), the merchant gets a
 * second postback with the provider's status, /metrics counts it, an error line is logged, and
 * the books still balance. Resolving first asks the provider: its answer wins when it has one.
 *
 * The provider is a test connector (kind sandbox, name `prov-cf`) that never answers a creation
 * (a timeout: the outcome is unknown), answers reads as a test sets, and signs its
 * notifications (HMAC of the body); it is reached through the real notification route.
 */
const SECRET = 'conflict-secret';
const sign = (body: string) => createHmac('sha256', SECRET).update(body).digest('hex');
const UNKNOWN = { status: 'unknown', ref: null, reason: 'timeout after 300 ms' } as const;

/** What the provider answers when asked, per object id (unset: it cannot say). */
const says = { payment: new Map<string, PaymentOutcome>(), payout: new Map<string, OperationOutcome>(), refund: new Map<string, OperationOutcome>() };

class ConflictProvider extends SandboxConnector {
  override async createPayment(r: CreatePayment): Promise<PaymentOutcome> {
    // The good card is paid at once (for refunds); any other's answer is lost.
    if (r.card?.number === SUCCESS_CARD) return { status: 'paid', amountReceived: r.amount, ref: `pay-${r.paymentId}` };
    return UNKNOWN;
  }
  override async getPayment(q: { paymentId: string; ref: string | null }): Promise<PaymentOutcome> {
    return says.payment.get(q.paymentId) ?? { status: 'pending', ref: q.ref ?? `pay-${q.paymentId}` };
  }
  override async createPayout(_p: CreatePayout): Promise<OperationOutcome> { return UNKNOWN; }
  override async getPayout(q: { payoutId: string }): Promise<OperationOutcome> { return says.payout.get(q.payoutId) ?? UNKNOWN; }
  override async refund(_r: CreateRefund): Promise<OperationOutcome> { return UNKNOWN; }
  override async getRefund(q: { refundId: string }): Promise<OperationOutcome> { return says.refund.get(q.refundId) ?? UNKNOWN; }
  override async parseNotification(n: InboundNotification): Promise<ParsedNotification> {
    const b = n.body as Record<string, string> | null;
    if (!b || typeof b !== 'object' || typeof b.event_id !== 'string') return { ok: false, reason: 'malformed' };
    const { signature, ...rest } = b;
    if (signature !== sign(JSON.stringify(rest))) return { ok: false, reason: 'bad signature' };
    const ok = b.status === 'succeeded';
    if (b.object === 'payout' || b.object === 'refund') {
      const outcome: OperationOutcome = ok ? { status: 'succeeded', ref: b.ref! } : { status: 'failed', code: 'provider_failed', message: 'failed by the provider', ref: b.ref! };
      return { ok: true, eventKey: b.event_id, object: b.object, ref: b.ref!, ourId: b.our_id!, outcome, reply: { status: 200, body: 'OK' } };
    }
    const outcome: PaymentOutcome = ok
      ? { status: 'paid', amountReceived: new Decimal(b.amount!), ref: b.ref! }
      : { status: 'declined', code: 'provider_declined', message: 'declined by the provider', ref: b.ref! };
    return { ok: true, eventKey: b.event_id, object: 'payment', ref: b.ref!, ourId: b.our_id!, outcome, reply: { status: 200, body: 'OK' } };
  }
}

let t: TestApp;
const logged: Array<{ obj: unknown; msg: string }> = [];
beforeAll(async () => {
  const conflictLog: ConflictLog = { error: ((obj: unknown, msg: string) => { logged.push({ obj, msg }); }) as never };
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '300', SANDBOX_PROCESSING_DELAY_MS: '0' }, { conflictLog });
  await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('prov-cf', 'sandbox', 'test')`);
  t.app.services.connectors.override(new ConflictProvider('prov-cf'));
});
afterAll(async () => { await t?.close(); });

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];
const rows = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows;
const balance = async (merchantId: string) => {
  const b = await one(`SELECT available::text, locked::text, hold::text, debt::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [merchantId]);
  return { available: new Decimal(b.available).toFixed(2), locked: new Decimal(b.locked).toFixed(2), hold: new Decimal(b.hold).toFixed(2), debt: new Decimal(b.debt).toFixed(2) };
};
const transfers = (refId: string) => rows(`SELECT kind::text FROM ledger_transfers WHERE ref_id = $1 ORDER BY created_at, kind`, [refId]).then((r) => r.map((x) => x.kind));
const conflictItems = (objectId: string) => rows(`SELECT * FROM attention_items WHERE object_id = $1 AND kind = 'conflict'`, [objectId]);
const events = (aggregateId: string) => rows(`SELECT kind::text, payload FROM outbox_events WHERE aggregate_id = $1`, [aggregateId]);

let eventNo = 0;
/** The provider's signed notification through the public route; a fresh event id each time (as a provider's retry with a new id). */
async function notify(fields: Record<string, string>) {
  const body = { event_id: `ev-${++eventNo}`, ...fields };
  const r = await t.app.inject({ method: 'POST', url: '/providers/prov-cf/notifications', payload: { ...body, signature: sign(JSON.stringify(body)) } });
  expect(r.statusCode, r.body).toBe(200);
}

async function resolve(itemId: string, outcome: string, note = 'checked') {
  return t.app.inject({ method: 'POST', url: `/admin/v1/attention/${itemId}/resolve`, headers: admin, payload: { outcome, note } });
}

async function booksBalance() {
  const r = await t.app.inject({ method: 'GET', url: '/admin/v1/ledger/verify', headers: admin });
  expect(r.statusCode).toBe(200);
  return r.json();
}

async function conflictsMetric(objectType: string): Promise<number> {
  const r = await t.app.inject({ method: 'GET', url: '/metrics', headers: admin });
  const m = new RegExp(`^payments_provider_conflicts_total\\{object_type="${objectType}"\\} (\\d+)$`, 'm').exec(r.body);
  return m ? Number(m[1]) : NaN;
}

/** A merchant routed to `prov-cf`, with payouts and refunds granted; no payment fee, a fixed payout fee of 5.00. */
async function merchant(): Promise<MerchantFixture> {
  const m = await createMerchant(t, {
    merchant: { verified: true, grantRegularPayouts: true, grantRefunds: true },
    shop: { resultUrl: 'http://127.0.0.1:9/result', successUrl: 'http://127.0.0.1:9/s', failUrl: 'http://127.0.0.1:9/f' },
  });
  const r = await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: {
    fees: { payment_card_percent: '0', payment_card_fixed: '0', payout_card_percent: '0', payout_card_fixed: '5' },
  } });
  expect(r.statusCode, r.body).toBe(200);
  await t.db.pool.query(`UPDATE merchants SET routing = $2::jsonb WHERE id = $1`, [m.merchantId, JSON.stringify({ payment_card: ['prov-cf'], payout_card: ['prov-cf'] })]);
  await t.app.inject({ method: 'PUT', url: `/admin/v1/merchants/${m.merchantId}/payout-webhook`, headers: admin, payload: { url: 'http://127.0.0.1:9/payout-hook' } });
  return m;
}

/** The open attention item of an object (raised by reconciliation or, for payments, as the payment reconciler raises it). */
const itemOf = async (objectId: string) => one(`SELECT * FROM attention_items WHERE object_id = $1 AND kind = 'unknown_outcome'`, [objectId]);

/** Handed to the provider a day and a minute ago, no answer since: reconciliation gives up on it. */
async function pastDeadline(table: 'payouts' | 'refunds', id: string, process: () => Promise<unknown>) {
  await t.db.pool.query(`UPDATE ${table} SET sent_at = now() - interval '24 hours 1 minute', next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);
  await process();
  const item = await itemOf(id);
  expect(item).toBeTruthy();
  return item;
}

async function stuckPayout(m: MerchantFixture, amount: string) {
  const r = await regular(t, m, card(amount));
  expect(r.statusCode, r.body).toBe(200);
  const p = r.json().data[0] as { id: string };
  await t.app.services.payouts.processDue();
  expect(await one(`SELECT status::text, connector FROM payouts WHERE id = $1`, [p.id])).toEqual({ status: 'PROCESS', connector: 'prov-cf' });
  return { id: p.id, item: await pastDeadline('payouts', p.id, () => t.app.services.payouts.processDue()) };
}

async function stuckPayment(m: MerchantFixture, amount: string) {
  const r = await payRequest(t, await createBill(t, m, { amount }), cardForm('4000000000000119'));
  const id = r.json().payment_id as string;
  expect(await one(`SELECT status::text, connector FROM payments WHERE id = $1`, [id])).toEqual({ status: 'PROCESS', connector: 'prov-cf' });
  await t.app.services.attention.raise({
    objectType: 'payment', objectId: id, merchantId: m.merchantId, connector: 'prov-cf', providerRef: null,
    reason: 'reconciliation gave up', lastHeard: UNKNOWN,
  });
  return { id, item: await itemOf(id) };
}

async function stuckRefund(m: MerchantFixture, paid: string, amount: string) {
  const r = await payRequest(t, await createBill(t, m, { amount: paid }), cardForm(SUCCESS_CARD));
  expect(r.json().status).toBe('SUCCESS');
  const paymentId = r.json().payment_id as string;
  const x = await refundPartial(t, m, paymentId, amount);
  expect(x.statusCode, x.body).toBe(200);
  const id = x.json().id as string;
  await t.app.services.refunds.processDue();
  expect(await one(`SELECT status::text FROM refunds WHERE id = $1`, [id])).toEqual({ status: 'PROCESS' });
  return { id, paymentId, item: await pastDeadline('refunds', id, () => t.app.services.refunds.processDue()) };
}

describe('payouts', () => {
  it('an operator resolved FAIL, the provider then says it paid: the payout stays FAIL, the merchant is debited again (below zero), payouts held, a conflict recorded once', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '305');
    const before = await conflictsMetric('payout');
    const { id, item } = await stuckPayout(m, '300');
    const r = await resolve(item.id, 'FAIL', 'the bank has no trace of it');
    expect(r.json()).toMatchObject({ resolution: 'FAIL', resolved_by: 'admin-token', outcome: 'FAIL' });
    expect(await balance(m.merchantId)).toEqual({ available: '305.00', locked: '0.00', hold: '0.00', debt: '0.00' });
    // The merchant pays the same money out again.
    const again = (await regular(t, m, card('300'))).json().data[0] as { id: string };
    expect(await balance(m.merchantId)).toEqual({ available: '0.00', locked: '300.00', hold: '5.00', debt: '0.00' });

    // Its notification, confirmed by a read of the payout (a notification alone may be stale).
    says.payout.set(id, { status: 'succeeded', ref: 'po-1' });
    await notify({ object: 'payout', our_id: id, ref: 'po-1', status: 'succeeded' });
    expect((await one(`SELECT status::text FROM payouts WHERE id = $1`, [id])).status).toBe('FAIL');
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_DEBIT']);
    expect(await balance(m.merchantId)).toEqual({ available: '-305.00', locked: '300.00', hold: '5.00', debt: '305.00' });
    const [c] = await conflictItems(id);
    expect(c).toMatchObject({ object_type: 'payout', merchant_id: m.merchantId, connector: 'prov-cf', reason: 'provider_contradicts_final', resolved_at: null });
    expect(c.last_heard).toMatchObject({
      ours: { status: 'FAIL', set_by: 'admin-token' },
      provider: { status: 'succeeded', ref: 'po-1', via: 'notification+read', at: expect.any(String) },
      money: { transfer: `PAYOUT_CONFLICT_DEBIT:${id}` },
    });
    // The merchant learns the provider's status: a second webhook, SUCCESS.
    expect((await events(`${id}:conflict`)).map((e) => [e.kind, e.payload.fields.Status, e.payload.fields.TrsId])).toEqual([['PAYOUT_WEBHOOK', 'SUCCESS', id]]);
    expect(logged.some((l) => l.msg.includes(id) && l.msg.includes('contradicts'))).toBe(true);
    expect(await conflictsMetric('payout')).toBe(before + 1);

    // The provider repeats itself (another event id): nothing moves twice.
    await notify({ object: 'payout', our_id: id, ref: 'po-1', status: 'succeeded' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_DEBIT']);
    expect(await conflictItems(id)).toHaveLength(1);
    expect(await events(`${id}:conflict`)).toHaveLength(1);
    expect(await conflictsMetric('payout')).toBe(before + 1);

    // Payouts are held while the merchant owes: refused, nothing changes.
    const held = await regular(t, m, card('1'));
    expect(held.json()).toMatchObject({ success: false, message: 'api:error.balance_not_enough' });
    expect(await balance(m.merchantId)).toEqual({ available: '-305.00', locked: '300.00', hold: '5.00', debt: '305.00' });
    // Money coming in covers the debt first; only what is above zero can be paid out.
    await fund(t, m.merchantId, '310');
    expect(await balance(m.merchantId)).toEqual({ available: '5.00', locked: '300.00', hold: '5.00', debt: '0.00' });
    expect((await regular(t, m, card('10'))).json()).toMatchObject({ success: false, message: 'api:error.balance_not_enough' });
    expect(again.id).not.toBe(id);
    expect(await booksBalance()).toMatchObject({ ok: true, problems: [] });
  });

  it('an operator resolved SUCCESS, the provider then says it failed: the payout stays SUCCESS, the amount and fee go back to available', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '50');
    expect((await resolve(item.id, 'SUCCESS')).json()).toMatchObject({ resolution: 'SUCCESS', resolved_by: 'admin-token' });
    expect(await balance(m.merchantId)).toMatchObject({ available: '45.00', locked: '0.00', hold: '0.00' });
    says.payout.set(id, { status: 'failed', code: 'payout_declined', message: 'the bank refused', ref: 'po-2' });
    await notify({ object: 'payout', our_id: id, ref: 'po-2', status: 'failed' });
    expect((await one(`SELECT status::text FROM payouts WHERE id = $1`, [id])).status).toBe('SUCCESS');
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_DEBIT', 'PAYOUT_CONFLICT_CREDIT']);
    expect(await balance(m.merchantId)).toEqual({ available: '100.00', locked: '0.00', hold: '0.00', debt: '0.00' });
    expect((await conflictItems(id))[0].last_heard).toMatchObject({ ours: { status: 'SUCCESS', set_by: 'admin-token' }, provider: { status: 'failed' } });
    expect((await events(`${id}:conflict`)).map((e) => e.payload.fields.Status)).toEqual(['FAIL']);
    await notify({ object: 'payout', our_id: id, ref: 'po-2', status: 'failed' });
    expect(await balance(m.merchantId)).toMatchObject({ available: '100.00' });
    expect(await booksBalance()).toMatchObject({ ok: true });
  });

  it('a contradicting notification is confirmed by a read: an out-of-order one the read does not bear out moves nothing, a borne-out one does', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '30');
    await resolve(item.id, 'FAIL');
    // A stale "succeeded" (say, of an attempt the provider later reversed); the provider's current state is failed.
    says.payout.set(id, { status: 'failed', code: 'payout_declined', message: 'the bank refused', ref: 'po-6' });
    await notify({ object: 'payout', our_id: id, ref: 'po-6', status: 'succeeded' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE']);
    expect(await conflictItems(id)).toEqual([]);
    expect(await balance(m.merchantId)).toMatchObject({ available: '100.00' });
    // When the provider's state does say paid, its next word is heard.
    says.payout.set(id, { status: 'succeeded', ref: 'po-6' });
    await notify({ object: 'payout', our_id: id, ref: 'po-6', status: 'succeeded' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_DEBIT']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '65.00' });
  });

  it('a contradicting notification the read cannot confirm (the provider cannot say): a conflict item for the operator, the money it says left held from available until a read confirms it', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '30');
    await resolve(item.id, 'FAIL');
    says.payout.delete(id);
    await notify({ object: 'payout', our_id: id, ref: 'po-7', status: 'succeeded' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_HOLD']);
    const [c] = await conflictItems(id);
    expect(c.last_heard).toMatchObject({
      ours: { status: 'FAIL' }, provider: { status: 'succeeded', via: 'notification' },
      money: { transfer: null, held: { transfer: `PAYOUT_CONFLICT_HOLD:${id}` } },
    });
    expect(c.provider_ref).toBe('po-7');
    // Held: amount and fee off available, so no other payout can spend them.
    expect(await balance(m.merchantId)).toEqual({ available: '65.00', locked: '30.00', hold: '5.00', debt: '0.00' });
    expect((await regular(t, m, card('61'))).json()).toMatchObject({ success: false, message: 'api:error.balance_not_enough' });
    expect(logged.some((l) => l.msg.includes(id) && l.msg.includes('unconfirmed') && l.msg.includes('PAYOUT_CONFLICT_HOLD'))).toBe(true);
    // The provider can say later: its confirmed word releases the hold and debits the money, once.
    says.payout.set(id, { status: 'succeeded', ref: 'po-7' });
    await notify({ object: 'payout', our_id: id, ref: 'po-7', status: 'succeeded' });
    await notify({ object: 'payout', our_id: id, ref: 'po-7', status: 'succeeded' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_HOLD', 'PAYOUT_CONFLICT_DEBIT', 'PAYOUT_CONFLICT_RELEASE']);
    expect(await balance(m.merchantId)).toEqual({ available: '65.00', locked: '0.00', hold: '0.00', debt: '0.00' });
    const [after] = await conflictItems(id);
    expect(after.last_heard).toMatchObject({
      money: { transfer: `PAYOUT_CONFLICT_DEBIT:${id}`, held: { transfer: `PAYOUT_CONFLICT_HOLD:${id}` }, released: `PAYOUT_CONFLICT_RELEASE:${id}` },
    });
    // Both error lines name the object and carry the facts the item keeps.
    const lines = logged.filter((l) => l.msg.includes(id));
    expect(lines.map((l) => l.msg)).toEqual([
      `provider prov-cf contradicts the final payout ${id}: ours FAIL (set by admin-token), provider succeeded; unconfirmed by a read, money held by PAYOUT_CONFLICT_HOLD`,
      `provider prov-cf confirmed what it said of the final payout ${id}: money moved by PAYOUT_CONFLICT_DEBIT`,
    ]);
    for (const l of lines) {
      expect(l.obj).toMatchObject({ conflict: { object_type: 'payout', object_id: id, merchant_id: m.merchantId, connector: 'prov-cf', ours: { status: 'FAIL' } } });
    }
    expect((lines[1]!.obj as { conflict: unknown }).conflict).toMatchObject({ money: { transfer: `PAYOUT_CONFLICT_DEBIT:${id}` }, provider: { status: 'succeeded', ref: 'po-7' } });
    // Confirmed: the item is closed with SETTLED, as any conflict whose money moved.
    expect((await resolve(after.id, 'FAIL')).statusCode).toBe(422);
    expect((await resolve(after.id, 'SETTLED')).statusCode).toBe(200);
    expect(await booksBalance()).toMatchObject({ ok: true, problems: [] });
  });

  it('an unconfirmed conflict that holds money is resolved FAIL (the provider still cannot say): the hold goes back to available once; the resolution again is 409 and moves nothing', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '30');
    await resolve(item.id, 'FAIL');
    says.payout.delete(id);
    await notify({ object: 'payout', our_id: id, ref: 'po-8', status: 'succeeded' });
    const [c] = await conflictItems(id);
    expect(await balance(m.merchantId)).toMatchObject({ available: '65.00', locked: '30.00', hold: '5.00' });
    // SETTLED does not say what happened to the held money: 422, nothing changes.
    const settled = await resolve(c.id, 'SETTLED');
    expect(settled.statusCode).toBe(422);
    expect(settled.json()).toMatchObject({ success: false });
    const r = await resolve(c.id, 'FAIL', 'the provider\'s statement has no such payout');
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ resolution: 'FAIL', resolved_by: 'admin-token', kind: 'conflict', outcome: 'FAIL' });
    expect(await balance(m.merchantId)).toEqual({ available: '100.00', locked: '0.00', hold: '0.00', debt: '0.00' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_HOLD', 'PAYOUT_CONFLICT_RELEASE']);
    expect((await conflictItems(id))[0].last_heard.money).toMatchObject({ transfer: null, released: `PAYOUT_CONFLICT_RELEASE:${id}` });
    const again = await resolve(c.id, 'FAIL');
    expect(again.statusCode).toBe(409);
    expect((await resolve(c.id, 'SUCCESS')).statusCode).toBe(409);
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_HOLD', 'PAYOUT_CONFLICT_RELEASE']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '100.00', locked: '0.00', hold: '0.00' });
    expect(await booksBalance()).toMatchObject({ ok: true, problems: [] });
  });

  it('an unconfirmed conflict that holds money is resolved SUCCESS: the hold is released and debited as the provider said, once, with the merchant\'s webhook', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '30');
    await resolve(item.id, 'FAIL');
    says.payout.delete(id);
    await notify({ object: 'payout', our_id: id, ref: 'po-9', status: 'succeeded' });
    const [c] = await conflictItems(id);
    const r = await resolve(c.id, 'SUCCESS', 'the card holder confirms the money arrived');
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ resolution: 'SUCCESS', resolved_by: 'admin-token', outcome: 'SUCCESS' });
    expect(await balance(m.merchantId)).toEqual({ available: '65.00', locked: '0.00', hold: '0.00', debt: '0.00' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_HOLD', 'PAYOUT_CONFLICT_DEBIT', 'PAYOUT_CONFLICT_RELEASE']);
    expect((await events(`${id}:conflict`)).map((e) => e.payload.fields.Status)).toEqual(['SUCCESS']);
    expect((await resolve(c.id, 'SUCCESS')).statusCode).toBe(409);
    expect(await transfers(id)).toHaveLength(5);
    expect(await balance(m.merchantId)).toMatchObject({ available: '65.00' });
    expect(await booksBalance()).toMatchObject({ ok: true, problems: [] });
  });

  it('resolving a conflict that holds money asks the provider first, by the reference its notification named: its answer wins over the operator\'s', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '30');
    await resolve(item.id, 'FAIL');
    says.payout.delete(id);
    await notify({ object: 'payout', our_id: id, ref: 'po-10', status: 'succeeded' });
    const [c] = await conflictItems(id);
    says.payout.set(id, { status: 'failed', code: 'payout_declined', message: 'reversed by the bank', ref: 'po-10' });
    const r = await resolve(c.id, 'SUCCESS');
    expect(r.json()).toMatchObject({ resolution: 'FAIL', resolved_by: 'provider', outcome: 'FAIL' });
    expect(r.json().note).toContain('admin-token chose SUCCESS');
    expect(await balance(m.merchantId)).toEqual({ available: '100.00', locked: '0.00', hold: '0.00', debt: '0.00' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_HOLD', 'PAYOUT_CONFLICT_RELEASE']);
  });

  it('a hold larger than available takes it below zero (a debt): every payout is refused until it is resolved', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '60');
    await resolve(item.id, 'FAIL');
    // The merchant pays most of it out again before the provider's word comes.
    expect((await regular(t, m, card('80'))).statusCode).toBe(200);
    says.payout.delete(id);
    await notify({ object: 'payout', our_id: id, ref: 'po-14', status: 'succeeded' });
    expect(await balance(m.merchantId)).toEqual({ available: '-50.00', locked: '140.00', hold: '10.00', debt: '50.00' });
    expect((await regular(t, m, card('1'))).json()).toMatchObject({ success: false, message: 'api:error.balance_not_enough' });
    const [c] = await conflictItems(id);
    expect((await resolve(c.id, 'FAIL')).statusCode).toBe(200);
    expect(await balance(m.merchantId)).toEqual({ available: '15.00', locked: '80.00', hold: '5.00', debt: '0.00' });
    expect(await booksBalance()).toMatchObject({ ok: true, problems: [] });
  });

  it('resolving asks the provider first: when it answers, its answer wins and the response says so', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '40');
    says.payout.set(id, { status: 'succeeded', ref: 'po-3' });
    const r = await resolve(item.id, 'FAIL', 'no trace in the statement');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ success: true, resolved_by: 'provider', outcome: 'SUCCESS', resolution: 'SUCCESS' });
    expect(r.json().note).toContain('admin-token chose FAIL');
    expect((await one(`SELECT status::text, provider_ref FROM payouts WHERE id = $1`, [id]))).toEqual({ status: 'SUCCESS', provider_ref: 'po-3' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_DEBIT']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '55.00', locked: '0.00', hold: '0.00' });
    expect(await conflictItems(id)).toEqual([]);
    // The audit entry names the operator who asked.
    expect(await one(`SELECT actor FROM audit_log WHERE action = 'attention.resolve' AND object_id = $1`, [item.id])).toEqual({ actor: 'admin-token' });
  });

  it('a reconciliation read that finds the payout final already (an operator decided meanwhile) is heard: a conflict', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '20');
    await t.db.pool.query(`UPDATE payouts SET next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const claimed = await t.app.services.payouts.operation.claim(50);
    const mine = claimed.find((p) => p.id === id)!;
    await t.app.services.payouts.operation.release(claimed.filter((p) => p.id !== id).map((p) => p.id));
    // The operator decides FAIL while the worker is asking the provider, which then answers paid.
    expect((await resolve(item.id, 'FAIL')).json()).toMatchObject({ resolution: 'FAIL' });
    says.payout.set(id, { status: 'succeeded', ref: 'po-4' });
    expect((await t.app.services.payouts.lifecycle.run(mine))?.applied === true).toBe(false);
    expect((await one(`SELECT status::text FROM payouts WHERE id = $1`, [id])).status).toBe('FAIL');
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_DEBIT']);
    expect((await conflictItems(id))[0].last_heard).toMatchObject({ provider: { status: 'succeeded', via: 'reconciliation' } });
    expect(await balance(m.merchantId)).toMatchObject({ available: '75.00' });
  });

  it('a final state the provider\'s own answer set (by a notification or by reconciliation), then contradicted: set by the service, and the item keeps the legs the ledger wrote', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const byNotification = await stuckPayout(m, '10');
    says.payout.set(byNotification.id, { status: 'succeeded', ref: 'po-11' });
    await notify({ object: 'payout', our_id: byNotification.id, ref: 'po-11', status: 'succeeded' });
    const byReconciliation = await stuckPayout(m, '20');
    says.payout.set(byReconciliation.id, { status: 'succeeded', ref: 'po-12' });
    await t.db.pool.query(`UPDATE payouts SET next_check_at = now() - interval '1 second' WHERE id = $1`, [byReconciliation.id]);
    await t.app.services.payouts.processDue();
    expect((await one(`SELECT resolved_by FROM attention_items WHERE id = $1`, [byNotification.item.id])).resolved_by).toBe('provider');
    expect((await one(`SELECT resolved_by FROM attention_items WHERE id = $1`, [byReconciliation.item.id])).resolved_by).toBe('reconciliation');
    for (const [x, ref] of [[byNotification, 'po-11'], [byReconciliation, 'po-12']] as const) {
      expect((await one(`SELECT status::text FROM payouts WHERE id = $1`, [x.id])).status).toBe('SUCCESS');
      says.payout.set(x.id, { status: 'failed', code: 'payout_declined', message: 'reversed by the bank', ref });
      await notify({ object: 'payout', our_id: x.id, ref, status: 'failed' });
      const [c] = await conflictItems(x.id);
      expect(c.last_heard.ours).toEqual({ status: 'SUCCESS', set_by: 'service', set_at: null });
      const legs = await rows(`SELECT e.debit_account AS "from", e.credit_account AS "to", round(e.amount, 2)::text AS amount
        FROM ledger_entries e JOIN ledger_transfers lt ON lt.id = e.transfer_id WHERE lt.kind = 'PAYOUT_CONFLICT_CREDIT' AND lt.ref_id = $1 ORDER BY e.leg`, [x.id]);
      expect(legs.length).toBeGreaterThan(0);
      expect(c.last_heard.money).toEqual({ transfer: `PAYOUT_CONFLICT_CREDIT:${x.id}`, legs });
    }
  });

  it('an operator\'s decision is kept with its time on the conflict item', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '15');
    await resolve(item.id, 'FAIL');
    const decided = await one(`SELECT resolved_at FROM attention_items WHERE id = $1`, [item.id]);
    says.payout.set(id, { status: 'succeeded', ref: 'po-13' });
    await notify({ object: 'payout', our_id: id, ref: 'po-13', status: 'succeeded' });
    const [c] = await conflictItems(id);
    expect(c.last_heard.ours).toEqual({ status: 'FAIL', set_by: 'admin-token', set_at: decided.resolved_at.toISOString() });
  });

  it('a conflict item is closed with SETTLED (its money moved already); any other outcome is 422', async () => {
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const { id, item } = await stuckPayout(m, '10');
    await resolve(item.id, 'FAIL');
    says.payout.set(id, { status: 'succeeded', ref: 'po-5' });
    await notify({ object: 'payout', our_id: id, ref: 'po-5', status: 'succeeded' });
    const [c] = await conflictItems(id);
    const list = (await t.app.inject({ method: 'GET', url: '/admin/v1/attention', headers: admin })).json().data as Array<{ id: string; kind: string }>;
    expect(list.find((i) => i.id === c.id)).toMatchObject({ kind: 'conflict', reason: 'provider_contradicts_final' });
    expect((await resolve(c.id, 'FAIL')).statusCode).toBe(422);
    const ok = await resolve(c.id, 'SETTLED', 'the merchant repaid by transfer');
    expect(ok.json()).toMatchObject({ resolution: 'SETTLED', resolved_by: 'admin-token', kind: 'conflict' });
    expect(await transfers(id)).toEqual(['PAYOUT_LOCK', 'PAYOUT_RELEASE', 'PAYOUT_CONFLICT_DEBIT']);
  });
});

describe('refunds', () => {
  it('an operator resolved FAIL, the provider then says it refunded: the refund stays FAIL, the merchant is debited, the payment\'s room shrinks again, once', async () => {
    const m = await merchant();
    const before = await conflictsMetric('refund');
    const { id, paymentId, item } = await stuckRefund(m, '100.00', '30.00');
    await resolve(item.id, 'FAIL');
    expect(await balance(m.merchantId)).toMatchObject({ available: '100.00', locked: '0.00' });
    expect((await one(`SELECT refunded_amount::text FROM payments WHERE id = $1`, [paymentId])).refunded_amount).toBe('0.00');
    says.refund.set(id, { status: 'succeeded', ref: 'rf-1' });
    await notify({ object: 'refund', our_id: id, ref: 'rf-1', status: 'succeeded' });
    await notify({ object: 'refund', our_id: id, ref: 'rf-1', status: 'succeeded' });
    expect((await one(`SELECT status::text FROM refunds WHERE id = $1`, [id])).status).toBe('FAIL');
    expect(await transfers(id)).toEqual(['REFUND_LOCK', 'REFUND_RELEASE', 'REFUND_CONFLICT_DEBIT']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '70.00', locked: '0.00' });
    expect((await one(`SELECT refunded_amount::text FROM payments WHERE id = $1`, [paymentId])).refunded_amount).toBe('30.00');
    expect(await conflictItems(id)).toHaveLength(1);
    expect((await events(`${id}:conflict`)).map((e) => [e.kind, e.payload.fields.Status])).toEqual([['REFUND_POSTBACK', 'SUCCESS']]);
    expect(await conflictsMetric('refund')).toBe(before + 1);
    expect(await booksBalance()).toMatchObject({ ok: true });
  });

  it('an operator resolved SUCCESS, the provider then says it failed: the money goes back to available and the room to the payment', async () => {
    const m = await merchant();
    const { id, paymentId, item } = await stuckRefund(m, '100.00', '40.00');
    await resolve(item.id, 'SUCCESS');
    expect(await balance(m.merchantId)).toMatchObject({ available: '60.00', locked: '0.00' });
    says.refund.set(id, { status: 'failed', code: 'refund_declined', message: 'the acquirer refused', ref: 'rf-2' });
    await notify({ object: 'refund', our_id: id, ref: 'rf-2', status: 'failed' });
    expect((await one(`SELECT status::text FROM refunds WHERE id = $1`, [id])).status).toBe('SUCCESS');
    expect(await transfers(id)).toEqual(['REFUND_LOCK', 'REFUND_DEBIT', 'REFUND_CONFLICT_CREDIT']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '100.00', locked: '0.00' });
    expect((await one(`SELECT refunded_amount::text FROM payments WHERE id = $1`, [paymentId])).refunded_amount).toBe('0.00');
    expect(await booksBalance()).toMatchObject({ ok: true });
  });
  it('an operator resolved FAIL, the provider then says it refunded and no read confirms it: the refund\'s amount is held from available; FAIL gives it back once', async () => {
    const m = await merchant();
    const { id, paymentId, item } = await stuckRefund(m, '100.00', '30.00');
    await resolve(item.id, 'FAIL');
    says.refund.delete(id);
    await notify({ object: 'refund', our_id: id, ref: 'rf-3', status: 'succeeded' });
    expect(await transfers(id)).toEqual(['REFUND_LOCK', 'REFUND_RELEASE', 'REFUND_CONFLICT_HOLD']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '70.00', locked: '30.00' });
    // Nothing can pay the held money out meanwhile.
    expect((await regular(t, m, card('70'))).json()).toMatchObject({ success: false, message: 'api:error.balance_not_enough' });
    const [c] = await conflictItems(id);
    expect(c.last_heard.money).toMatchObject({ transfer: null, held: { transfer: `REFUND_CONFLICT_HOLD:${id}` } });
    expect((await resolve(c.id, 'FAIL')).json()).toMatchObject({ resolution: 'FAIL', outcome: 'FAIL' });
    expect((await resolve(c.id, 'FAIL')).statusCode).toBe(409);
    expect(await transfers(id)).toEqual(['REFUND_LOCK', 'REFUND_RELEASE', 'REFUND_CONFLICT_HOLD', 'REFUND_CONFLICT_RELEASE']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '100.00', locked: '0.00' });
    expect((await one(`SELECT refunded_amount::text FROM payments WHERE id = $1`, [paymentId])).refunded_amount).toBe('0.00');
    expect(await booksBalance()).toMatchObject({ ok: true });
  });

  it('a held refund conflict resolved SUCCESS: released and debited once, the payment\'s refunded total follows, the merchant gets the postback', async () => {
    const m = await merchant();
    const { id, paymentId, item } = await stuckRefund(m, '100.00', '40.00');
    await resolve(item.id, 'FAIL');
    says.refund.delete(id);
    await notify({ object: 'refund', our_id: id, ref: 'rf-4', status: 'succeeded' });
    const [c] = await conflictItems(id);
    expect((await resolve(c.id, 'SUCCESS')).json()).toMatchObject({ resolution: 'SUCCESS', outcome: 'SUCCESS' });
    expect((await resolve(c.id, 'SUCCESS')).statusCode).toBe(409);
    expect(await transfers(id)).toEqual(['REFUND_LOCK', 'REFUND_RELEASE', 'REFUND_CONFLICT_HOLD', 'REFUND_CONFLICT_DEBIT', 'REFUND_CONFLICT_RELEASE']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '60.00', locked: '0.00' });
    expect((await one(`SELECT refunded_amount::text FROM payments WHERE id = $1`, [paymentId])).refunded_amount).toBe('40.00');
    expect((await events(`${id}:conflict`)).map((e) => [e.kind, e.payload.fields.Status])).toEqual([['REFUND_POSTBACK', 'SUCCESS']]);
    expect(await booksBalance()).toMatchObject({ ok: true });
  });
});

describe('payments', () => {
  it('an operator resolved FAIL, the provider then says it charged: the payment stays FAIL, the merchant is credited as the payment would have been, once', async () => {
    const m = await merchant();
    const before = await conflictsMetric('payment');
    const { id, item } = await stuckPayment(m, '88.00');
    expect((await resolve(item.id, 'FAIL')).json()).toMatchObject({ resolution: 'FAIL', resolved_by: 'admin-token' });
    expect(await balance(m.merchantId)).toMatchObject({ available: '0.00' });
    says.payment.set(id, { status: 'paid', amountReceived: new Decimal('88.00'), ref: `pay-${id}` });
    await notify({ object: 'payment', our_id: id, ref: `pay-${id}`, status: 'succeeded', amount: '88.00' });
    await notify({ object: 'payment', our_id: id, ref: `pay-${id}`, status: 'succeeded', amount: '88.00' });
    expect((await one(`SELECT status::text FROM payments WHERE id = $1`, [id])).status).toBe('FAIL');
    expect(await transfers(id)).toEqual(['PAYMENT_CONFLICT_CREDIT']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '88.00' });
    const [c] = await conflictItems(id);
    expect(c.last_heard).toMatchObject({ ours: { status: 'FAIL', set_by: 'admin-token' }, provider: { status: 'succeeded', via: 'notification+read' } });
    expect((await events(`${id}:conflict`)).map((e) => [e.kind, e.payload.fields.Status, e.payload.fields.OutSum])).toEqual([['PAYMENT_POSTBACK', 'SUCCESS', '88.00']]);
    expect(await conflictsMetric('payment')).toBe(before + 1);
    expect(await booksBalance()).toMatchObject({ ok: true });
  });

  it('an operator resolved SUCCESS, the provider then says it declined: the credit is reversed, even below zero', async () => {
    const m = await merchant();
    const { id, item } = await stuckPayment(m, '50.00');
    await resolve(item.id, 'SUCCESS');
    expect(await balance(m.merchantId)).toMatchObject({ available: '50.00' });
    // The merchant pays part of it out before the provider's word comes.
    expect((await regular(t, m, card('20'))).statusCode).toBe(200);
    says.payment.set(id, { status: 'declined', code: 'card_declined', message: 'declined by the bank', ref: `pay-${id}` });
    await notify({ object: 'payment', our_id: id, ref: `pay-${id}`, status: 'declined' });
    expect((await one(`SELECT status::text FROM payments WHERE id = $1`, [id])).status).toBe('SUCCESS');
    expect(await transfers(id)).toEqual(['PAYMENT_CREDIT', 'PAYMENT_CONFLICT_DEBIT']);
    expect(await balance(m.merchantId)).toMatchObject({ available: '-25.00', debt: '25.00' });
    expect((await events(`${id}:conflict`)).map((e) => e.payload.fields.Status)).toEqual(['FAIL']);
    expect(await booksBalance()).toMatchObject({ ok: true });
  });

  it('resolving asks the provider first: a charge it reports wins over the operator\'s FAIL', async () => {
    const m = await merchant();
    const { id, item } = await stuckPayment(m, '33.00');
    says.payment.set(id, { status: 'paid', amountReceived: new Decimal('33.00'), ref: `pay-${id}` });
    const r = await resolve(item.id, 'FAIL');
    expect(r.json()).toMatchObject({ resolved_by: 'provider', outcome: 'SUCCESS' });
    expect((await one(`SELECT status::text FROM payments WHERE id = $1`, [id])).status).toBe('SUCCESS');
    expect(await transfers(id)).toEqual(['PAYMENT_CREDIT']);
    expect(await conflictItems(id)).toEqual([]);
  });
});

describe('the console', () => {
  it('shows a conflict with its badge and SETTLED as its only outcome; a resolve the provider answered says so', async () => {
    const op = await enrolledOperator(t, 'admin');
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const a = await stuckPayout(m, '10');
    says.payout.set(a.id, { status: 'failed', code: 'payout_declined', message: 'the bank refused', ref: 'po-c1' });
    const r = await op.client.act('/operator/attention', `/operator/attention/${a.item.id}/resolve`, { outcome: 'SUCCESS', note: 'looked paid' });
    expect(r.statusCode).toBe(303);
    expect(decodeURIComponent(r.headers.location as string)).toContain(`payout ${a.id} resolved FAIL by the provider's answer`);
    expect((await one(`SELECT status::text FROM payouts WHERE id = $1`, [a.id])).status).toBe('FAIL');

    const b = await stuckPayout(m, '10');
    await resolve(b.item.id, 'FAIL');
    says.payout.set(b.id, { status: 'succeeded', ref: 'po-c2' });
    await notify({ object: 'payout', our_id: b.id, ref: 'po-c2', status: 'succeeded' });
    const [c] = await conflictItems(b.id);
    const page = (await op.client.get('/operator/attention')).body;
    const row = page.slice(page.indexOf(`data-attention="${c.id}"`));
    expect(row.slice(0, row.indexOf('</tr>'))).toMatch(/data-kind="conflict"[\s\S]*data-testid="conflict-badge"[\s\S]*provider_contradicts_final[\s\S]*<option value="SETTLED">/);
    const settled = await op.client.act('/operator/attention', `/operator/attention/${c.id}/resolve`, { outcome: 'SETTLED', note: 'repaid' });
    expect(settled.statusCode).toBe(303);
    expect((await one(`SELECT resolution, resolved_by FROM attention_items WHERE id = $1`, [c.id]))).toEqual({ resolution: 'SETTLED', resolved_by: `operator:${op.id}` });
  });

  it('shows a conflict that holds money as held, with SUCCESS and FAIL as its outcomes; FAIL from the console gives the money back', async () => {
    const op = await enrolledOperator(t, 'admin');
    const m = await merchant();
    await fund(t, m.merchantId, '100');
    const a = await stuckPayout(m, '20');
    await resolve(a.item.id, 'FAIL');
    says.payout.delete(a.id);
    await notify({ object: 'payout', our_id: a.id, ref: 'po-c3', status: 'succeeded' });
    const [c] = await conflictItems(a.id);
    const page = (await op.client.get('/operator/attention')).body;
    const row = page.slice(page.indexOf(`data-attention="${c.id}"`));
    const html = row.slice(0, row.indexOf('</tr>'));
    expect(html).toMatch(/data-kind="conflict"[\s\S]*data-testid="conflict-badge"[\s\S]*data-testid="held-badge"[\s\S]*<option value="SUCCESS">[\s\S]*<option value="FAIL">/);
    expect(html).not.toContain('<option value="SETTLED">');
    expect(await balance(m.merchantId)).toMatchObject({ available: '75.00', locked: '20.00', hold: '5.00' });
    const r = await op.client.act('/operator/attention', `/operator/attention/${c.id}/resolve`, { outcome: 'FAIL', note: 'not in the statement' });
    expect(r.statusCode).toBe(303);
    expect(decodeURIComponent(r.headers.location as string)).toContain(`payout ${a.id} resolved FAIL`);
    expect(await balance(m.merchantId)).toMatchObject({ available: '100.00', locked: '0.00', hold: '0.00' });
  });
});
