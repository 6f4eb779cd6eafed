import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { admin, adminMerchant, merchantBalance } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

describe('POST /admin/v1/merchants', () => {
  it('creates an active, unverified merchant with an active subscription, no grants and the documented defaults', async () => {
    const r = await admin(t, 'POST', '/merchants', { name: 'Shop LLC', email: 'Owner@Example.test', password: 'secret-pass' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      success: true, name: 'Shop LLC', email: 'owner@example.test', status: 'active', verified: false,
      subscription: 'active', grants: { refunds: false, regular_payouts: false },
      payout_daily_limit: null, payout_monthly_limit: null, moderation_threshold: null,
      payout_max_card: '150000.00000000', payout_max_sbp: '1000000.00000000', has_password: true, payout_webhook_url: null,
    });
    expect(r.body.id).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(r.body.api_token.length).toBeGreaterThanOrEqual(40);
    expect(r.body).not.toHaveProperty('api_token_hash');
    expect(JSON.stringify(r.body)).not.toMatch(/apiToken(Hash|Enc)|password_hash|passwordHash/);
    const row = await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: r.body.id } });
    expect(row.passwordHash).not.toBe('secret-pass');
  });

  it('the returned API token works on the merchant API at once, with all three balances', async () => {
    const m = await adminMerchant(t);
    const b = await merchantBalance(t, m.api_token);
    expect(b.status).toBe(200);
    expect(b.body.balances.map((x: { currency: string }) => x.currency).sort()).toEqual(['EUR', 'RUB', 'USD']);
  });

  it('a taken email (any case) is a 422 on email and creates nothing', async () => {
    await admin(t, 'POST', '/merchants', { name: 'A', email: 'dup@example.test' });
    const before = await t.db.prisma.merchant.count();
    const r = await admin(t, 'POST', '/merchants', { name: 'B', email: 'DUP@example.test' });
    expect(r.status).toBe(422);
    expect(r.body.errors.email).toBeDefined();
    expect(await t.db.prisma.merchant.count()).toBe(before);
  });

  it('concurrent creations with one email: exactly one 201, the rest 422, never a 500', async () => {
    const rs = await Promise.all(Array.from({ length: 10 }, () => admin(t, 'POST', '/merchants', { name: 'Race', email: 'race@example.test' })));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 422)).toHaveLength(9);
    expect(await t.db.prisma.merchant.count({ where: { email: 'race@example.test' } })).toBe(1);
  });

  it('missing or malformed fields are a 422 naming each field', async () => {
    const r = await admin(t, 'POST', '/merchants', { email: 'not-an-email', password: 'x'.repeat(256) });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors).sort()).toEqual(['email', 'name', 'password']);
    expect(r.body.success).toBe(false);
  });
});

describe('GET /admin/v1/merchants', () => {
  it('lists merchants and finds one by email', async () => {
    const m = await adminMerchant(t);
    const all = await admin(t, 'GET', '/merchants');
    expect(all.status).toBe(200);
    expect(all.body.data.some((x: { id: string }) => x.id === m.id)).toBe(true);
    const one = await admin(t, 'GET', `/merchants?email=${encodeURIComponent(m.email)}`);
    expect(one.body.data.map((x: { id: string }) => x.id)).toEqual([m.id]);
  });

  it('shows one merchant with its balances; unknown ids are 404', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'GET', `/merchants/${m.id}`);
    expect(r.status).toBe(200);
    expect(r.body.balances).toHaveLength(3);
    expect(r.body.balances[0]).toEqual({ currency: expect.any(String), balance_available: '0.00000000', balance_locked: '0.00000000', balance_hold: '0.00000000' });
    for (const id of ['nope', 'x'.repeat(100), '%27%3B--']) {
      const nf = await admin(t, 'GET', `/merchants/${id}`);
      expect(nf.status).toBe(404);
      expect(nf.body.success).toBe(false);
    }
  });
});

