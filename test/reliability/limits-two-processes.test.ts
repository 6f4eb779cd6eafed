import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { databaseEnv, killAll, startService, type ServiceProcess } from '../helpers/service-process.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, DECLINED_CARD } from '../factories/payment.js';
import { cabinetMerchant, PASSWORD, type CabinetMerchant } from '../cabinet/helpers.js';

/**
 * Every limit that guards money or accounts holds in total over two API processes (each request
 * on a connection of its own, alternating between them): per process, two would allow twice it.
 */
const LIMITS = {
  PAY_ATTEMPTS_PER_BILL: '5', PAY_ATTEMPTS_PER_IP: '4', LOGIN_ATTEMPTS_PER_IP: '6', LOGIN_FAILURES_PER_ACCOUNT: '4', RATE_LIMIT_PER_TOKEN: '6',
};

let t: TestApp;
let m: MerchantFixture;
let procs: ServiceProcess[];
let env: Record<string, string>;
beforeAll(async () => {
  t = await setupTestApp(LIMITS);
  m = await createMerchant(t);
  env = databaseEnv(t.dbUrl, { ...LIMITS, TRUST_PROXY: 'true', SANDBOX_PROCESSING_DELAY_MS: '0', PUBLIC_BASE_URL: 'http://pay.test', LOG_LEVEL: 'warn' });
});
// A cold start is one hook's work, bounded under its 60 s (docs/adr/0139-slow-starts-wait-in-hooks.md).
beforeAll(async () => { procs = [await startService(['--import', 'tsx', 'src/entry/main.ts'], env, { timeoutMs: 50_000 })]; });
beforeAll(async () => { procs.push(await startService(['--import', 'tsx', 'src/entry/main.ts'], env, { timeoutMs: 50_000 })); });
afterAll(async () => { killAll(); await t.close(); });

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** One request on a fresh connection to process `i % 2`. */
function send(i: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const url = new URL(path, procs[i % 2]!.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Starts a run only with `needMs` left in the limit's fixed window, so the run does not straddle two windows. */
async function awayFromWindowEnd(windowMs: number, needMs = 20_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50)); // time is the subject: the next window
}

const pay = (i: number, billId: string, form: Record<string, string>, ip: string) =>
  send(i, 'POST', `/pay/${billId}`, { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip }, new URLSearchParams(form).toString());

const signIn = (i: number, email: string, password: string, ip: string) =>
  send(i, 'POST', '/cabinet/login', {
    'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip, cookie: 'cab_pre=pre0123456789',
  }, new URLSearchParams({ _csrf: 'pre0123456789', email, password }).toString());

describe('limits counted once over two API processes', () => {
  it('payment attempts per bill: exactly 5 declined attempts over the two processes, then 429 with Retry-After 600 from both', async () => {
    await awayFromWindowEnd(600_000);
    const billId = await createBill(t, m);
    const statuses: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await pay(i, billId, cardForm(DECLINED_CARD), `10.1.0.${i}`);
      statuses.push(r.status === 200 ? JSON.parse(r.body).status : String(r.status));
    }
    expect(statuses).toEqual(['FAIL', 'FAIL', 'FAIL', 'FAIL', 'FAIL']);
    for (const i of [5, 6]) {
      const r = await pay(i, billId, cardForm(), `10.1.0.${i}`);
      expect(r.status, `process ${i % 2}`).toBe(429);
      expect(JSON.parse(r.body)).toEqual({ success: false, message: 'api:error.too_many_attempts' });
      expect(r.headers['retry-after']).toBe('600');
    }
    const pays = await t.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE bill_id = $1`, [billId]);
    expect(pays.rows[0].n).toBe(5);
  });

  it('payment attempts per address: 4 wrong card numbers on four bills over the two processes, then 429 on a fifth bill', async () => {
    await awayFromWindowEnd(600_000);
    for (let i = 0; i < 4; i++) {
      const r = await pay(i, await createBill(t, m), { ...cardForm(), card_number: '1234567812345678' }, '10.2.0.1');
      expect(r.status).toBe(422);
    }
    const blocked = await pay(4, await createBill(t, m), cardForm(), '10.2.0.1');
    expect(blocked.status).toBe(429);
    expect((await pay(5, await createBill(t, m), cardForm(), '10.2.0.1')).status).toBe(429);
  });

  it('sign-in per address: 6 attempts (any email) over the two processes, then 429 from both', async () => {
    await awayFromWindowEnd(600_000);
    for (let i = 0; i < 6; i++) expect((await signIn(i, `nobody${i}@example.test`, 'wrong', '10.3.0.1')).status).toBe(401);
    expect((await signIn(6, 'nobody-else@example.test', 'wrong', '10.3.0.1')).status).toBe(429);
    expect((await signIn(7, 'nobody-else@example.test', 'wrong', '10.3.0.1')).status).toBe(429);
  });

  it('sign-in per account: 4 wrong passwords from four addresses spend the budget; then an address with a failure is refused, a new one gets one attempt, the owner still gets in', async () => {
    await awayFromWindowEnd(3_600_000);
    const owner: CabinetMerchant = await cabinetMerchant(t);
    for (let i = 0; i < 4; i++) expect((await signIn(i, owner.email, 'wrong', `10.4.0.${i}`)).status).toBe(401);
    expect((await signIn(4, owner.email, 'wrong', '10.4.0.0')).status).toBe(429);
    expect((await signIn(5, owner.email, 'wrong', '10.4.0.0')).status).toBe(429);
    expect((await signIn(6, owner.email, 'wrong', '10.4.1.1')).status).toBe(401);
    expect((await signIn(7, owner.email, 'wrong', '10.4.1.1')).status).toBe(429);
    expect((await signIn(8, owner.email, PASSWORD, '10.4.2.2')).status).toBe(303);
  });

  it('the per-token API limit: 6 requests over the two processes, then 429 with Retry-After from both', async () => {
    await awayFromWindowEnd(60_000);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await send(i, 'GET', '/api/v1/merchant/balance', m.auth)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    const r = await send(9, 'GET', '/api/v1/merchant/balance', m.auth);
    expect(r.status).toBe(429);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('provider notifications per connector and address: a burst over the two processes passes at most 10 in each one-second window', async () => {
    // Time is the subject: starts just after a second turns, so the burst mostly falls in one window.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      send(i, 'POST', '/providers/no-such-connector/notifications', { 'content-type': 'application/json', 'x-forwarded-for': '10.5.0.1' }, '{}')));
    const passed = rs.filter((r) => r.status !== 429).length;
    const windows = await t.db.pool.query<{ hits: number }>(`SELECT hits FROM limit_counters WHERE name = 'notifications' AND key = 'no-such-connector|10.5.0.1'`);
    expect(rs.some((r) => r.status === 429)).toBe(true);
    expect(windows.rows.every((w) => w.hits <= 10)).toBe(true);
    expect(windows.rows.reduce((s, w) => s + w.hits, 0)).toBe(passed);
    expect(passed).toBeLessThanOrEqual(10 * windows.rows.length);
  });
});
