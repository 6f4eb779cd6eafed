import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { CabinetClient, cabinetMerchant, PASSWORD } from '../cabinet/helpers.js';
import { budget, sized } from './profile.js';

/**
 * Attacks on cabinet sign-in (issue 19.3, 19.4, 19.8):
 * - 200 anonymous sign-ins made the merchant API answer in seconds (bcrypt on the event loop);
 * - five wrong guesses locked a real account for anyone, renewable forever, while an unknown
 *   email never locked (an enumeration oracle);
 * - `next=/cabinet/../../x` after sign-in left the cabinet.
 */
let t: TestApp;
let api: MerchantFixture;
beforeAll(async () => {
  // A small account budget so the many-addresses case needs few requests.
  t = await setupTestApp({ LOGIN_FAILURES_PER_ACCOUNT: '20' });
  api = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

/** One anonymous sign-in attempt (double-submit CSRF cookie set by the attacker itself) from `ip`. */
const attempt = (email: string, password: string, ip: string, next?: string) => t.app.inject({
  method: 'POST', url: '/cabinet/login', remoteAddress: ip,
  headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'cab_pre=x' },
  payload: new URLSearchParams({ _csrf: 'x', email, password, ...(next === undefined ? {} : { next }) }).toString(),
});

/** The answer with what legitimately varies (CSRF token, echoed email) blanked out. */
const shape = (body: string, email: string) => body.replace(/value="[A-Za-z0-9_-]{20,}"/g, 'value="CSRF"').split(email).join('EMAIL');

/** The burst of anonymous sign-ins: 200 in the full profile (npm run test:reliability), 80 in npm test. */
const BURST = sized(80, 200);

describe('sign-in is no denial of service', () => {
  test(`while ${BURST} concurrent sign-ins from ${BURST} addresses run, the merchant API answers in < 500 ms`, async () => {
    // Warm the route and bcrypt once, so the measurement below is of the attack only.
    await attempt('warm@example.test', 'x', '10.50.0.1');
    let done = 0;
    const attack = Array.from({ length: BURST }, (_, i) => attempt(`victim${i}@example.test`, `guess${i}`, `10.60.${i >> 8}.${i & 255}`).then((r) => { done += 1; return r; }));
    const latencies: number[] = [];
    let during = 0;
    // Measured while the sign-ins are being checked (several samples), once the burst of requests
    // requests has been read in, not as a micro-benchmark.
    await new Promise((r) => setTimeout(r, 1500)); // time is the subject: the burst is under way
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: api.auth });
      latencies.push(performance.now() - t0);
      expect(r.statusCode).toBe(200);
      if (done < BURST) during += 1;
      await new Promise((r) => setTimeout(r, 100)); // samples 100 ms apart, across the burst
    }
    const answers = await Promise.all(attack);
    expect(answers.every((r) => r.statusCode === 401)).toBe(true);
    expect(during, 'samples taken while sign-ins were still running').toBeGreaterThanOrEqual(3);
    expect(Math.max(...latencies), `latencies ${latencies.map((x) => x.toFixed(0)).join(', ')} ms`).toBeLessThan(500);
  }, budget(120_000));

  test('one address is limited: of 200 concurrent sign-ins, at most 30 reach the password check, the rest are 429 at once', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => attempt(`flood${i}@example.test`, 'x', '10.70.0.1')));
    const checked = answers.filter((r) => r.statusCode === 401).length;
    expect(checked).toBeLessThanOrEqual(30);
    expect(answers.filter((r) => r.statusCode === 429).length).toBe(200 - checked);
  });
});

