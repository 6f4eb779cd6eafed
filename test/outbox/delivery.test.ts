import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import pino from 'pino';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent, NO_URL, NonFinalEventError, paymentSignature, payoutSignature, type PaymentPostbackFields, type PayoutWebhookFields } from '../../src/outbox/events.js';
import { OutboxDeliverer, type OutboxWorkerOptions } from '../../src/outbox/deliverer.js';
import { startOutboxWorker } from '../../src/workers/outbox.js';
import { MAX_ATTEMPTS, REFUSED_MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/lib/delivery-retry.js';
import type { OutboxEventKind } from '../../src/generated/prisma/enums.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { startReceiver, type Receiver } from './receiver.js';
import { waitFor } from '../helpers/wait.js';

let t: TestApp;
let m: MerchantFixture;
let rx: Receiver;
let seq = 0;
const log = pino({ level: 'silent' });

beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
  await t.close();
});
beforeEach(async () => {
  // Each test sees only its own events as due.
  await t.db.pool.query(`UPDATE outbox_events SET status = 'DEAD' WHERE status = 'PENDING'`);
  rx.received.length = 0;
  rx.setMode(() => 'ok');
});

const paymentFields = (over: Partial<PaymentPostbackFields> = {}): PaymentPostbackFields => ({
  InvId: 'order-1', OutSum: '1500.00', Commission: '45.00', Currency: 'RUB', CurrencyIn: 'RUB',
  TrsId: `pay-${++seq}`, Status: 'SUCCESS', custom: 'a b&c=d/é', ...over,
});

const payoutFields = (over: Partial<PayoutWebhookFields> = {}): PayoutWebhookFields => ({
  TrsId: `po-${++seq}`, Amount: '1000.00000000', IsAuto: 'false', Status: 'SUCCESS', Currency: 'RUB', Commission: '20.00000000',
  AccountType: 'BANK_CARD', AccountNumber: '424242******4242', BalanceAmount: '1020.00000000', BalanceCommission: '20.00000000',
  BalanceCurrency: 'RUB', CommissionApplyType: 'sender', ...over,
});

async function enqueue(kind: OutboxEventKind, fields: Record<string, string>, url: string | null = `${rx.url}/hook`, merchantId = m.merchantId): Promise<string> {
  return withPgTx(t.db.pool, async (c) => {
    await enqueueEvent(c, { merchantId, kind, aggregateId: fields.TrsId!, url, fields });
    const r = await c.query('SELECT id::text AS id FROM outbox_events WHERE kind = $1 AND aggregate_id = $2', [kind, fields.TrsId]);
    return r.rows[0].id as string;
  });
}

async function event(id: string) {
  const r = await t.db.pool.query('SELECT status::text AS status, attempts, next_attempt_at, last_error, lease_owner, delivered_at FROM outbox_events WHERE id = $1', [id]);
  return r.rows[0] as { status: string; attempts: number; next_attempt_at: Date; last_error: string | null; lease_owner: string | null; delivered_at: Date | null };
}

async function attempts(id: string) {
  const r = await t.db.pool.query('SELECT http_status, latency_ms, error, response_head FROM delivery_attempts WHERE event_id = $1 ORDER BY id', [id]);
  return r.rows as { http_status: number | null; latency_ms: number; error: string | null; response_head: string | null }[];
}

/** A deliverer on a controllable clock (starts a second ahead so fresh events are due). */
function deliverer(opts: OutboxWorkerOptions = {}) {
  const clock = { t: new Date(Date.now() + 1000) };
  const d = new OutboxDeliverer({ config: t.config, db: t.db, services: t.app.services, log }, { now: () => clock.t, random: () => 0.5, timeoutMs: 2000, ...opts });
  return { d, clock };
}

