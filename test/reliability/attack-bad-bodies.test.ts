import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cabinetMerchant, signedIn, type CabinetClient, type CabinetMerchant } from '../cabinet/helpers.js';
import { budget, sized } from './profile.js';

/**
 * Attack (issue 19.6): NUL bytes in operator API and cabinet fields and paths, a 5000-level
 * nested JSON body with an Idempotency-Key, multipart with no boundary, truncated, a wrong
 * boundary or a urlencoded body under a multipart type: each was a 500 with a stack trace in
 * the log. Each must be a 4xx (JSON, or a page in the cabinet), change nothing and log no
 * stack. Then a seeded fuzz of every body content type x malformed bodies over all four faces.
 */
const RUNS = Number(process.env.BODY_FUZZ_RUNS ?? sized(600, 3000));
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

const logs: string[] = [];
let t: TestApp;
let m: MerchantFixture;
let cm: CabinetMerchant;
let cab: CabinetClient;
let billId: string;
const A = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  t = await setupTestApp({ LOG_LEVEL: 'info', RATE_LIMIT_PER_TOKEN: '0', RATE_LIMIT_PER_IP: '0', PAY_ATTEMPTS_PER_BILL: '1000000', PAY_ATTEMPTS_PER_IP: '1000000' },
    { logStream: { write: (line: string) => { logs.push(line); } } });
  m = await createMerchant(t);
  cm = await cabinetMerchant(t);
  cab = await signedIn(t, cm);
  billId = (await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '10', shop_id: m.shopId } })).json().bill_id;
});
afterAll(async () => { await t.close(); });

const cabHeaders = () => ({ cookie: [...cab.cookies].map(([k, v]) => `${k}=${v}`).join('; ') });

async function snapshot(): Promise<string> {
  const r = await t.db.pool.query(`SELECT (SELECT count(*) FROM merchants) m, (SELECT count(*) FROM shops) s, (SELECT count(*) FROM bills) b,
    (SELECT count(*) FROM payments) p, (SELECT count(*) FROM idempotency_keys) k, (SELECT count(*) FROM ledger_entries) l,
    (SELECT md5(string_agg(name || coalesce(result_url, ''), ',' ORDER BY id)) FROM shops) sh,
    (SELECT md5(string_agg(name || email, ',' ORDER BY id)) FROM merchants) mh`);
  return JSON.stringify(r.rows[0]);
}

const noStackLogged = () => {
  const bad = logs.filter((l) => /"stack"|\n\s+at |"level":50|"level":60/.test(l));
  expect(bad.slice(0, 3)).toEqual([]);
};

const nested = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

describe('bad input that was a 500', () => {
  test('NUL bytes in operator API and cabinet fields, queries and paths: 422 (or 404), nothing changed, no stack logged', async () => {
    const before = await snapshot();
    const cases = [
      () => t.app.inject({ method: 'POST', url: '/admin/v1/merchants', headers: A, payload: { name: 'a\u0000b', email: 'x@y.test' } }),
      () => t.app.inject({ method: 'PATCH', url: `/admin/v1/shops/${m.shopId}`, headers: A, payload: { name: 'x\u0000' } }),
      () => t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: A, payload: { name: 'x\u0000y' } }),
      () => t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/shops`, headers: A, payload: { name: 'x\u0000y' } }),
      () => t.app.inject({ method: 'GET', url: '/admin/v1/merchants?status=%00', headers: A }),
      () => t.app.inject({ method: 'GET', url: '/admin/v1/merchants/ab%00c', headers: A }),
      () => t.app.inject({ method: 'GET', url: '/admin/v1/shops/%00', headers: A }),
      () => cab.get('/cabinet/bills/ab%00c'),
      () => cab.get('/cabinet/shops/%00'),
      () => cab.get('/cabinet/bills?status=%00&from=%00'),
      async () => cab.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '10', shop_id: cm.shopId, description: 'a\u0000b' }),
      async () => cab.submit(`/cabinet/shops/${cm.shopId}`, `/cabinet/shops/${cm.shopId}`, { default_currency: 'RUB', result_url: 'https://x.example/\u0000' }),
      () => t.app.inject({ method: 'POST', url: '/cabinet/login', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'cab_pre=x' }, payload: '_csrf=x&email=a%00b@x.test&password=x%00' }),
    ];
    for (const [i, run] of cases.entries()) {
      const r = await run();
      expect(r.statusCode, `case ${i}: ${r.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(r.statusCode, `case ${i}`).toBeLessThan(500);
    }
    expect(await snapshot()).toBe(before);
    noStackLogged();
  });

  test('a 5000-level nested JSON body, with or without an Idempotency-Key, on every face: 422, nothing stored', async () => {
    const before = await snapshot();
    for (const [url, headers] of [
      ['/api/v1/bill/create', { ...m.auth, 'idempotency-key': 'deep-1' }], ['/api/v1/bill/create', m.auth],
      ['/admin/v1/merchants', A], [`/pay/${billId}`, { accept: 'application/json' }], ['/cabinet/bills', cabHeaders()],
    ] as const) {
      for (const body of [`{"amount":"10","shop_id":"${m.shopId}","x":${nested(5000)}}`, `[${'['.repeat(5000)}${']'.repeat(5000)}]`]) {
        const r = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: body });
        expect(r.statusCode, `${url} ${r.body.slice(0, 100)}`).toBeGreaterThanOrEqual(400);
        expect(r.statusCode, url).toBeLessThan(500);
      }
    }
    expect(await snapshot()).toBe(before);
    noStackLogged();
  });

  test('malformed multipart (no boundary, truncated, wrong boundary, urlencoded inside) on every face: 4xx, nothing changed', async () => {
    const before = await snapshot();
    const bodies: Array<[string, string]> = [
      ['multipart/form-data', 'amount=10'],
      ['multipart/form-data; boundary=XX', '--XX\r\nContent-Disposition: form-data; name="amount"\r\n\r\n10'],
      ['multipart/form-data; boundary=YY', '--XX\r\nContent-Disposition: form-data; name="amount"\r\n\r\n10\r\n--XX--\r\n'],
      ['multipart/form-data; boundary=XX', `amount=10&shop_id=${m.shopId}`],
      ['multipart/form-data; boundary=', 'x'],
      ['multipart/mixed; boundary=XX', '--XX\r\n\r\n'],
    ];
    for (const [ct, body] of bodies) {
      for (const [url, headers, json] of [
        ['/api/v1/bill/create', m.auth, true], ['/admin/v1/merchants', A, true], [`/pay/${billId}`, { accept: 'application/json' }, true],
        ['/cabinet/bills', cabHeaders(), false], ['/cabinet/login', {}, false],
      ] as const) {
        const r = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': ct }, payload: body });
        const ctx = `${ct} ${url} -> ${r.statusCode} ${r.body.slice(0, 100)}`;
        expect(r.statusCode, ctx).toBeGreaterThanOrEqual(400);
        expect(r.statusCode, ctx).toBeLessThan(500);
        expect(r.headers['content-type'], ctx).toMatch(json ? /^application\/json/ : /^text\/html/);
      }
    }
    expect(await snapshot()).toBe(before);
    noStackLogged();
  });
});

