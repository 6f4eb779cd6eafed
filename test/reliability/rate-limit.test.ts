import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp({ RATE_LIMIT_PER_TOKEN: '5', RATE_LIMIT_PER_IP: '7' });
  m = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

const balance = (auth: Record<string, string>, ip = '10.0.0.1') =>
  t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: auth, remoteAddress: ip });

describe('rate limits', () => {
  it('past the per-token limit a token gets 429 JSON with Retry-After', async () => {
    const rs = [];
    for (let i = 0; i < 6; i++) rs.push(await balance(m.auth));
    expect(rs.slice(0, 5).every((r) => r.statusCode !== 429)).toBe(true);
    expect(rs[5]!.statusCode).toBe(429);
    expect(rs[5]!.json()).toEqual({ success: false, message: 'Too Many Attempts.' });
    expect(rs[5]!.headers['retry-after']).toBeDefined();
  });

  it('another token from the same IP is limited by the per-IP limit', async () => {
    const other = await createMerchant(t);
    const rs = [];
    for (let i = 0; i < 3; i++) rs.push(await balance(other.auth, '10.0.0.1'));
    // 6 requests from 10.0.0.1 counted so far (the per-address limit is checked first, so the
    // 6th, refused by the token's, counted there too): with 7 allowed per IP, the 8th from this
    // IP is refused whatever the token.
    expect(rs.map((r) => r.statusCode === 429)).toEqual([false, true, true]);
  });

  it('a different IP with a fresh token is not affected', async () => {
    const third = await createMerchant(t);
    const r = await balance(third.auth, '10.0.0.2');
    expect(r.statusCode).not.toBe(429);
  });
});
