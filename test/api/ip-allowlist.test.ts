import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { admin } from '../admin/helpers.js';
import { cabinetMerchant, signedIn } from '../cabinet/helpers.js';
import { ipAllowed } from '../../src/domain/merchant/ip-allowlist.js';
import { count, expectKeyed } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const call = (m: MerchantFixture, method: 'GET' | 'POST', url: string, remoteAddress: string, extra: Record<string, unknown> = {}) =>
  t.app.inject({ method, url, headers: m.auth, remoteAddress, ...extra });

const restrict = (m: MerchantFixture, list: unknown) => admin(t, 'PATCH', `/merchants/${m.merchantId}`, { api_ip_allowlist: list });

describe('IP allow-list matching (ipaddr.js)', () => {
  it('matches addresses and CIDRs of both families, IPv4-mapped IPv6 as IPv4; an empty list allows any', () => {
    const list = ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'];
    expect(ipAllowed(list, '203.0.113.7')).toBe(true);
    expect(ipAllowed(list, '203.0.113.8')).toBe(false);
    expect(ipAllowed(list, '198.51.100.250')).toBe(true);
    expect(ipAllowed(list, '::ffff:198.51.100.1')).toBe(true);
    expect(ipAllowed(list, '2001:db8:1::5')).toBe(true);
    expect(ipAllowed(list, '2001:db9::5')).toBe(false);
    expect(ipAllowed([], '10.0.0.1')).toBe(true);
    expect(ipAllowed(null, '10.0.0.1')).toBe(true);
    expect(ipAllowed(list, 'garbage')).toBe(false);
  });
});

describe('operator API: PATCH /admin/v1/merchants/{id} api_ip_allowlist', () => {
  it('stores a normalised list, shows it in the merchant view, and null or [] clears it', async () => {
    const m = await createMerchant(t);
    const r = await restrict(m, ['203.0.113.7', '198.51.100.9/24', '2001:DB8::/32', '203.0.113.7']);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.api_ip_allowlist).toEqual(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
    expect((await admin(t, 'GET', `/merchants/${m.merchantId}`)).body.api_ip_allowlist).toEqual(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
    expect((await restrict(m, [])).body.api_ip_allowlist).toEqual([]);
    await restrict(m, ['203.0.113.7']);
    expect((await restrict(m, null)).body.api_ip_allowlist).toEqual([]);
    const row = (await t.db.pool.query('SELECT api_ip_allowlist FROM merchants WHERE id = $1', [m.merchantId])).rows[0];
    expect(row.api_ip_allowlist).toBeNull();
  });

  it('refuses a bad entry with a 422 naming it, and changes nothing', async () => {
    const m = await createMerchant(t);
    await restrict(m, ['203.0.113.7']);
    for (const bad of [['203.0.113.7', 'not-an-ip'], ['10.0.0.0/33'], 'x', [7], { a: 1 }]) {
      const r = await restrict(m, bad);
      expect(r.status, JSON.stringify(bad)).toBe(422);
    }
    expect(Object.keys((await restrict(m, ['203.0.113.7', 'not-an-ip'])).body.errors)).toEqual(['api_ip_allowlist.1']);
    expect((await admin(t, 'GET', `/merchants/${m.merchantId}`)).body.api_ip_allowlist).toEqual(['203.0.113.7']);
  });
});

describe('merchant API behind an allow-list', () => {
  it('answers 403 api:error.ip_access_denied from another address on every kind of route, and serves the listed ones', async () => {
    const m = await createMerchant(t);
    await restrict(m, ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
    expectKeyed(await call(m, 'GET', '/api/v1/merchant/balance', '192.0.2.1'), 403, 'ip_access_denied');
    expectKeyed(await call(m, 'GET', '/api/v1/bill/status?id=x', '192.0.2.1'), 403, 'ip_access_denied');
    expectKeyed(await call(m, 'GET', '/api/v1/payout/dictionaries/sbp_banks', '2001:db9::1'), 403, 'ip_access_denied');
    expect((await call(m, 'GET', '/api/v1/merchant/balance', '203.0.113.7')).statusCode).toBe(200);
    expect((await call(m, 'GET', '/api/v1/merchant/balance', '198.51.100.42')).statusCode).toBe(200);
    expect((await call(m, 'GET', '/api/v1/merchant/balance', '2001:db8::42')).statusCode).toBe(200);
  });

  it('bill/create (authenticated inside its statement) is refused from another address and stores nothing; allowed from a listed one', async () => {
    const m = await createMerchant(t);
    await restrict(m, ['203.0.113.0/24']);
    const before = await count(t, 'bills');
    const payload = { amount: '100', shop_id: m.shopId };
    expectKeyed(await call(m, 'POST', '/api/v1/bill/create', '192.0.2.1', { payload }), 403, 'ip_access_denied');
    // Also on its validation-error path and with an Idempotency-Key (the hook authenticates then).
    expectKeyed(await call(m, 'POST', '/api/v1/bill/create', '192.0.2.1', { payload: { shop_id: m.shopId } }), 403, 'ip_access_denied');
    expectKeyed(await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'idempotency-key': 'k1' }, remoteAddress: '192.0.2.1', payload }), 403, 'ip_access_denied');
    expect(await count(t, 'bills')).toBe(before);
    const ok = await call(m, 'POST', '/api/v1/bill/create', '203.0.113.9', { payload });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await count(t, 'bills')).toBe(before + 1);
  });

  it('authentication comes first (a wrong token is 401 from anywhere), and X-Forwarded-For is not trusted without TRUST_PROXY', async () => {
    const m = await createMerchant(t);
    await restrict(m, ['203.0.113.7']);
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: 'Bearer wrong' }, remoteAddress: '192.0.2.1' });
    expect(r.statusCode).toBe(401);
    expectKeyed(await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { ...m.auth, 'x-forwarded-for': '203.0.113.7' }, remoteAddress: '192.0.2.1' }), 403, 'ip_access_denied');
  });
});

