import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent, paymentSignature, payoutSignature } from '../../src/outbox/events.js';
import { card, fund, payoutMerchant, regular } from '../payout/helpers.js';
import { OutboxDeliverer } from '../../src/outbox/deliverer.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, type BillOptions } from '../factories/payment.js';
import { parsePayInput } from '../../src/domain/payment/pay-input.js';
import { startReceiver, waitFor, type Receiver } from './receiver.js';
import { startWorkers, stopWorkers } from '../../src/workers/index.js';

let t: TestApp;
let m: MerchantFixture;
let other: MerchantFixture;
let rx: Receiver;
let seq = 0;
const log = pino({ level: 'silent' });
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  t = await setupTestApp();
  rx = await startReceiver();
  m = await createMerchant(t, { shop: { resultUrl: `${rx.url}/result` } });
  other = await createMerchant(t, { shop: { resultUrl: `${rx.url}/other` } });
});
afterAll(async () => {
  await rx.close();
  await t.close();
});
beforeEach(async () => {
  await t.db.pool.query(`UPDATE outbox_events SET status = 'DEAD' WHERE status = 'PENDING'`);
  rx.received.length = 0;
  rx.setMode(() => 'ok');
});

const clock = { t: new Date() };
const deliverer = () => new OutboxDeliverer({ config: t.config, db: t.db, services: t.app.services, log }, { now: () => clock.t, random: () => 0.5, timeoutMs: 2000 });
const tick = (ms = 1000) => { clock.t = new Date(Math.max(clock.t.getTime(), Date.now()) + ms); };

async function enqueue(merchantId: string, url: string | null = `${rx.url}/hook`): Promise<string> {
  const trs = `t-${++seq}-${Date.now()}`;
  return withPgTx(t.db.pool, async (c) => {
    await enqueueEvent(c, {
      merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: trs, url,
      fields: { InvId: 'o', OutSum: '10.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: trs, Status: 'SUCCESS', custom: '' },
    });
    return (await c.query('SELECT id::text AS id FROM outbox_events WHERE aggregate_id = $1', [trs])).rows[0].id as string;
  });
}

/** A bill paid by card through the payment service (what the payment page calls). */
async function payNewBill(_t: TestApp, mf: MerchantFixture, bill: BillOptions = {}) {
  const billId = await createBill(t, mf, bill);
  const r = await t.app.services.payments.pay(billId, parsePayInput(cardForm(), null));
  return { billId, paymentId: r.paymentId, status: r.status };
}

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: admin });
const post = (url: string) => t.app.inject({ method: 'POST', url, headers: admin });

describe('payment postback end to end', () => {
  it('a final payment enqueues its postback in the same transaction; the worker posts it to the Result URL, signed', async () => {
    const p = await payNewBill(t, m, { orderId: 'ord-77', custom: 'c1', amount: '250.00' });
    expect(p.status).toBe('SUCCESS');
    const ev = await t.db.pool.query(`SELECT status::text AS status FROM outbox_events WHERE kind = 'PAYMENT_POSTBACK' AND aggregate_id = $1`, [p.paymentId]);
    expect(ev.rows[0].status).toBe('PENDING');
    expect(rx.received).toHaveLength(0); // nothing is sent from the request
    tick();
    await deliverer().runOnce();
    const got = rx.received.find((r) => r.fields.TrsId === p.paymentId)!;
    expect(got.path).toBe('/result');
    expect(got.fields).toMatchObject({ InvId: 'ord-77', Status: 'SUCCESS', custom: 'c1' });
    expect(got.fields.SignatureValue).toBe(paymentSignature({ OutSum: got.fields.OutSum!, InvId: 'ord-77' }, m.token));
  });

  it("the URL is the shop's current Result URL at send time: a fixed URL serves a waiting retry", async () => {
    const p = await payNewBill(t, m, { orderId: 'ord-78' });
    rx.setMode(() => 'fail500');
    tick();
    await deliverer().runOnce();
    await t.db.prisma.shop.update({ where: { id: m.shopId }, data: { resultUrl: `${rx.url}/fixed` } });
    rx.setMode(() => 'ok');
    const e = await t.db.pool.query(`SELECT next_attempt_at FROM outbox_events WHERE aggregate_id = $1`, [p.paymentId]);
    clock.t = e.rows[0].next_attempt_at;
    await deliverer().runOnce();
    expect(rx.received.filter((r) => r.fields.TrsId === p.paymentId).map((r) => r.path)).toEqual(['/result', '/fixed']);
    await t.db.prisma.shop.update({ where: { id: m.shopId }, data: { resultUrl: `${rx.url}/result` } });
  });

  it('a shop whose Result URL was removed: the waiting event is dead with "no URL configured"', async () => {
    const p = await payNewBill(t, m);
    await t.db.prisma.shop.update({ where: { id: m.shopId }, data: { resultUrl: null } });
    tick();
    await deliverer().runOnce();
    await t.db.prisma.shop.update({ where: { id: m.shopId }, data: { resultUrl: `${rx.url}/result` } });
    const r = await get(`/admin/v1/events?merchant_id=${m.merchantId}&status=dead`);
    const ev = r.json().data.find((x: { aggregate_id: string }) => x.aggregate_id === p.paymentId);
    expect(ev).toMatchObject({ status: 'dead', last_error: 'no URL configured', attempts: [] });
    expect(rx.received).toHaveLength(0);
  });
});

