import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances, verifyLedger } from '../../src/domain/ledger/verify.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import type { CreatePayment, PaymentOutcome } from '../../src/domain/providers/connector.js';
import { setupTestApp, ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payRequest } from '../factories/payment.js';
import { processDueOperations } from '../../src/workers/operation-worker.js';

/**
 * Brief P items 1, 2 and 5: one idempotent "apply a provider's answer"; the sandbox card table
 * with its memory; reconciliation instead of the blind reaper; the attention list.
 */
let t: TestApp;
let m: MerchantFixture;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SHOP = { resultUrl: 'http://127.0.0.1:9/result', successUrl: 'http://127.0.0.1:9/success', failUrl: 'http://127.0.0.1:9/fail' };

beforeAll(async () => {
  t = await setupTestApp({ RECONCILE_GIVE_UP_MS: '3600000' });
  m = await createMerchant(t, { shop: SHOP });
});
afterAll(async () => { await t.close(); });

const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];
const paymentRow = (id: string) => one(`SELECT status::text, amount_received::text, provider_ref, connector, payer_action, check_attempts, failure_reason FROM payments WHERE id = $1`, [id]);
const balance = async (merchantId: string) => (await one(`SELECT coalesce((SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'), '0') AS a`, [merchantId])).a as string;
const credits = async (id: string) => (await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [id])).n as number;
const postbacks = async (id: string) => (await one(`SELECT count(*)::int AS n FROM outbox_events WHERE aggregate_id = $1`, [id])).n as number;
/** Makes a payment due for reconciliation now. */
const due = (id: string) => t.db.pool.query(`UPDATE payments SET next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);

async function payCard(number: string, amount = '100.00', mm = m) {
  const billId = await createBill(t, mm, { amount });
  const r = await payRequest(t, billId, cardForm(number));
  expect(r.statusCode).toBe(200);
  return { billId, body: r.json(), id: r.json().payment_id as string };
}

describe('applyOutcome: one writer, applied once', () => {
  it('a paid answer finishes a PROCESS payment once: a second application of the same or another final answer changes nothing and is no error', async () => {
    const mm = await createMerchant(t, { shop: SHOP });
    const { id, billId } = await payCard('4000002760003184', '120.00', mm);
    expect((await paymentRow(id)).status).toBe('PROCESS');
    const paid: PaymentOutcome = { status: 'paid', amountReceived: new Decimal('120.00'), ref: 'ext-1' };
    expect(await t.app.services.payments.applyOutcome(id, paid)).toEqual({ applied: true, status: 'SUCCESS' });
    expect(await t.app.services.payments.applyOutcome(id, paid)).toEqual({ applied: false, status: 'SUCCESS' });
    expect(await t.app.services.payments.applyOutcome(id, { status: 'declined', code: 'x', message: 'x', ref: null })).toEqual({ applied: false, status: 'SUCCESS' });
    expect(await paymentRow(id)).toMatchObject({ status: 'SUCCESS', amount_received: '120.00', provider_ref: 'ext-1' });
    expect((await one(`SELECT status::text FROM bills WHERE id = $1`, [billId])).status).toBe('SUCCESS');
    expect(await credits(id)).toBe(1);
    expect(await postbacks(id)).toBe(1);
    expect(await balance(mm.merchantId)).toBe('120.00000000');
  });

  it('concurrent applications of the same answer credit the ledger once', async () => {
    const mm = await createMerchant(t, { shop: SHOP });
    const { id } = await payCard('4000002760003184', '75.00', mm);
    const paid: PaymentOutcome = { status: 'paid', amountReceived: new Decimal('75.00'), ref: 'ext-c' };
    const rs = await Promise.all(Array.from({ length: 8 }, () => t.app.services.payments.applyOutcome(id, paid)));
    expect(rs.filter((r) => r.applied)).toHaveLength(1);
    expect(rs.every((r) => r.status === 'SUCCESS')).toBe(true);
    expect(await credits(id)).toBe(1);
    expect(await balance(mm.merchantId)).toBe('75.00000000');
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it("'action' and 'pending' keep the payment PROCESS with the action and the reference stored; 'unknown' and 'refused' change nothing", async () => {
    const { id } = await payCard('4000002760003184');
    await t.app.services.payments.applyOutcome(id, { status: 'action', action: { type: 'redirect', url: 'https://bank.example/x' }, ref: 'ref-a' });
    expect(await paymentRow(id)).toMatchObject({ status: 'PROCESS', provider_ref: 'ref-a', payer_action: { type: 'redirect', url: 'https://bank.example/x' } });
    await t.app.services.payments.applyOutcome(id, { status: 'pending', ref: 'ref-b' });
    expect(await paymentRow(id)).toMatchObject({ status: 'PROCESS', provider_ref: 'ref-b' });
    await t.app.services.payments.applyOutcome(id, { status: 'unknown', ref: null, reason: 'timeout' });
    await t.app.services.payments.applyOutcome(id, { status: 'refused', code: 'down', message: 'connection refused' });
    expect(await paymentRow(id)).toMatchObject({ status: 'PROCESS', provider_ref: 'ref-b' });
    expect(await credits(id)).toBe(0);
  });
});

describe('sandbox card table (PROVIDERS.md)', () => {
  it('4242 pays at once; 0002 declined; 9995 declined for insufficient funds', async () => {
    expect((await payCard('4242424242424242')).body.status).toBe('SUCCESS');
    const d = await payCard('4000000000000002');
    expect(d.body.status).toBe('FAIL');
    expect(await paymentRow(d.id)).toMatchObject({ failure_reason: 'card_declined' });
    const f = await payCard('4000000000009995');
    expect(f.body.status).toBe('FAIL');
    expect(await paymentRow(f.id)).toMatchObject({ failure_reason: 'insufficient_funds' });
  });

  it('3184 answers a 3ds action to /sandbox/3ds/{payment_id}; the payment stays PROCESS with the action stored', async () => {
    const { id, body } = await payCard('4000002760003184');
    expect(body).toEqual({ payment_id: id, status: 'PROCESS', action: { type: '3ds', url: `/sandbox/3ds/${id}` } });
    expect(await paymentRow(id)).toMatchObject({ status: 'PROCESS', connector: 'sandbox', payer_action: { type: '3ds', url: `/sandbox/3ds/${id}` }, provider_ref: expect.stringMatching(/^sbx_/) });
    expect(await one(`SELECT status FROM sandbox_operations WHERE kind = 'payment' AND our_id = $1`, [id])).toEqual({ status: 'challenge' });
  });

  it('0119: the sandbox charges but its answer is lost: PROCESS, and the sandbox remembers it charged', async () => {
    const { id, body } = await payCard('4000000000000119', '42.00');
    expect(body).toEqual({ payment_id: id, status: 'PROCESS' });
    expect(await one(`SELECT status, amount::text FROM sandbox_operations WHERE kind = 'payment' AND our_id = $1`, [id])).toEqual({ status: 'paid', amount: '42.00' });
    // A fresh connector object (another process, after a restart) gives the same answer.
    const again = await (await t.app.services.connectors.get('sandbox'))!.getPayment({ paymentId: id, ref: null }, { signal: new AbortController().signal });
    expect(again).toMatchObject({ status: 'paid', amountReceived: new Decimal('42.00') });
  });

  it('SBP without the sandbox amount field answers an sbp_qr action whose payload and links lead to /sandbox/sbp/{payment_id}', async () => {
    const billId = await createBill(t, m, { amount: '55.00' });
    const r = await payRequest(t, billId, { method: 'SBP' });
    const id = r.json().payment_id;
    expect(r.json()).toMatchObject({ status: 'PROCESS', action: { type: 'sbp_qr', payload: `http://pay.test/sandbox/sbp/${id}` } });
    expect(r.json().action.links[0]).toEqual({ name: 'Sandbox Bank', url: `/sandbox/sbp/${id}` });
  });
});