describe('fuzzing the body parsers', () => {
  const TYPES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=FZ', 'multipart/form-data',
    'text/plain', null, 'application/xml', 'application/octet-stream', 'garbage/;;;', 'application/json; charset=latin1', 'multipart/form-data; boundary="'] as const;
  const ROUTES: Array<{ method: string; url: () => string; headers: () => Record<string, string>; html: boolean }> = [
    { method: 'POST', url: () => '/api/v1/bill/create', headers: () => ({ ...m.auth }), html: false },
    { method: 'POST', url: () => '/api/v1/payout/regular/create', headers: () => ({ ...m.auth, 'idempotency-key': `fz-${Math.random()}` }), html: false },
    { method: 'GET', url: () => '/api/v1/bill/status', headers: () => ({ ...m.auth }), html: false },
    { method: 'POST', url: () => '/admin/v1/merchants', headers: () => A, html: false },
    { method: 'PATCH', url: () => `/admin/v1/shops/${m.shopId}`, headers: () => A, html: false },
    { method: 'POST', url: () => `/admin/v1/merchants/${m.merchantId}/balance-adjustments`, headers: () => A, html: false },
    { method: 'POST', url: () => `/pay/${billId}`, headers: () => ({ accept: 'application/json' }), html: false },
    { method: 'POST', url: () => `/pay/${billId}`, headers: () => ({}), html: true },
    { method: 'POST', url: () => '/cabinet/login', headers: () => ({ cookie: 'cab_pre=x' }), html: true },
    { method: 'POST', url: () => '/cabinet/bills', headers: cabHeaders, html: true },
    { method: 'POST', url: () => '/cabinet/payouts', headers: cabHeaders, html: true },
  ];
  const huge = fc.constantFrom('1e600000000', '-1e30000000', '9'.repeat(3000), '1E+99999999', '0x10', 'NaN');
  const text = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), huge, fc.constant('\u0000'), fc.constant(''));
  const body = fc.oneof(
    text,
    fc.dictionary(fc.constantFrom('amount', 'shop_id', 'name', 'email', '_csrf', 'method', 'x'), fc.oneof(text, fc.integer(), fc.constant(null)), { maxKeys: 4 }).map((o) => JSON.stringify(o)),
    fc.integer({ min: 1, max: 6000 }).map((n) => nested(n)),
    fc.constantFrom('{"a":', '[', '{"amount": 1e600000000}', '%%%&&==', 'a=%zz&b', '--FZ\r\n', '--FZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n1',
      '--FZ\r\nContent-Disposition: form-data; name="amount"\r\n\r\n1e600000000\r\n--FZ--\r\n', '--FZ--', '\u0000\u0000', '\ufeff{}'),
  );
  test(`${RUNS} generated requests (seed ${SEED}): every content type x malformed bodies on all four faces, never a 5xx, no stack`, async () => {
    await fc.assert(fc.asyncProperty(fc.record({ route: fc.nat(ROUTES.length - 1), type: fc.nat(TYPES.length - 1), body }), async (rq) => {
      const route = ROUTES[rq.route]!;
      const type = TYPES[rq.type]!;
      const headers: Record<string, string> = { ...route.headers(), ...(type === null ? {} : { 'content-type': type }) };
      const r = await t.app.inject({ method: route.method as 'POST', url: route.url(), headers, payload: rq.body });
      const ctx = `${route.method} ${route.url()} ${type} ${JSON.stringify(rq.body.slice(0, 120))} -> ${r.statusCode} ${r.body.slice(0, 150)}`;
      expect(r.statusCode, ctx).toBeLessThan(500);
      expect(r.body, ctx).not.toMatch(/\n\s+at |"stack"/);
    }), { numRuns: RUNS, seed: SEED, endOnFailure: true });
    noStackLogged();
  }, budget(300_000));
});
