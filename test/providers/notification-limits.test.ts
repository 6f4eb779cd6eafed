import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill, payRequest } from '../factories/payment.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { formPost, newOpId } from './connector-calls.js';
import { NOTIFICATIONS_PER_SECOND } from '../../src/provider-notifications/index.js';

/**
 * Issue 27: forged YooKassa notifications cost an authenticated call to YooKassa each (the service
 * believes only the object read back). Two limits: a flood from one address is refused 429 past
 * NOTIFICATIONS_PER_SECOND unproven ones per connector and second, so a burst of 50 reaches
 * YooKassa at most that many times (a provider's own, verified ones are never throttled); and a
 * YooKassa connector without `allowed_ips` accepts only YooKassa's published source networks, in
 * every profile and mode (loopback too only when `allowed_ips` names it).
 */
let t: TestApp;
let prod: TestApp;
let yk: YooKassaEmulator;
beforeAll(async () => {
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '8000' });
  prod = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '8000', PAYMENTS_PROFILE: 'production', ALLOW_PRIVATE_PROVIDER_URLS: 'true' });
  yk = await YooKassaEmulator.start({ retryBaseMs: 10 });
});
afterAll(async () => { await yk.stop(); await t.close(); await prod.close(); });

const settings = () => ({ base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey });
/** A connector whose notifications come from the emulator (loopback) unless `ownList` is false: then YooKassa's default networks. */
const put = (app: TestApp, name: string, o: { ownList?: boolean; mode?: 'test' | 'live' } = {}) => app.app.inject({
  method: 'PUT', url: `/admin/v1/connectors/${name}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  payload: { kind: 'yookassa', mode: o.mode ?? 'test', settings: { ...settings(), ...(o.ownList === false ? {} : { allowed_ips: '127.0.0.0/8' }) } },
});
const notify = (app: TestApp, name: string, body: unknown, ip = '127.0.0.1') =>
  app.app.inject({ method: 'POST', url: `/providers/${name}/notifications`, payload: body as object, remoteAddress: ip });
const forged = () => ({ type: 'notification', event: 'payment.succeeded', object: { id: `2f${newOpId()}` } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The limit counts in fixed one-second windows (docs/adr/0098): a burst starts just after a second turns, so it falls in one. */
const atSecondStart = () => sleep(1000 - (Date.now() % 1000) + 10); // time is the subject: the window's start

/** A payment of ours at YooKassa, paid on its page: what an honest notification is about. */
async function paidAtYooKassa(app: TestApp, connector: string) {
  const m = await createMerchant(app);
  await app.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { routing: { payment_card: [connector] } } });
  const bill = await createBill(app, m, { amount: '100.00' });
  const r = (await payRequest(app, bill)).json() as { payment_id: string; action: { url: string } };
  const p = (await app.db.pool.query('SELECT id, provider_ref FROM payments WHERE id = $1', [r.payment_id])).rows[0] as { id: string; provider_ref: string };
  expect((await fetch(`${r.action.url}/pay`, formPost('card=5555555555554444'))).status).toBe(303);
  return p;
}

describe('POST /providers/{connector}/notifications: a flood of forged ones', () => {
  it(`a burst of 50 forged notifications from one address reaches YooKassa at most ${NOTIFICATIONS_PER_SECOND} times; the rest are 429; nothing is recorded`, async () => {
    expect((await put(t, 'yk-flood')).statusCode).toBe(201);
    const before = yk.requests.length;
    await atSecondStart();
    const rs = await Promise.all(Array.from({ length: 50 }, () => notify(t, 'yk-flood', forged())));
    const statuses = rs.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 429).length).toBe(50 - NOTIFICATIONS_PER_SECOND);
    expect(statuses.filter((s) => s !== 429).every((s) => s === 400)).toBe(true);
    expect(rs.find((r) => r.statusCode === 429)!.headers['retry-after']).toBe('1');
    const calls = yk.requests.length - before;
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(NOTIFICATIONS_PER_SECOND);
    expect((await t.db.pool.query("SELECT count(*)::int AS n FROM provider_notifications WHERE connector = 'yk-flood'")).rows[0].n).toBe(0);
    // Per address: another source is not held up by this one's flood.
    expect((await notify(t, 'yk-flood', forged(), '127.0.0.2')).statusCode).toBe(400);
  });

  it("the provider's own notifications are never throttled: 3 x the limit of verified ones in a row are all applied or answered as duplicates", async () => {
    expect((await put(t, 'yk-honest')).statusCode).toBe(201);
    const p = await paidAtYooKassa(t, 'yk-honest');
    const body = { type: 'notification', event: 'payment.succeeded', object: { id: p.provider_ref } };
    for (let i = 0; i < NOTIFICATIONS_PER_SECOND * 3; i++) {
      const r = await notify(t, 'yk-honest', body);
      expect(r.statusCode, `notification ${i}: ${r.body}`).toBe(200);
    }
    expect((await t.db.pool.query('SELECT status::text AS s FROM payments WHERE id = $1', [p.id])).rows[0].s).toBe('SUCCESS');
  });

  it('after a second the address may send again', async () => {
    await put(t, 'yk-again');
    await atSecondStart();
    await Promise.all(Array.from({ length: NOTIFICATIONS_PER_SECOND + 5 }, () => notify(t, 'yk-again', forged())));
    expect((await notify(t, 'yk-again', forged())).statusCode).toBe(429);
    await sleep(1100); // time is the subject: the next one-second window
    expect((await notify(t, 'yk-again', forged())).statusCode).toBe(400);
  });
});

describe('a YooKassa connector without allowed_ips: YooKassa\'s published sources only', () => {
  it('production profile: a notification from 127.0.0.1 is refused (400) before YooKassa is asked, and nothing is recorded', async () => {
    expect((await put(prod, 'yk-prod', { ownList: false })).statusCode).toBe(201);
    const body = forged();
    const before = yk.requests.length;
    const r = await notify(prod, 'yk-prod', body, '127.0.0.1');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: 'unverifiable', reason: expect.stringContaining('allowed_ips') });
    expect(yk.requests.length).toBe(before);
    expect((await notify(prod, 'yk-prod', body, '::1')).statusCode).toBe(400);
    expect(yk.requests.length).toBe(before);
    expect((await prod.db.pool.query("SELECT count(*)::int AS n FROM provider_notifications WHERE connector = 'yk-prod'")).rows[0].n).toBe(0);
    // From YooKassa's networks (IPv4, IPv6) the object is read back (the read decides: unknown here).
    for (const ip of ['185.71.76.9', '77.75.156.35', '2a02:5180:0:1509::5']) {
      expect((await notify(prod, 'yk-prod', body, ip)).json(), ip).toMatchObject({ reason: expect.stringContaining('does not know') });
    }
    expect(yk.requests.length).toBe(before + 3);
    // An explicit list replaces the default.
    const own = await prod.app.inject({
      method: 'PUT', url: '/admin/v1/connectors/yk-prod', headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { kind: 'yookassa', mode: 'test', settings: { ...settings(), allowed_ips: '127.0.0.1' } },
    });
    expect(own.statusCode).toBe(200);
    expect((await notify(prod, 'yk-prod', body, '185.71.76.9')).json()).toMatchObject({ reason: expect.stringContaining('allowed_ips') });
    expect((await notify(prod, 'yk-prod', body, '127.0.0.1')).json()).toMatchObject({ reason: expect.stringContaining('does not know') });
  });

  it('the same in every profile and mode: sandbox test and live, production live; loopback and other addresses refused, YooKassa\'s networks read back', async () => {
    const cases = [[t, 'yk-sbx-test', 'test'], [t, 'yk-sbx-live', 'live'], [prod, 'yk-prod-live', 'live']] as const;
    for (const [app, name, mode] of cases) {
      expect((await put(app, name, { ownList: false, mode })).statusCode, name).toBe(201);
      const body = forged();
      const before = yk.requests.length;
      for (const ip of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '203.0.113.5']) {
        const r = await notify(app, name, body, ip);
        expect(r.statusCode, `${name} ${ip}`).toBe(400);
        expect(r.json(), `${name} ${ip}`).toMatchObject({ reason: expect.stringContaining('allowed_ips') });
      }
      expect(yk.requests.length, name).toBe(before);
      expect((await notify(app, name, body, '77.75.153.10')).json(), name).toMatchObject({ reason: expect.stringContaining('does not know') });
    }
  });
});