describe('reconciliation (replaces the blind reaper)', () => {
  it('the 0119 card ends SUCCESS through reconciliation with the ledger credited once (ledger verify ok)', async () => {
    const mm = await createMerchant(t, { shop: SHOP });
    const { id, billId } = await payCard('4000000000000119', '64.00', mm);
    // Nothing asks before its first check is due.
    await processDueOperations(t.app, 'payment');
    expect((await paymentRow(id)).status).toBe('PROCESS');
    await due(id);
    await processDueOperations(t.app, 'payment');
    expect(await paymentRow(id)).toMatchObject({ status: 'SUCCESS', amount_received: '64.00' });
    expect((await one(`SELECT status::text FROM bills WHERE id = $1`, [billId])).status).toBe('SUCCESS');
    await due(id);
    await processDueOperations(t.app, 'payment');
    expect(await credits(id)).toBe(1);
    expect(await balance(mm.merchantId)).toBe('64.00000000');
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a still-waiting 3DS is asked again later with backoff; abandoned past the sandbox deadline it ends FAIL by the sandbox answer', async () => {
    const { id } = await payCard('4000002760003184');
    await due(id);
    await processDueOperations(t.app, 'payment');
    const after1 = await one(`SELECT status::text, check_attempts, extract(epoch FROM next_check_at - now()) AS wait FROM payments WHERE id = $1`, [id]);
    expect(after1).toMatchObject({ status: 'PROCESS', check_attempts: 1 });
    expect(Number(after1.wait)).toBeGreaterThan(20);
    await due(id);
    await processDueOperations(t.app, 'payment');
    const after2 = await one(`SELECT check_attempts, extract(epoch FROM next_check_at - now()) AS wait FROM payments WHERE id = $1`, [id]);
    expect(after2.check_attempts).toBe(2);
    expect(Number(after2.wait)).toBeGreaterThan(Number(after1.wait));
    // The payer never answered: past the sandbox bank's deadline the sandbox says declined.
    await t.db.pool.query(`UPDATE sandbox_operations SET created_at = now() - interval '1 hour' WHERE our_id = $1`, [id]);
    await due(id);
    await processDueOperations(t.app, 'payment');
    expect(await paymentRow(id)).toMatchObject({ status: 'FAIL', failure_reason: 'challenge_abandoned' });
    expect(await credits(id)).toBe(0);
  });

  it('an operation the provider never answers goes to the attention list past the give-up age; the operator resolves it SUCCESS (audited, credited once)', async () => {
    const mm = await createMerchant(t, { shop: SHOP });
    t.app.services.connectors.override(new class extends SandboxConnector {
      override async createPayment(_r: CreatePayment): Promise<PaymentOutcome> { return { status: 'unknown', ref: 'mute-1', reason: 'timeout' }; }
      override async getPayment(): Promise<PaymentOutcome> { return { status: 'unknown', ref: 'mute-1', reason: 'no answer' }; }
    }('sbx-mute'));
    await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('sbx-mute', 'sandbox', 'test') ON CONFLICT DO NOTHING`);
    await t.db.pool.query(`UPDATE merchants SET routing = jsonb_set(routing, '{payment_card}', '["sbx-mute"]') WHERE id = $1`, [mm.merchantId]);
    const { id } = await payCard('4242424242424242', '88.00', mm);
    await due(id);
    await processDueOperations(t.app, 'payment');
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/attention', headers: admin })).json().data.find((x: { object_id: string }) => x.object_id === id)).toBeUndefined();
    // Past the give-up age still unknown: raised once, with what was last heard. (A payment's
    // creation time is fixed once written, its partition key: the passing hour is played by a
    // worker whose RECONCILE_GIVE_UP_MS has already elapsed.)
    const later = { services: t.app.services, config: { ...t.app.config, reconcileGiveUpMs: 0 } };
    await t.db.pool.query(`UPDATE payments SET next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);
    await processDueOperations(later, 'payment');
    await due(id);
    await processDueOperations(later, 'payment');
    const list = (await t.app.inject({ method: 'GET', url: '/admin/v1/attention', headers: admin })).json().data.filter((x: { object_id: string }) => x.object_id === id);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ object_type: 'payment', merchant_id: mm.merchantId, connector: 'sbx-mute', last_heard: { status: 'unknown', reason: 'no answer' }, resolved_at: null });
    expect((await paymentRow(id)).status).toBe('PROCESS');
    // Bad input: 422 with the field, nothing changes.
    const bad = await t.app.inject({ method: 'POST', url: `/admin/v1/attention/${list[0].id}/resolve`, headers: admin, payload: { outcome: 'MAYBE' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors.outcome).toBeDefined();
    expect((await paymentRow(id)).status).toBe('PROCESS');
    const ok = await t.app.inject({ method: 'POST', url: `/admin/v1/attention/${list[0].id}/resolve`, headers: admin, payload: { outcome: 'SUCCESS', note: 'bank statement shows it' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ resolution: 'SUCCESS', note: 'bank statement shows it', resolved_by: 'admin-token' });
    expect(await paymentRow(id)).toMatchObject({ status: 'SUCCESS', amount_received: '88.00' });
    expect(await balance(mm.merchantId)).toBe('88.00000000');
    expect(await one(`SELECT action, object_id FROM audit_log WHERE action = 'attention.resolve' AND object_id = $1`, [list[0].id])).toEqual({ action: 'attention.resolve', object_id: list[0].id });
    const again = await t.app.inject({ method: 'POST', url: `/admin/v1/attention/${list[0].id}/resolve`, headers: admin, payload: { outcome: 'FAIL' } });
    expect(again.statusCode).toBe(409);
    expect(await credits(id)).toBe(1);
    expect((await t.app.inject({ method: 'GET', url: '/admin/v1/attention', headers: admin })).json().data.filter((x: { object_id: string }) => x.object_id === id)).toEqual([]);
  });
});