describe('outbox delivery: format and signature', () => {
  it('posts a payment postback urlencoded, fields in spec order, signed MD5(OutSum:InvId:token) byte for byte', async () => {
    const f = paymentFields();
    const id = await enqueue('PAYMENT_POSTBACK', f as never);
    const { d } = deliverer();
    const r = await d.runOnce();
    expect(r.delivered).toBe(1);
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;
    expect(got.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(got.path).toBe('/hook');
    const sig = paymentSignature(f, m.token);
    expect(sig).toMatch(/^[0-9A-F]{32}$/);
    expect(got.body).toBe(
      `InvId=order-1&OutSum=1500.00&Commission=45.00&Currency=RUB&CurrencyIn=RUB&TrsId=${f.TrsId}&Status=SUCCESS` +
      `&custom=a+b%26c%3Dd%2F%C3%A9&SignatureValue=${sig}`,
    );
    expect(got.fields.custom).toBe('a b&c=d/é');
    expect((await event(id)).status).toBe('DELIVERED');
  });

  it('posts a payout webhook with every spec field, signed MD5(Amount:TrsId:token)', async () => {
    const f = payoutFields();
    await enqueue('PAYOUT_WEBHOOK', f as never);
    const { d } = deliverer();
    await d.runOnce();
    const got = rx.received[0]!;
    expect(Object.keys(got.fields)).toEqual([
      'TrsId', 'Amount', 'IsAuto', 'Status', 'Currency', 'Commission', 'AccountType', 'AccountNumber',
      'BalanceAmount', 'BalanceCommission', 'BalanceCurrency', 'CommissionApplyType', 'SignatureValue',
    ]);
    expect(got.fields.Amount).toBe('1000.00000000');
    expect(got.fields.SignatureValue).toBe(payoutSignature(f, m.token));
  });

  it('signs at send time with the merchant CURRENT token (a refresh after enqueue is honoured)', async () => {
    const f = paymentFields();
    await enqueue('PAYMENT_POSTBACK', f as never);
    const newToken = await t.app.services.merchants.refreshToken(m.merchantId);
    m.token = newToken;
    const { d } = deliverer();
    await d.runOnce();
    expect(rx.received[0]!.fields.SignatureValue).toBe(paymentSignature(f, newToken));
  });

  it('any 2xx is delivered, whatever the reply says (204, "YES")', async () => {
    const a = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, `${rx.url}/a`);
    const b = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, `${rx.url}/b`);
    rx.setMode((r) => (r.path === '/a' ? { status: 204 } : { status: 200, body: 'YES' }));
    const { d } = deliverer();
    await d.runOnce();
    expect((await event(a)).status).toBe('DELIVERED');
    expect((await event(b)).status).toBe('DELIVERED');
    expect((await attempts(b))[0]).toMatchObject({ http_status: 200, response_head: 'YES', error: null });
  });

  it('an event with no URL configured is kept DEAD with the reason, never attempted', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, null);
    expect(await event(id)).toMatchObject({ status: 'DEAD', last_error: NO_URL, attempts: 0 });
    const { d } = deliverer();
    expect((await d.runOnce()).claimed).toBe(0);
    expect(rx.received).toHaveLength(0);
  });

  it('reads at most a small cap of the reply and keeps only its first bytes', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    rx.setMode(() => ({ status: 200, body: 'x'.repeat(2_000_000) }));
    const { d } = deliverer();
    await d.runOnce();
    expect((await event(id)).status).toBe('DELIVERED');
    const a = (await attempts(id))[0]!;
    expect(a.response_head!.length).toBeLessThanOrEqual(256);
  });

  it('does not follow redirects: a 302 is an answer (the Location is never requested)', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, `${rx.url}/moved`);
    rx.setMode((r) => (r.path === '/moved' ? { status: 302, headers: { location: `${rx.url}/elsewhere` } } : 'ok'));
    const { d } = deliverer();
    await d.runOnce();
    expect(rx.received.map((r) => r.path)).toEqual(['/moved']);
    expect(await event(id)).toMatchObject({ status: 'PENDING', attempts: 1, last_error: 'HTTP 302' });
  });
});

