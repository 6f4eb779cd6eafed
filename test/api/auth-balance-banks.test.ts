import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { post } from '../../src/domain/ledger/ledger.js';
import { adjustment, payoutCreated } from '../../src/domain/ledger/postings.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, expectKeyed, insertPayment, setMerchant } from './support.js';

let t: TestApp;
let m: MerchantFixture;
let billId: string;
let paymentId: string;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  billId = await createBill(t, m);
  paymentId = await insertPayment(t, m, billId);
});
afterAll(async () => { await t.close(); });

interface Endpoint { name: string; method: 'GET' | 'POST'; url: string; payload?: () => Record<string, unknown>; subscription: boolean }
const endpoints: Endpoint[] = [
  { name: 'bill/create', method: 'POST', url: '/api/v1/bill/create', payload: () => ({ amount: '1', shop_id: m.shopId }), subscription: true },
  { name: 'bill/toggle_activity', method: 'POST', url: '/api/v1/bill/toggle_activity', payload: () => ({ id: billId, active: 1 }), subscription: true },
  { name: 'bill/status', method: 'GET', url: '/api/v1/bill/status', payload: () => ({ id: billId }), subscription: false },
  { name: 'bill/payments', method: 'GET', url: '/api/v1/bill/payments', payload: () => ({ id: billId }), subscription: false },
  { name: 'bill/search', method: 'GET', url: '/api/v1/bill/search', subscription: false },
  { name: 'payment/status', method: 'GET', url: '/api/v1/payment/status', payload: () => ({ id: paymentId }), subscription: false },
  { name: 'payment/search', method: 'GET', url: '/api/v1/payment/search', subscription: false },
  { name: 'merchant/balance', method: 'GET', url: '/api/v1/merchant/balance', subscription: true },
  { name: 'payout/dictionaries/sbp_banks', method: 'GET', url: '/api/v1/payout/dictionaries/sbp_banks', subscription: false },
];

const call = (e: Endpoint, headers: Record<string, string>) => {
  const p = e.payload?.() ?? {};
  return e.method === 'GET'
    ? t.app.inject({ method: 'GET', url: e.url, query: p as Record<string, string>, headers })
    : t.app.inject({ method: 'POST', url: e.url, payload: p, headers });
};

describe.each(endpoints)('$name: authentication and merchant state', (e) => {
  it('answers 200 for an active merchant with an active subscription', async () => {
    const r = await call(e, m.auth);
    expect(r.statusCode, r.body).toBe(200);
  });

  it('a missing, malformed or wrong token is 401 {"success":false,"message":"Unauthenticated."}', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer' }, { authorization: `Basic ${m.token}` }, { authorization: 'Bearer wrong-token' }, { authorization: m.token }]) {
      const r = await call(e, headers);
      expect(r.statusCode).toBe(401);
      expect(r.json()).toEqual({ success: false, message: 'Unauthenticated.' });
    }
  });

  it('a banned merchant is 403 api:error.merchant_banned', async () => {
    await setMerchant(t, m, { status: 'BANNED' });
    try {
      expectKeyed(await call(e, m.auth), 403, 'merchant_banned');
    } finally {
      await setMerchant(t, m, { status: 'ACTIVE' });
    }
  });

  it(e.subscription
    ? 'an inactive subscription is 403 merchant_subscription_inactive, none is 403 merchant_subscription_not_found'
    : 'the subscription state does not matter (the spec lists no subscription key here)', async () => {
    try {
      await setMerchant(t, m, { subscription: 'INACTIVE' });
      const inactive = await call(e, m.auth);
      await setMerchant(t, m, { subscription: 'NONE' });
      const none = await call(e, m.auth);
      if (e.subscription) {
        expectKeyed(inactive, 403, 'merchant_subscription_inactive');
        expectKeyed(none, 403, 'merchant_subscription_not_found');
      } else {
        expect(inactive.statusCode, inactive.body).toBe(200);
        expect(none.statusCode, none.body).toBe(200);
      }
    } finally {
      await setMerchant(t, m, { subscription: 'ACTIVE' });
    }
  });
});

