import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

// bill/create authenticates inside its own statement (one round trip fewer); these are the
// paths where that must still answer exactly as the auth hook does on every other route.
let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

const create = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers, payload });
const bills = async (merchantId: string) => Number((await t.db.pool.query('SELECT count(*) FROM bills WHERE merchant_id = $1', [merchantId])).rows[0].count);

describe('bill/create authenticates in its own statement, with the errors in the usual order', () => {
  it('a wrong token is 401 whatever the body: valid, invalid, or an invalid amount', async () => {
    for (const body of [{ amount: '10.00', shop_id: m.shopId }, { shop_id: m.shopId }, { amount: '-1', shop_id: m.shopId }, { amount: '10.00', shop_id: 'nope' }]) {
      const r = await create({ authorization: 'Bearer wrong-token' }, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(401);
      expect(r.json()).toEqual({ success: false, message: 'Unauthenticated.' });
    }
  });

  it('a banned merchant gets merchant_banned before validation, amount and shop errors, and nothing is stored', async () => {
    const banned = await createMerchant(t, { merchant: { status: 'BANNED' } });
    for (const body of [{ amount: '10.00', shop_id: banned.shopId }, { shop_id: banned.shopId }, { amount: '0', shop_id: banned.shopId }, { amount: '1', shop_id: 'nope' }]) {
      const r = await create(banned.auth, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(403);
      expect(r.json().message).toBe('api:error.merchant_banned');
    }
    expect(await bills(banned.merchantId)).toBe(0);
  });

  it('an inactive or missing subscription is refused with its key, and nothing is stored', async () => {
    for (const [subscription, key] of [['INACTIVE', 'merchant_subscription_inactive'], ['NONE', 'merchant_subscription_not_found']] as const) {
      const x = await createMerchant(t, { merchant: { subscription } });
      const r = await create(x.auth, { amount: '10.00', shop_id: x.shopId });
      expect(r.statusCode).toBe(403);
      expect(r.json().message).toBe(`api:error.${key}`);
      expect(await bills(x.merchantId)).toBe(0);
    }
  });

  it('a token refreshed a moment ago is refused at once; the new one creates', async () => {
    const x = await createMerchant(t);
    const fresh = await t.app.services.merchants.refreshToken(x.merchantId);
    expect((await create(x.auth, { amount: '10.00', shop_id: x.shopId })).statusCode).toBe(401);
    expect((await create({ authorization: `Bearer ${fresh}` }, { amount: '10.00', shop_id: x.shopId })).statusCode).toBe(200);
  });

  it('with an Idempotency-Key the usual hook authenticates, with the same answers', async () => {
    expect((await create({ authorization: 'Bearer wrong-token', 'idempotency-key': 'k1' }, { amount: '10.00', shop_id: m.shopId })).statusCode).toBe(401);
    const r = await create({ ...m.auth, 'idempotency-key': 'k2' }, { amount: '10.00', shop_id: m.shopId });
    expect(r.statusCode).toBe(200);
    expect(r.json().success).toBe('true');
  });
});