describe('outbox delivery: retries', () => {
  it('a 5xx is retried after the first backoff delay, and the attempt is recorded (status, latency, reply)', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    rx.setMode(() => 'fail500');
    const { d, clock } = deliverer();
    await d.runOnce();
    const e = await event(id);
    expect(e).toMatchObject({ status: 'PENDING', attempts: 1, last_error: 'HTTP 500', lease_owner: null });
    expect(e.next_attempt_at.getTime() - clock.t.getTime()).toBe(RETRY_DELAYS_MS[0]);
    const a = await attempts(id);
    expect(a).toHaveLength(1);
    expect(a[0]).toMatchObject({ http_status: 500, response_head: 'Internal Server Error', error: null });
    expect(a[0]!.latency_ms).toBeGreaterThanOrEqual(0);
    // Not due a moment before its time; due at it.
    clock.t = new Date(e.next_attempt_at.getTime() - 1000);
    expect((await d.runOnce()).claimed).toBe(0);
    rx.setMode(() => 'ok');
    clock.t = e.next_attempt_at;
    expect((await d.runOnce()).delivered).toBe(1);
    expect(await event(id)).toMatchObject({ status: 'DELIVERED', attempts: 2 });
  });

  it('408 and 429 are retried like 5xx', async () => {
    const a = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, `${rx.url}/408`);
    const b = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, `${rx.url}/429`);
    rx.setMode((r) => ({ status: Number(r.path.slice(1)) }));
    const { d } = deliverer();
    await d.runOnce();
    expect(await event(a)).toMatchObject({ status: 'PENDING', last_error: 'HTTP 408' });
    expect(await event(b)).toMatchObject({ status: 'PENDING', last_error: 'HTTP 429' });
  });

  it('follows the exponential schedule (about 24 h in all) and is dead after the last attempt', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    rx.setMode(() => 'fail500');
    const { d, clock } = deliverer();
    const start = clock.t.getTime();
    const gaps: number[] = [];
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const before = await event(id);
      if (i > 0) {
        gaps.push(before.next_attempt_at.getTime() - clock.t.getTime());
        clock.t = before.next_attempt_at;
      }
      expect((await d.runOnce()).claimed).toBe(1);
    }
    expect(gaps).toEqual(RETRY_DELAYS_MS);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]!).toBeGreaterThanOrEqual(gaps[i - 1]!);
    const span = clock.t.getTime() - start;
    expect(span).toBeGreaterThan(22 * 3600_000);
    expect(span).toBeLessThan(26 * 3600_000);
    expect(await event(id)).toMatchObject({ status: 'DEAD', attempts: MAX_ATTEMPTS });
    expect(await attempts(id)).toHaveLength(MAX_ATTEMPTS);
    clock.t = new Date(clock.t.getTime() + 48 * 3600_000);
    expect((await d.runOnce()).claimed).toBe(0);
    expect(rx.received).toHaveLength(MAX_ATTEMPTS);
  });

  it('jitter spreads retries within +-20% of the delay', async () => {
    const lo = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    rx.setMode(() => 'fail500');
    const { d: d0, clock } = deliverer({ random: () => 0 });
    await d0.runOnce();
    const hi = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    const d1 = new OutboxDeliverer({ config: t.config, db: t.db, services: t.app.services, log }, { now: () => clock.t, random: () => 0.999999 });
    await d1.runOnce();
    expect((await event(lo)).next_attempt_at.getTime() - clock.t.getTime()).toBe(RETRY_DELAYS_MS[0]! * 0.8);
    expect((await event(hi)).next_attempt_at.getTime() - clock.t.getTime()).toBe(Math.round(RETRY_DELAYS_MS[0]! * 1.2));
  });

  it('a timeout is a failed attempt, retried', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    rx.setMode(() => 'timeout');
    const { d } = deliverer({ timeoutMs: 300 });
    const t0 = Date.now();
    await d.runOnce();
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await event(id)).toMatchObject({ status: 'PENDING', attempts: 1 });
    const a = (await attempts(id))[0]!;
    expect(a).toMatchObject({ http_status: null, error: 'timeout after 300 ms' });
    expect(a.latency_ms).toBeGreaterThanOrEqual(290);
  });

  it('a dropped connection is a failed attempt, retried', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    rx.setMode(() => 'drop');
    const { d } = deliverer();
    await d.runOnce();
    expect(await event(id)).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect((await attempts(id))[0]!.error).toMatch(/ECONNRESET|socket hang up/);
  });

  it('a refused connection (nothing listening) is retried', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, 'http://127.0.0.1:1/hook');
    const { d } = deliverer();
    await d.runOnce();
    expect(await event(id)).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect((await attempts(id))[0]!.error).toMatch(/ECONNREFUSED/);
  });

  it(`another 4xx (the receiver refuses) is tried ${REFUSED_MAX_ATTEMPTS} times only, then dead`, async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    rx.setMode(() => ({ status: 404, body: 'Not Found' }));
    const { d, clock } = deliverer();
    for (let i = 0; i < REFUSED_MAX_ATTEMPTS; i++) {
      if (i > 0) clock.t = (await event(id)).next_attempt_at;
      expect((await d.runOnce()).claimed).toBe(1);
    }
    expect(await event(id)).toMatchObject({ status: 'DEAD', attempts: REFUSED_MAX_ATTEMPTS, last_error: 'HTTP 404' });
  });
});