describe('GET /api/v1/merchant/balance', () => {
  it('lists RUB, USD and EUR with 8-decimal strings and success "true"', async () => {
    const fresh = await createMerchant(t);
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: fresh.auth });
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body.success).toBe('true');
    expect(body.balances.map((b: { currency: string }) => b.currency).sort()).toEqual(['EUR', 'RUB', 'USD']);
    for (const b of body.balances) {
      expect(b).toEqual({ currency: b.currency, balance_available: '0.00000000', balance_locked: '0.00000000', balance_hold: '0.00000000' });
    }
  });

  it("shows the merchant's own buckets after postings, never another merchant's", async () => {
    const a = await createMerchant(t);
    const b = await createMerchant(t);
    await withPgTx(t.db.pool, (c) => post(c, adjustment({ adjustmentId: `adj-${a.merchantId}`, merchantId: a.merchantId, currency: 'RUB', amount: new Decimal('1234.5') })));
    await withPgTx(t.db.pool, (c) => post(c, payoutCreated({ payoutId: `p-${a.merchantId}`, merchantId: a.merchantId, currency: 'RUB', amount: new Decimal('100'), commission: new Decimal('10.12345678') })));
    const rub = (await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: a.auth })).json()
      .balances.find((x: { currency: string }) => x.currency === 'RUB');
    expect(rub).toEqual({ currency: 'RUB', balance_available: '1124.37654322', balance_locked: '100.00000000', balance_hold: '10.12345678' });
    const other = (await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: b.auth })).json()
      .balances.find((x: { currency: string }) => x.currency === 'RUB');
    expect(other.balance_available).toBe('0.00000000');
  });
});

describe('GET /api/v1/payout/dictionaries/sbp_banks', () => {
  const banks = async () => (await t.app.inject({ method: 'GET', url: '/api/v1/payout/dictionaries/sbp_banks', headers: m.auth })).json();

  it('lists at least 30 active SBP banks with integer member_id and bic, and success "true"', async () => {
    const body = await banks();
    expect(body.success).toBe('true');
    expect(body.data.length).toBeGreaterThanOrEqual(30);
    expect(body.data).toContainEqual({ member_id: 100000000111, name: 'Сбербанк', name_en: 'Sberbank', bic: 44525225 });
    expect(body.data).toContainEqual(expect.objectContaining({ member_id: 100000000004, name_en: 'T-Bank' }));
    for (const b of body.data) {
      expect(Object.keys(b).sort()).toEqual(['bic', 'member_id', 'name', 'name_en']);
      expect(Number.isInteger(b.member_id) && Number.isInteger(b.bic)).toBe(true);
    }
  });

  it('member ids are the ones NSPK publishes (c2bmembers, via eav93/sbp data/banks.json): VTB 110000000005, Metallinvestbank 100000000046', async () => {
    const data = (await banks()).data as { member_id: number; name: string; name_en: string; bic: number }[];
    const ids = data.map((b) => b.member_id);
    expect(data).toContainEqual({ member_id: 110000000005, name: 'Банк ВТБ', name_en: 'VTB Bank', bic: 44525187 });
    expect(data).toContainEqual({ member_id: 100000000046, name: 'Металлинвестбанк', name_en: 'Metallinvestbank', bic: 44525176 });
    expect(data).toContainEqual({ member_id: 100000000010, name: 'Банк ПСБ', name_en: 'PSB', bic: 44525555 });
    expect(data).toContainEqual(expect.objectContaining({ member_id: 100000000273, name_en: 'Ozon Bank' }));
    expect(data).toContainEqual(expect.objectContaining({ member_id: 100000000150, name_en: 'Yandex Bank' }));
    // Ids NSPK gives to other banks (or to nobody) are not offered.
    expect(ids).not.toContain(100000000005);
    expect(ids).not.toContain(100000000041);
  });

  it('the wrong ids stay in the table, inactive, so payout accounts that reference them stay valid', async () => {
    const r = await t.db.pool.query('SELECT member_id::text, active FROM sbp_banks WHERE member_id IN (100000000005, 100000000041) ORDER BY member_id');
    expect(r.rows).toEqual([{ member_id: '100000000005', active: false }, { member_id: '100000000041', active: false }]);
  });

  it('a bank the operator deactivated is not listed', async () => {
    expect((await banks()).data.map((b: { member_id: number }) => b.member_id)).toContain(100000000008);
    await t.db.pool.query('UPDATE sbp_banks SET active = false WHERE member_id = 100000000008');
    try {
      expect((await banks()).data.map((b: { member_id: number }) => b.member_id)).not.toContain(100000000008);
    } finally {
      await t.db.pool.query('UPDATE sbp_banks SET active = true WHERE member_id = 100000000008');
    }
  });
});
