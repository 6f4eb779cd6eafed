import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { post } from '../../src/domain/ledger/ledger.js';
import { adjustment } from '../../src/domain/ledger/postings.js';
import { encrypt } from '../../src/lib/crypto.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { payNewBill } from '../factories/payment.js';

/** Merchant B probes every endpoint that takes an id with merchant A's ids: never a 200, nothing of A's changes. */
let t: TestApp;
let a: MerchantFixture;
let b: MerchantFixture;
const ids: Record<string, string> = {};

async function snapshotOfA(): Promise<string> {
  const r = await t.db.pool.query(`SELECT
    (SELECT json_agg(json_build_object('id', id, 'status', status, 'active', active) ORDER BY id) FROM bills WHERE merchant_id = $1) AS bills,
    (SELECT json_agg(json_build_object('id', id, 'status', status, 'refunded', refunded_amount) ORDER BY id) FROM payments WHERE merchant_id = $1) AS payments,
    (SELECT count(*) FROM payouts WHERE merchant_id = $1) AS payouts, (SELECT count(*) FROM refunds WHERE merchant_id = $1) AS refunds,
    (SELECT json_agg(available::text || locked::text || hold::text ORDER BY currency) FROM balances WHERE merchant_id = $1) AS balances`, [a.merchantId]);
  return JSON.stringify(r.rows[0]);
}

beforeAll(async () => {
  t = await setupTestApp();
  const grants = { merchant: { verified: true, grantRefunds: true, grantRegularPayouts: true } };
  a = await createMerchant(t, grants);
  b = await createMerchant(t, grants);
  for (const m of [a, b]) {
    await withPgTx(t.db.pool, (c) => post(c, adjustment({ adjustmentId: `fund-${m.merchantId}`, merchantId: m.merchantId, currency: 'RUB', amount: new Decimal(10000) })));
  }
  const paid = await payNewBill(t, a, { amount: '100.00' });
  ids.bill = paid.billId;
  ids.payment = paid.paymentId;
  const acct = await t.db.pool.query(
    `INSERT INTO payout_accounts (id, merchant_id, type, identifier_enc, identifier_masked, card_holder) VALUES ('xacctA0000000001', $1, 'CARD', $2, '424242******4242', 'A HOLDER') RETURNING id`,
    [a.merchantId, encrypt(t.config.tokenEncryptionKey, '4242424242424242')],
  );
  ids.account = acct.rows[0].id;
  const payout = await t.app.inject({ method: 'POST', url: '/api/v1/payout/personal/create', headers: a.auth, payload: { amount: '10.00', payout_account_id: ids.account, order_id: 'A-order-1' } });
  expect(payout.statusCode).toBe(200);
  ids.payout = payout.json().data[0].id;
  const refund = await t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: a.auth, payload: { payment_id: ids.payment, amount: '1.00' } });
  expect(refund.statusCode).toBe(200);
  ids.refund = refund.json().id;
});
afterAll(async () => { await t.close(); });

const probes: Array<[string, 'GET' | 'POST', string, () => Record<string, string>]> = [
  ['bill/status', 'GET', '/api/v1/bill/status', () => ({ id: ids.bill! })],
  ['bill/payments', 'GET', '/api/v1/bill/payments', () => ({ id: ids.bill! })],
  ['bill/toggle_activity', 'POST', '/api/v1/bill/toggle_activity', () => ({ id: ids.bill!, active: '0' })],
  ['bill/create on A\'s shop', 'POST', '/api/v1/bill/create', () => ({ amount: '10.00', shop_id: a.shopId })],
  ['payment/status', 'GET', '/api/v1/payment/status', () => ({ id: ids.payment! })],
  ['payout/status by id', 'GET', '/api/v1/payout/status', () => ({ id: ids.payout! })],
  ['payout/status by order_id', 'GET', '/api/v1/payout/status', () => ({ order_id: 'A-order-1' })],
  ['payout/personal/create to A\'s account', 'POST', '/api/v1/payout/personal/create', () => ({ amount: '10.00', payout_account_id: ids.account! })],
  ['refund/status by payment_id', 'GET', '/api/v1/refund/status', () => ({ payment_id: ids.payment! })],
  ['refund/status by id', 'GET', '/api/v1/refund/status', () => ({ id: ids.refund! })],
  ['refund/full/create', 'POST', '/api/v1/refund/full/create', () => ({ payment_id: ids.payment! })],
  ['refund/partial/create', 'POST', '/api/v1/refund/partial/create', () => ({ payment_id: ids.payment!, amount: '1.00' })],
];

describe('cross-merchant probes', () => {
  it.each(probes)('%s with merchant A\'s id, as merchant B: never a 200, nothing of A\'s changes', async (_name, method, url, fields) => {
    const before = await snapshotOfA();
    const r = method === 'GET'
      ? await t.app.inject({ method, url, headers: b.auth, query: fields() })
      : await t.app.inject({ method, url, headers: b.auth, payload: fields() });
    expect(r.statusCode).not.toBe(200);
    expect(r.statusCode).toBeGreaterThanOrEqual(400);
    expect(r.statusCode).toBeLessThan(500);
    expect(r.json().success).toBe(false);
    expect(r.body).not.toContain(a.merchantId);
    expect(await snapshotOfA()).toBe(before);
  });

  it('merchant A still reads its own objects (the probes used real ids)', async () => {
    for (const [url, q] of [['/api/v1/bill/status', { id: ids.bill! }], ['/api/v1/payment/status', { id: ids.payment! }], ['/api/v1/payout/status', { id: ids.payout! }], ['/api/v1/refund/status', { id: ids.refund! }]] as const) {
      const r = await t.app.inject({ method: 'GET', url, headers: a.auth, query: q });
      expect(r.statusCode, url).toBe(200);
    }
  });
});