describe('outbox delivery: URL guard at send time', () => {
  it('refuses a loopback URL when private URLs are not allowed: nothing is sent', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    const { d } = deliverer({ allowPrivate: false });
    await d.runOnce();
    expect(rx.received).toHaveLength(0);
    expect((await event(id)).last_error).toMatch(/unsafe URL/);
    expect((await attempts(id))[0]!.error).toMatch(/private or loopback/);
  });

  it('refuses a host name that resolves to a loopback address (checked on the address connected to)', async () => {
    // The machine's own host name resolves (hosts file) to a loopback or private address.
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, `http://${hostname()}:${rx.port}/hook`);
    const { d } = deliverer({ allowPrivate: false });
    await d.runOnce();
    expect(rx.received).toHaveLength(0);
    expect((await attempts(id))[0]!.error).toMatch(/resolves to a private or loopback address/);
    // Allowed when private URLs are allowed (sandbox profile).
    await t.db.pool.query(`UPDATE outbox_events SET next_attempt_at = now() - interval '1 second' WHERE id = $1`, [id]);
    await deliverer({ allowPrivate: true }).d.runOnce();
    expect(rx.received).toHaveLength(1);
  });

  it('a URL that is not http(s) is dead at once', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never, 'ftp://example.com/x');
    const { d } = deliverer();
    await d.runOnce();
    expect(await event(id)).toMatchObject({ status: 'DEAD' });
    expect((await event(id)).last_error).toMatch(/http or https/);
  });
});