describe('PATCH /admin/v1/merchants/{id}', () => {
  it('sets verification, grants, limits, payout maxima and fees (strings or numbers)', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'PATCH', `/merchants/${m.id}`, {
      verified: true, grants: { refunds: true, regular_payouts: 1 },
      payout_daily_limit: '1000.50', payout_monthly_limit: 20000, moderation_threshold: '500',
      payout_max_card: '75000', payout_max_sbp: 300000.25,
      fees: { payment_card_percent: '2.5', payment_card_fixed: 10, payout_sbp_percent: 1.25, payout_sbp_fixed: '0.99' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      verified: true, grants: { refunds: true, regular_payouts: true },
      payout_daily_limit: '1000.50000000', payout_monthly_limit: '20000.00000000', moderation_threshold: '500.00000000',
      payout_max_card: '75000.00000000', payout_max_sbp: '300000.25000000',
      fees: { payment_card_percent: '2.5', payment_card_fixed: '10.00', payout_sbp_percent: '1.25', payout_sbp_fixed: '0.99', payment_sbp_percent: '0' },
    });
    const row = await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.id } });
    expect(row.grantRegularPayouts).toBe(true);
    expect(row.paymentCardPercent?.toString()).toBe('2.5');
    expect(row.payoutDailyLimit?.toString()).toBe('1000.5');
  });

  it('null clears a limit or fee and restores a payout maximum to its default', async () => {
    const m = await adminMerchant(t);
    await admin(t, 'PATCH', `/merchants/${m.id}`, { payout_daily_limit: '10', payout_max_card: '5', fees: { payment_card_percent: '3' } });
    const r = await admin(t, 'PATCH', `/merchants/${m.id}`, { payout_daily_limit: null, payout_max_card: null, fees: { payment_card_percent: null } });
    expect(r.status).toBe(200);
    expect(r.body.payout_daily_limit).toBeNull();
    expect(r.body.payout_max_card).toBe('150000.00000000');
    const row = await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.id } });
    expect(row.paymentCardPercent).toBeNull();
  });

  it('fees shown are the operator defaults where the merchant has none', async () => {
    const t2 = await setupTestApp({ FEE_PAYMENT_CARD_PERCENT: '3.5', FEE_PAYOUT_CARD_FIXED: '25' });
    try {
      const m = await adminMerchant(t2);
      expect(m.fees).toMatchObject({ payment_card_percent: '3.5', payout_card_fixed: '25.00' });
    } finally { await t2.close(); }
  });

  it('refuses bad values with a 422 per field and writes nothing', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'PATCH', `/merchants/${m.id}`, {
      verified: true, status: 'frozen', subscription: 'gold', grants: { refunds: 'maybe' },
      payout_daily_limit: '-1', payout_monthly_limit: 'abc', moderation_threshold: '1.123456789',
      payout_max_card: '0', payout_max_sbp: '1e30',
      fees: { payment_card_percent: '100.01', payment_sbp_fixed: '-0.01', payout_card_fixed: '1.001', payout_sbp_percent: '1.00001' },
    });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors).sort()).toEqual([
      'fees.payment_card_percent', 'fees.payment_sbp_fixed', 'fees.payout_card_fixed', 'fees.payout_sbp_percent',
      'grants.refunds', 'moderation_threshold', 'payout_daily_limit', 'payout_max_card', 'payout_max_sbp', 'payout_monthly_limit',
      'status', 'subscription',
    ]);
    const row = await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.id } });
    expect(row.verified).toBe(false);
  });

  it('grants and fees must be objects', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'PATCH', `/merchants/${m.id}`, { grants: true, fees: '2' });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors).sort()).toEqual(['fees', 'grants']);
  });

  it('percent 100 and 0 are accepted (the bounds are inclusive)', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'PATCH', `/merchants/${m.id}`, { fees: { payment_card_percent: '100', payment_sbp_percent: '0' } });
    expect(r.status).toBe(200);
    expect(r.body.fees.payment_card_percent).toBe('100');
  });

  it('a banned merchant is refused by the merchant API (403 merchant_banned); unbanning restores it', async () => {
    const m = await adminMerchant(t);
    expect((await admin(t, 'PATCH', `/merchants/${m.id}`, { status: 'banned' })).body.status).toBe('banned');
    const b = await merchantBalance(t, m.api_token);
    expect(b.status).toBe(403);
    expect(b.body).toEqual({ success: false, message: 'api:error.merchant_banned' });
    await admin(t, 'PATCH', `/merchants/${m.id}`, { status: 'ACTIVE' });
    expect((await merchantBalance(t, m.api_token)).status).toBe(200);
  });

  it('subscription none / inactive reach the merchant API as their spec keys', async () => {
    const m = await adminMerchant(t);
    await admin(t, 'PATCH', `/merchants/${m.id}`, { subscription: 'none' });
    expect((await merchantBalance(t, m.api_token)).body.message).toBe('api:error.merchant_subscription_not_found');
    await admin(t, 'PATCH', `/merchants/${m.id}`, { subscription: 'inactive' });
    expect((await merchantBalance(t, m.api_token)).body.message).toBe('api:error.merchant_subscription_inactive');
  });

  it('an empty PATCH changes nothing and answers the merchant', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'PATCH', `/merchants/${m.id}`, {});
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: m.id, status: 'active', verified: false });
  });

  it('unknown merchant is 404', async () => {
    expect((await admin(t, 'PATCH', '/merchants/unknown', { verified: true })).status).toBe(404);
  });
});

