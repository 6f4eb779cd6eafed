import { createHmac } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/verify.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import type { CreatePayment, InboundNotification, OperationOutcome, ParsedNotification, PaymentOutcome } from '../../src/domain/providers/connector.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payRequest } from '../factories/payment.js';

/**
 * Inbound notifications `POST /providers/{connector}/notifications` (brief P item 4), with a
 * test provider injected through the registry: it signs its notifications (HMAC of the body)
 * and answers payments with a redirect action, as a provider that hosts its own form would.
 * Its notifications are keyed by the provider's event id (the dedupe key a redelivery repeats),
 * so the same event sent twice and two events with the same news are different cases here.
 */
const SECRET = 'notify-secret';
const sign = (body: string) => createHmac('sha256', SECRET).update(body).digest('hex');

class SigningProvider extends SandboxConnector {
  override async createPayment(r: CreatePayment): Promise<PaymentOutcome> {
    return { status: 'action', action: { type: 'redirect', url: `https://provider.example/pay/${r.paymentId}` }, ref: `prov-${r.paymentId}` };
  }
  override async getPayment(q: { paymentId: string; ref: string | null }): Promise<PaymentOutcome> {
    return { status: 'pending', ref: q.ref ?? '' };
  }
  override async parseNotification(n: InboundNotification): Promise<ParsedNotification> {
    const b = n.body as Record<string, string> | null;
    if (!b || typeof b !== 'object' || typeof b.event_id !== 'string' || typeof b.ref !== 'string') return { ok: false, reason: 'malformed' };
    const { signature, ...rest } = b;
    if (signature !== sign(JSON.stringify(rest))) return { ok: false, reason: 'bad signature' };
    if (b.object === 'refund' || b.object === 'payout') {
      const op: OperationOutcome = b.status === 'succeeded' ? { status: 'succeeded', ref: b.ref } : { status: 'failed', code: 'provider_failed', message: 'failed by the provider', ref: b.ref };
      return { ok: true, eventKey: b.event_id, object: b.object, ref: b.ref, ourId: b.our_id ?? null, outcome: op, reply: { status: 200, body: 'OK' } };
    }
    const outcome: PaymentOutcome = b.status === 'paid'
      ? { status: 'paid', amountReceived: new Decimal(b.amount!), ref: b.ref }
      : b.status === 'declined' ? { status: 'declined', code: 'provider_declined', message: 'declined by the provider', ref: b.ref }
        : { status: 'pending', ref: b.ref };
    return { ok: true, eventKey: b.event_id, object: (b.object as 'payment') ?? 'payment', ref: b.ref, ourId: b.our_id ?? null, outcome, reply: { status: 200, body: 'OK' } };
  }
}

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('prov-sig', 'sandbox', 'test')`);
  t.app.services.connectors.override(new SigningProvider('prov-sig'));
  m = await createMerchant(t, { shop: { resultUrl: 'http://127.0.0.1:9/result', successUrl: 'http://127.0.0.1:9/s', failUrl: 'http://127.0.0.1:9/f' } });
  await t.db.pool.query(`UPDATE merchants SET routing = jsonb_set(routing, '{payment_card}', '["prov-sig"]') WHERE id = $1`, [m.merchantId]);
});
afterAll(async () => { await t.close(); });

const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];
const notify = (fields: Record<string, string>, opts: { forge?: boolean; connector?: string } = {}) => {
  const body = { ...fields, signature: opts.forge ? sign('{}') : sign(JSON.stringify(fields)) };
  return t.app.inject({ method: 'POST', url: `/providers/${opts.connector ?? 'prov-sig'}/notifications`, payload: body });
};
const state = (id: string) => one(`SELECT p.status::text AS p, b.status::text AS b, p.amount_received::text AS got,
    (SELECT count(*)::int FROM ledger_transfers WHERE ref_id = p.id) AS credits, (SELECT count(*)::int FROM outbox_events WHERE aggregate_id = p.id) AS postbacks
  FROM payments p JOIN bills b ON b.id = p.bill_id WHERE p.id = $1`, [id]);

async function openPayment(amount = '100.00') {
  const billId = await createBill(t, m, { amount });
  const r = await payRequest(t, billId, cardForm());
  return r.json() as { payment_id: string; status: string; action: { type: string; url: string } };
}

describe('inbound notifications', () => {
  it('a card routed to the provider answers its redirect action; a verified paid notification is applied once and answered as the provider expects', async () => {
    const p = await openPayment('150.00');
    expect(p).toMatchObject({ status: 'PROCESS', action: { type: 'redirect', url: `https://provider.example/pay/${p.payment_id}` } });
    const r = await notify({ event_id: 'e1', ref: `prov-${p.payment_id}`, our_id: p.payment_id, status: 'paid', amount: '150.00' });
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe('OK');
    expect(await state(p.payment_id)).toEqual({ p: 'SUCCESS', b: 'SUCCESS', got: '150.00', credits: 1, postbacks: 1 });
  });

  it('the same event delivered twice is recorded and applied once, answered OK both times', async () => {
    const p = await openPayment('70.00');
    const ref = `prov-${p.payment_id}`;
    const recorded = async () => (await one(`SELECT count(*)::int AS n FROM provider_notifications WHERE provider_ref = $1`, [ref])).n;
    // Found by the provider reference alone (no our_id).
    expect((await notify({ event_id: 'e2', ref, status: 'paid', amount: '70.00' })).statusCode).toBe(200);
    const applied = await state(p.payment_id);
    expect(applied).toEqual({ p: 'SUCCESS', b: 'SUCCESS', got: '70.00', credits: 1, postbacks: 1 });
    // The provider's redelivery: the same event id, the same body.
    const dup = await notify({ event_id: 'e2', ref, status: 'paid', amount: '70.00' });
    expect(dup.statusCode).toBe(200);
    expect(dup.body).toBe('OK');
    expect(await recorded()).toBe(1);
    expect(await state(p.payment_id)).toEqual(applied);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('another event with the same news is recorded but changes nothing (the state table and the transfer id apply money once); a declined after paid changes nothing', async () => {
    const p = await openPayment('75.00');
    const ref = `prov-${p.payment_id}`;
    expect((await notify({ event_id: 'e2b', ref, status: 'paid', amount: '75.00' })).statusCode).toBe(200);
    const applied = await state(p.payment_id);
    expect(applied).toEqual({ p: 'SUCCESS', b: 'SUCCESS', got: '75.00', credits: 1, postbacks: 1 });
    const again = await notify({ event_id: 'e2b-again', ref, status: 'paid', amount: '75.00' });
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe('OK');
    const late = await notify({ event_id: 'e3', ref, status: 'declined' });
    expect(late.statusCode).toBe(200);
    expect(await state(p.payment_id)).toEqual(applied);
    // Three distinct events recorded, past the dedupe key: the guard that held is the state's.
    expect((await one(`SELECT count(*)::int AS n FROM provider_notifications WHERE provider_ref = $1`, [ref])).n).toBe(3);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a pending notification keeps PROCESS; a declined one then fails it', async () => {
    const p = await openPayment('30.00');
    const ref = `prov-${p.payment_id}`;
    expect((await notify({ event_id: 'e4', ref, status: 'pending' })).statusCode).toBe(200);
    expect((await state(p.payment_id)).p).toBe('PROCESS');
    expect((await notify({ event_id: 'e5', ref, status: 'declined' })).statusCode).toBe(200);
    expect(await state(p.payment_id)).toMatchObject({ p: 'FAIL', b: 'FAIL', credits: 0, postbacks: 1 });
  });

  it('forged, malformed, unknown connector and unknown payment: 4xx and nothing changes (nothing recorded)', async () => {
    const p = await openPayment('20.00');
    const ref = `prov-${p.payment_id}`;
    const before = (await one(`SELECT count(*)::int AS n FROM provider_notifications`)).n;
    const forged = await notify({ event_id: 'f1', ref, status: 'paid', amount: '20.00' }, { forge: true });
    expect(forged.statusCode).toBe(400);
    expect(forged.json()).toMatchObject({ error: 'unverifiable' });
    const malformed = await t.app.inject({ method: 'POST', url: '/providers/prov-sig/notifications', headers: { 'content-type': 'application/json' }, payload: '[1,2' });
    expect(malformed.statusCode).toBeGreaterThanOrEqual(400);
    expect(malformed.statusCode).toBeLessThan(500);
    const notJson = await t.app.inject({ method: 'POST', url: '/providers/prov-sig/notifications', payload: 'just text', headers: { 'content-type': 'text/plain' } });
    expect(notJson.statusCode).toBe(400);
    expect((await notify({ event_id: 'f2', ref, status: 'paid', amount: '20.00' }, { connector: 'no-such' })).statusCode).toBe(404);
    expect((await notify({ event_id: 'f3', ref, status: 'paid', amount: '20.00' }, { connector: 'BAD NAME' })).statusCode).toBe(404);
    // The sandbox sends no notifications: anything claiming to be from it is refused.
    expect((await notify({ event_id: 'f4', ref, status: 'paid', amount: '20.00' }, { connector: 'sandbox' })).statusCode).toBe(400);
    // A verified notification about a payment this connector does not have.
    const stranger = await notify({ event_id: 'f5', ref: 'prov-nothing', our_id: 'nosuchpayment0001', status: 'paid', amount: '20.00' });
    expect(stranger.statusCode).toBe(404);
    expect((await state(p.payment_id)).p).toBe('PROCESS');
    expect((await one(`SELECT count(*)::int AS n FROM provider_notifications`)).n).toBe(before);
  });

  it('a refund notification is applied once through the refund service (SUCCESS, locked -> refund_clearing); an unknown refund is 404 and nothing is recorded', async () => {
    const p = await openPayment('90.00');
    expect((await notify({ event_id: 'p-r', ref: `prov-${p.payment_id}`, our_id: p.payment_id, status: 'paid', amount: '90.00' })).statusCode).toBe(200);
    await t.db.pool.query(`UPDATE merchants SET grant_refunds = true, verified = true WHERE id = $1`, [m.merchantId]);
    const created = await t.app.services.refunds.createFull({ id: m.merchantId, grantRefunds: true }, p.payment_id);
    // Handed to the provider (what the refund worker records before its call), answer not yet heard.
    await t.db.pool.query(`UPDATE refunds SET status = 'PROCESS', connector = 'prov-sig', provider_ref = 'rf-1', sent_at = now() WHERE id = $1`, [created.id]);
    const ok = await notify({ event_id: 'r1', ref: 'rf-1', object: 'refund', status: 'succeeded' });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('OK');
    const refund = async () => one(`SELECT status::text AS s, (SELECT count(*)::int FROM ledger_transfers WHERE ref_id = $1) AS transfers FROM refunds WHERE id = $1`, [created.id]);
    const after = await refund();
    expect(after.s).toBe('SUCCESS');
    // The same event again, another event with the same news and a late contrary answer change nothing.
    expect((await notify({ event_id: 'r1', ref: 'rf-1', object: 'refund', status: 'succeeded' })).statusCode).toBe(200);
    expect((await one(`SELECT count(*)::int AS n FROM provider_notifications WHERE event_key = 'r1'`)).n).toBe(1);
    expect((await notify({ event_id: 'r1-dup', ref: 'rf-1', object: 'refund', status: 'succeeded' })).statusCode).toBe(200);
    expect((await notify({ event_id: 'r1-late', ref: 'rf-1', object: 'refund', status: 'failed' })).statusCode).toBe(200);
    expect(await refund()).toEqual(after);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
    const stranger = await notify({ event_id: 'r2', ref: 'rf-nothing', object: 'payout', status: 'succeeded' });
    expect(stranger.statusCode).toBe(404);
    expect((await one(`SELECT count(*)::int AS n FROM provider_notifications WHERE event_key = 'r2'`)).n).toBe(0);
  });
});