describe('outbox delivery: leases', () => {
  it('concurrent claims never hand one event to two workers', async () => {
    for (let i = 0; i < 60; i++) await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    const ds = Array.from({ length: 6 }, (_, i) => deliverer({ workerId: `w${i}` }).d);
    // Concurrent claims may pick the same candidates, and SKIP LOCKED leaves the loser with fewer
    // (it finds them next poll), so rounds of twelve concurrent claims run until all are taken.
    const ids: string[] = [];
    for (let round = 0; round < 20 && ids.length < 60; round++) {
      const claims = await Promise.all(ds.flatMap((d) => [d.claim(15), d.claim(15)]));
      ids.push(...claims.flat().map((e) => e.id));
    }
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
  });

  it('only the lease owner can finish an event; an expired lease is taken over', async () => {
    const id = await enqueue('PAYMENT_POSTBACK', paymentFields() as never);
    const a = deliverer({ workerId: 'owner-a', leaseMs: 5000 });
    const [ev] = await a.d.claim(10);
    expect(ev!.id).toBe(id);
    const b = deliverer({ workerId: 'owner-b', leaseMs: 5000 });
    expect(await b.d.claim(10)).toHaveLength(0);
    // b's clock past a's lease: b takes it over; a can no longer finish it.
    b.clock.t = new Date(a.clock.t.getTime() + 6000);
    const [ev2] = await b.d.claim(10);
    expect(ev2!.id).toBe(id);
    const res = await a.d.deliver(ev!);
    expect(await a.d.record([res])).toBe(0);
    expect((await event(id)).lease_owner).toBe('owner-b');
    expect(await b.d.record([await b.d.deliver(ev2!)])).toBe(1);
    expect(await event(id)).toMatchObject({ status: 'DELIVERED', lease_owner: null });
  });
});

describe('outbox worker loop', () => {
  it('drains due events, bookkeeping in bulk, and a graceful stop finishes what it holds', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push(await enqueue('PAYMENT_POSTBACK', paymentFields() as never));
    rx.setMode(() => ({ status: 200, body: 'OK', delayMs: 20 }));
    const w = startOutboxWorker({ config: t.config, db: t.db, services: t.app.services, log }, { pollMs: 20, concurrency: 16 });
    await waitFor(() => rx.received.length >= 50, '50 postbacks received', 10_000, 10);
    await w.stop();
    const r = await t.db.pool.query(
      `SELECT status::text AS status, count(*)::int AS n, count(lease_owner)::int AS leased FROM outbox_events WHERE id = ANY($1::bigint[]) GROUP BY 1`,
      [ids],
    );
    // Nothing left leased; every event posted is recorded as delivered; none posted twice.
    expect(r.rows.every((x) => x.leased === 0)).toBe(true);
    const delivered = r.rows.find((x) => x.status === 'DELIVERED')?.n ?? 0;
    expect(delivered).toBe(rx.received.length);
    expect(new Set(rx.received.map((x) => x.fields.TrsId)).size).toBe(rx.received.length);
    // The rest is picked up by the next worker.
    const w2 = startOutboxWorker({ config: t.config, db: t.db, services: t.app.services, log }, { pollMs: 20, concurrency: 64 });
    await waitFor(() => rx.received.length >= 200, 'all 200 postbacks received', 20_000, 20);
    await w2.stop();
    const done = await t.db.pool.query(`SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1::bigint[]) AND status = 'DELIVERED'`, [ids]);
    expect(done.rows[0].n).toBe(200);
    expect(rx.received).toHaveLength(200);
  });
});

describe('enqueue', () => {
  it('postbacks carry final statuses only: a non-final Status is refused and nothing is written', async () => {
    await expect(enqueue('PAYMENT_POSTBACK', paymentFields({ Status: 'PROCESS' as never }) as never)).rejects.toThrow(NonFinalEventError);
    await expect(enqueue('PAYOUT_WEBHOOK', payoutFields({ Status: 'MODERATING' as never }) as never)).rejects.toThrow(NonFinalEventError);
    const r = await t.db.pool.query(`SELECT count(*)::int AS n FROM outbox_events WHERE payload->'fields'->>'Status' IN ('PROCESS', 'MODERATING')`);
    expect(r.rows[0].n).toBe(0);
  });

  it('one event per (kind, aggregate): enqueuing the same payment twice keeps one row', async () => {
    const f = paymentFields();
    const a = await enqueue('PAYMENT_POSTBACK', f as never);
    const b = await enqueue('PAYMENT_POSTBACK', f as never);
    expect(b).toBe(a);
    const r = await t.db.pool.query(`SELECT count(*)::int AS n FROM outbox_events WHERE aggregate_id = $1`, [f.TrsId]);
    expect(r.rows[0].n).toBe(1);
  });
});