describe('POST /admin/v1/merchants/{id}/token', () => {
  it('issues a new token; the old one is 401 on the merchant API at once', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/token`);
    expect(r.status).toBe(200);
    expect(r.body.api_token).not.toBe(m.api_token);
    const old = await merchantBalance(t, m.api_token);
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ success: false, message: 'Unauthenticated.' });
    expect((await merchantBalance(t, r.body.api_token)).status).toBe(200);
    // Postbacks are signed with the current token.
    expect(await t.app.services.merchants.currentToken(m.id)).toBe(r.body.api_token);
  });

  it('unknown merchant is 404', async () => {
    expect((await admin(t, 'POST', '/merchants/unknown/token')).status).toBe(404);
  });
});

describe('PUT /admin/v1/merchants/{id}/payout-webhook', () => {
  it('sets and clears the payout webhook URL', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'PUT', `/merchants/${m.id}/payout-webhook`, { url: 'https://merchant.example/hooks/payout' });
    expect(r.status).toBe(200);
    expect(r.body.payout_webhook_url).toBe('https://merchant.example/hooks/payout');
    const c = await admin(t, 'PUT', `/merchants/${m.id}/payout-webhook`, { url: null });
    expect(c.body.payout_webhook_url).toBeNull();
    await admin(t, 'PUT', `/merchants/${m.id}/payout-webhook`, { url: 'https://merchant.example/x' });
    expect((await admin(t, 'PUT', `/merchants/${m.id}/payout-webhook`, { url: '' })).body.payout_webhook_url).toBeNull();
  });

  it('refuses non-http(s) URLs and a missing url key with 422', async () => {
    const m = await adminMerchant(t);
    for (const payload of [{ url: 'ftp://merchant.example/x' }, { url: 'not a url' }, { url: 5 }, {}]) {
      const r = await admin(t, 'PUT', `/merchants/${m.id}/payout-webhook`, payload);
      expect(r.status, JSON.stringify(payload)).toBe(422);
      expect(r.body.errors.url).toBeDefined();
    }
  });

  it('unknown merchant is 404', async () => {
    expect((await admin(t, 'PUT', '/merchants/unknown/payout-webhook', { url: 'https://a.example' })).status).toBe(404);
  });
});