describe('the service workers', () => {
  it('startWorkers runs the outbox worker: a paid bill reaches the Result URL without any manual step', async () => {
    const workers = startWorkers({ config: t.config, db: t.db, services: t.app.services, log });
    try {
      const p = await payNewBill(t, m, { orderId: 'auto-1' });
      await waitFor(() => rx.received.some((r) => r.fields.TrsId === p.paymentId), 10_000);
    } finally {
      await stopWorkers(workers);
    }
    const ev = await t.db.pool.query(`SELECT lease_owner FROM outbox_events WHERE lease_owner IS NOT NULL`);
    expect(ev.rows).toHaveLength(0);
  });
});

describe('payout webhook end to end', () => {
  it("a final payout enqueues its webhook; it is posted, signed, to the merchant's CURRENT payout webhook URL", async () => {
    const pm = await payoutMerchant(t, { payoutWebhookUrl: `${rx.url}/payout-old` });
    await fund(t, pm.merchantId, '1000');
    const created = await regular(t, pm, card('100'));
    expect(created.statusCode).toBe(200);
    const payoutId = created.json().data[0].id as string;
    await t.app.services.payouts.processDue();
    const ev = await t.db.pool.query(`SELECT status::text AS status FROM outbox_events WHERE kind = 'PAYOUT_WEBHOOK' AND aggregate_id = $1`, [payoutId]);
    expect(ev.rows[0].status).toBe('PENDING');
    await t.db.prisma.merchant.update({ where: { id: pm.merchantId }, data: { payoutWebhookUrl: `${rx.url}/payout-new` } });
    tick();
    await deliverer().runOnce();
    const got = rx.received.find((r) => r.fields.TrsId === payoutId)!;
    expect(got.path).toBe('/payout-new');
    expect(got.fields).toMatchObject({ Status: 'SUCCESS', IsAuto: 'false', AccountType: 'BANK_CARD' });
    expect(got.fields.Amount).toMatch(/^\d+\.\d{8}$/);
    expect(got.fields.SignatureValue).toBe(payoutSignature({ Amount: got.fields.Amount!, TrsId: payoutId }, pm.token));
  });
});