describe('TRUST_PROXY', () => {
  it('with a trusted proxy the client address comes from X-Forwarded-For, as for the per-IP limits', async () => {
    const t2 = await setupTestApp({ TRUST_PROXY: '127.0.0.1' });
    try {
      const m = await createMerchant(t2);
      await t2.app.services.merchants.update(m.merchantId, { apiIpAllowlist: ['203.0.113.7'] });
      const via = (xff: string) => t2.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { ...m.auth, 'x-forwarded-for': xff }, remoteAddress: '127.0.0.1' });
      expect((await via('203.0.113.7')).statusCode).toBe(200);
      expect((await via('192.0.2.1')).statusCode).toBe(403);
    } finally {
      await t2.close();
    }
  });
});

describe('cabinet: the API integration page', () => {
  it('sets the allow-list from a textarea (one per line), refuses a bad line with 422, and an empty textarea clears it', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const page = await c.get('/cabinet/api');
    expect(page.body).toContain('name="api_ip_allowlist"');
    const bad = await c.submit('/cabinet/api', '/cabinet/api/allowlist', { api_ip_allowlist: '203.0.113.7\nnope' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('&#34;nope&#34; is not an IP address');
    const ok = await c.submit('/cabinet/api', '/cabinet/api/allowlist', { api_ip_allowlist: '203.0.113.7\r\n198.51.100.0/24\n' });
    expect(ok.statusCode).toBe(303);
    expect((await admin(t, 'GET', `/merchants/${m.merchantId}`)).body.api_ip_allowlist).toEqual(['203.0.113.7', '198.51.100.0/24']);
    expect((await c.get('/cabinet/api')).body).toContain('203.0.113.7\n198.51.100.0/24');
    await c.submit('/cabinet/api', '/cabinet/api/allowlist', { api_ip_allowlist: '' });
    expect((await admin(t, 'GET', `/merchants/${m.merchantId}`)).body.api_ip_allowlist).toEqual([]);
  });
});