describe('lock-out is neither a weapon nor an oracle', () => {
  test('a known and an unknown email get the same statuses, the same pages and the same timing class', async () => {
    const m = await cabinetMerchant(t);
    const unknown = `nobody-${Date.now()}@example.test`;
    // Interleaved, so a load spike on this shared machine falls on both sides alike.
    const known: { status: number; body: string; ms: number }[] = [];
    const other: { status: number; body: string; ms: number }[] = [];
    const one = async (email: string, ip: string, into: typeof known) => {
      const t0 = performance.now();
      const r = await attempt(email, 'wrong password', ip);
      into.push({ status: r.statusCode, body: shape(r.body, email), ms: performance.now() - t0 });
    };
    for (let i = 0; i < 7; i++) {
      await one(m.email, '10.80.0.1', known);
      await one(unknown, '10.80.0.2', other);
    }
    expect(known.map((x) => x.status)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(other.map((x) => x.status)).toEqual(known.map((x) => x.status));
    for (let i = 0; i < known.length; i++) expect(other[i]!.body, `attempt ${i + 1}`).toBe(known[i]!.body);
    // Timing class: both pay one bcrypt round when checked, both are refused without one when not.
    // The fastest of the checked attempts is compared: noise from other work only ever adds time.
    const fastest = (xs: { ms: number }[]) => Math.min(...xs.map((x) => x.ms));
    const checkedKnown = fastest(known.slice(0, 5));
    const checkedOther = fastest(other.slice(0, 5));
    expect(checkedOther).toBeGreaterThan(checkedKnown / 3);
    expect(checkedOther).toBeLessThan(checkedKnown * 3);
    // A refused attempt (429) pays no bcrypt round: clearly faster than a checked one, on both sides.
    expect(fastest(known.slice(5))).toBeLessThan(checkedKnown);
    expect(fastest(other.slice(5))).toBeLessThan(checkedOther);
  });

  test('a guesser from one address stays out (even with the right password); the owner signs in from another', async () => {
    const m = await cabinetMerchant(t);
    for (let i = 0; i < 12; i++) await attempt(m.email, `guess${i}`, '10.90.0.1');
    expect((await attempt(m.email, 'guess', '10.90.0.1')).statusCode).toBe(429);
    expect((await attempt(m.email, PASSWORD, '10.90.0.1')).statusCode).toBe(429);
    const owner = new CabinetClient(t, '10.90.0.2');
    expect((await owner.login(m.email, PASSWORD)).statusCode).toBe(303);
    expect((await owner.get('/cabinet')).statusCode).toBe(200);
  });

  test('guessers from many addresses use up the account budget: each new address then gets one try, the owner from a clean address still gets in', async () => {
    const m = await cabinetMerchant(t);
    for (let i = 0; i < 10; i++) for (let k = 0; k < 2; k++) await attempt(m.email, `g${i}${k}`, `10.100.0.${i + 1}`);
    // Budget (20) spent: a fresh guessing address gets one attempt, then is refused.
    expect((await attempt(m.email, 'g', '10.100.1.1')).statusCode).toBe(401);
    expect((await attempt(m.email, 'g', '10.100.1.1')).statusCode).toBe(429);
    expect((await attempt(m.email, PASSWORD, '10.100.1.1')).statusCode).toBe(429);
    expect((await new CabinetClient(t, '10.100.2.1').login(m.email, PASSWORD)).statusCode).toBe(303);
  });
});

describe('after sign-in, next never leaves the cabinet', () => {
  test('dot segments, encoded dots, backslashes and // are refused; a cabinet path with its query is followed', async () => {
    const m = await cabinetMerchant(t);
    const cases: Array<[string, string]> = [
      ['/cabinet/../../x', '/cabinet'], ['/cabinet/%2e%2e/%2e%2e/admin/v1/merchants', '/cabinet'], ['/cabinet/%2E%2E/x', '/cabinet'],
      ['/cabinet/.%2e/x', '/cabinet'], ['/cabinet\\..\\..\\x', '/cabinet'], ['/cabinet/..\\x', '/cabinet'], ['/cabinet/%5c..%5cx', '/cabinet'],
      ['/cabinet/..%2f..%2fx', '/cabinet'], ['//evil.example', '/cabinet'], ['/cabinet//evil.example', '/cabinet'], ['\\\\evil.example', '/cabinet'],
      ['/\\evil.example', '/cabinet'], ['https://evil.example/cabinet', '/cabinet'], ['/cabinetx', '/cabinet'], ['/cabinet/./bills', '/cabinet'],
      ['/cabinet/bills?status=NEW&page=2', '/cabinet/bills?status=NEW&page=2'], ['/cabinet', '/cabinet'],
    ];
    for (const [i, [next, expected]] of cases.entries()) {
      const r = await attempt(m.email, PASSWORD, `10.110.0.${i + 1}`, next);
      expect(r.statusCode, next).toBe(303);
      expect(r.headers.location, next).toBe(expected);
      expect(new URL(r.headers.location as string, 'https://pay.example').pathname, next).toMatch(/^\/cabinet(\/|$)/);
    }
  });
});