describe('operator API: events', () => {
  it('lists events by status and merchant, each with its attempts', async () => {
    const a = await enqueue(m.merchantId);
    const b = await enqueue(other.merchantId);
    rx.setMode(() => 'fail500');
    tick();
    await deliverer().runOnce();
    const r = await get(`/admin/v1/events?status=pending&merchant_id=${m.merchantId}`);
    expect(r.statusCode).toBe(200);
    const data = r.json().data as { id: string; merchant_id: string; status: string; attempts: unknown[]; attempt_count: number }[];
    expect(data.map((e) => e.id)).toContain(a);
    expect(data.map((e) => e.id)).not.toContain(b);
    expect(data.every((e) => e.merchant_id === m.merchantId && e.status === 'pending')).toBe(true);
    const ea = data.find((e) => e.id === a)!;
    expect(ea.attempt_count).toBe(1);
    expect(ea.attempts).toEqual([expect.objectContaining({ http_status: 500, response_head: 'Internal Server Error', error: null })]);
    const delivered = await get(`/admin/v1/events?status=delivered&merchant_id=${m.merchantId}`);
    expect(delivered.json().data.map((e: { id: string }) => e.id)).not.toContain(a);
  });

  it('refuses an unknown status filter (422) and answers 401 without the operator token', async () => {
    const r = await get('/admin/v1/events?status=lost');
    expect(r.statusCode).toBe(422);
    expect(r.json().errors.status).toBeDefined();
    const u = await t.app.inject({ method: 'GET', url: '/admin/v1/events' });
    expect(u.statusCode).toBe(401);
  });

  it('redelivers a dead event: back to pending, due now, then delivered', async () => {
    const id = await enqueue(m.merchantId);
    rx.setMode(() => ({ status: 410 }));
    const d = deliverer();
    for (let i = 0; i < 3; i++) { tick(3600_000); await d.runOnce(); }
    expect((await get(`/admin/v1/events/${id}`)).json().status).toBe('dead');
    rx.setMode(() => 'ok');
    const r = await post(`/admin/v1/events/${id}/redeliver`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ id, status: 'pending', attempt_count: 0 });
    expect(r.json().attempts).toHaveLength(3); // history kept
    // The redelivery is in the audit trail, written in its transaction (issue 17).
    const trail = (await get(`/admin/v1/audit?object_id=${id}`)).json().data;
    expect(trail.map((e: Record<string, unknown>) => [e.actor, e.action, e.before])).toEqual([['admin-token', 'event.redeliver', { status: 'dead' }]]);
    tick();
    await d.runOnce();
    const after = (await get(`/admin/v1/events/${id}`)).json();
    expect(after.status).toBe('delivered');
    expect(after.attempts).toHaveLength(4);
  });

  it('redelivers a delivered event (at-least-once: receivers dedupe by TrsId)', async () => {
    const id = await enqueue(m.merchantId);
    tick();
    await deliverer().runOnce();
    expect((await post(`/admin/v1/events/${id}/redeliver`)).json().status).toBe('pending');
    tick();
    await deliverer().runOnce();
    expect(rx.received).toHaveLength(2);
    expect(rx.received[0]!.body).toBe(rx.received[1]!.body);
  });

  it('redeliver or read of an unknown event is 404', async () => {
    expect((await post('/admin/v1/events/999999999/redeliver')).statusCode).toBe(404);
    expect((await post('/admin/v1/events/abc/redeliver')).statusCode).toBe(404);
    expect((await get('/admin/v1/events/999999999')).statusCode).toBe(404);
  });

  it("a merchant (cabinet) cannot see or redeliver another merchant's event", async () => {
    const id = await enqueue(m.merchantId, null);
    await expect(t.app.services.outbox.get(id, other.merchantId)).rejects.toThrow(/Event not found/);
    await expect(t.app.services.outbox.redeliver(id, other.merchantId)).rejects.toThrow(/Event not found/);
    expect((await t.app.services.outbox.get(id, m.merchantId)).status).toBe('dead');
  });

  it("redelivers every dead event of one merchant, and only that merchant's", async () => {
    const mine = [await enqueue(m.merchantId, null), await enqueue(m.merchantId, null)];
    const theirs = await enqueue(other.merchantId, null);
    const r = await post(`/admin/v1/merchants/${m.merchantId}/events/redeliver-dead`);
    expect(r.statusCode).toBe(200);
    expect(r.json().redelivered).toBeGreaterThanOrEqual(2);
    const st = await t.db.pool.query('SELECT id::text AS id, status::text AS status FROM outbox_events WHERE id = ANY($1::bigint[])', [[...mine, theirs]]);
    const by = Object.fromEntries(st.rows.map((x) => [x.id, x.status]));
    expect(by[mine[0]!]).toBe('PENDING');
    expect(by[mine[1]!]).toBe('PENDING');
    expect(by[theirs]).toBe('DEAD');
    expect((await post('/admin/v1/merchants/nope/events/redeliver-dead')).statusCode).toBe(404);
  });
});

describe('test postback', () => {
  it("posts a signed test postback to the shop's Result URL at once and answers the attempt", async () => {
    const r = await post(`/admin/v1/shops/${m.shopId}/test-postback`);
    expect(r.statusCode).toBe(200);
    const b = r.json();
    expect(b.delivered).toBe(true);
    expect(b.attempt).toMatchObject({ http_status: 200, response_head: 'OK' });
    expect(b.event).toMatchObject({ kind: 'TEST_POSTBACK', status: 'delivered' });
    const got = rx.received.at(-1)!;
    expect(got.path).toBe('/result');
    expect(got.fields.SignatureValue).toBe(paymentSignature({ OutSum: got.fields.OutSum!, InvId: got.fields.InvId! }, m.token));
  });

  it('a failing Result URL: answered at once (not delivered), dead, no retries', async () => {
    rx.setMode(() => 'fail500');
    const b = (await post(`/admin/v1/shops/${m.shopId}/test-postback`)).json();
    expect(b.delivered).toBe(false);
    expect(b.attempt).toMatchObject({ http_status: 500 });
    expect(b.event.status).toBe('dead');
  });

  it('unknown shop 404; shop without a Result URL 422; a merchant cannot test another merchant shop', async () => {
    expect((await post('/admin/v1/shops/nope/test-postback')).statusCode).toBe(404);
    const s = await t.app.services.shops.create(m.merchantId, { name: 'no url' });
    const r = await post(`/admin/v1/shops/${s.id}/test-postback`);
    expect(r.statusCode).toBe(422);
    expect(r.json().errors.result_url).toBeDefined();
    await expect(t.app.services.outbox.sendTestPostback(other.merchantId, m.shopId)).rejects.toThrow(/Shop not found/);
  });
});