describe('CLI verbs', () => {
  it('attention:list|resolve map to the operator routes', async () => {
    const { buildCall } = await import('../../src/admin/cli.js');
    expect(buildCall(['attention:list'])).toEqual({ method: 'GET', path: '/attention' });
    expect(buildCall(['attention:resolve', 'att_x1', '--outcome', 'FAIL', '--note', 'bank says no'])).toEqual({
      method: 'POST', path: '/attention/att_x1/resolve', body: { outcome: 'FAIL', note: 'bank says no' },
    });
    expect(() => buildCall(['attention:resolve', 'att_x1'])).toThrow();
  });
});

describe('the payer\'s first send', () => {
  it('every connector refusing it is our decline, never a provider\'s word: when a notification made the payment SUCCESS meanwhile, the payer gets SUCCESS, no conflict is recorded, nothing moves twice', async () => {
    const mm = await createMerchant(t, { shop: SHOP });
    t.app.services.connectors.override(new class extends SandboxConnector {
      override async createPayment(r: CreatePayment): Promise<PaymentOutcome> {
        // The provider's notification of the payment overtakes the answer to its creation.
        await t.app.services.payments.applyOutcome(r.paymentId, { status: 'paid', amountReceived: r.amount, ref: `late-${r.paymentId}` }, { via: 'notification' });
        return { status: 'refused', code: 'down', message: 'connection refused' };
      }
    }('sbx-refusing'));
    await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('sbx-refusing', 'sandbox', 'test') ON CONFLICT DO NOTHING`);
    await t.db.pool.query(`UPDATE merchants SET routing = jsonb_set(routing, '{payment_card}', '["sbx-refusing"]') WHERE id = $1`, [mm.merchantId]);
    const { id, body } = await payCard('4242424242424242', '70.00', mm);
    expect(body.status).toBe('SUCCESS');
    expect(await paymentRow(id)).toMatchObject({ status: 'SUCCESS', amount_received: '70.00', failure_reason: null });
    expect((await one(`SELECT count(*)::int AS n FROM attention_items WHERE object_id = $1`, [id])).n).toBe(0);
    expect(await credits(id)).toBe(1);
    expect(await postbacks(id)).toBe(1);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });
});
