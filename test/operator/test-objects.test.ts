import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { card } from '../payout/helpers.js';
import { enrolledOperator, stuckPayment, type OperatorFixture } from './helpers.js';

/**
 * Test objects in the operator console: a test twin's payouts and attention items are marked
 * "test" and link to the live merchant (the twin has no console page of its own); the payouts
 * list filters live or test (docs/adr/0040-operator-console.md).
 */
let t: TestApp;
let op: OperatorFixture;
let live: { merchantId: string; twinId: string; livePayout: string; testPayout: string };

async function payout(token: string, shopId: string): Promise<string> {
  const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { authorization: `Bearer ${token}` }, payload: { amount: '300.00', shop_id: shopId } });
  expect((await payRequest(t, bill.json().bill_id, cardForm())).statusCode).toBe(200);
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: { authorization: `Bearer ${token}` }, payload: card('100') });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().data[0].id as string;
}

beforeAll(async () => {
  t = await setupTestApp();
  op = await enrolledOperator(t, 'finance');
  const m = await createMerchant(t, { merchant: { verified: true, grantRegularPayouts: true } });
  const tt = await t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/test-token`, headers: { authorization: 'Bearer test-admin-token-0123456789abcdef' } });
  const testToken = tt.json().api_token as string;
  const twinId = (await t.db.pool.query('SELECT id FROM merchants WHERE live_merchant_id = $1', [m.merchantId])).rows[0].id as string;
  live = { merchantId: m.merchantId, twinId, livePayout: await payout(m.token, m.shopId), testPayout: await payout(testToken, m.shopId) };
});
afterAll(async () => { await t?.close(); });

const rowOf = (html: string, attr: string, id: string) => {
  const start = html.indexOf(`${attr}="${id}"`);
  return start < 0 ? null : html.slice(start, html.indexOf('</tr>', start));
};

describe('payouts list', () => {
  it('shows live and test payouts, the test one marked "test" and linked to its live merchant', async () => {
    const status = (await t.db.pool.query('SELECT status::text FROM payouts WHERE id = $1', [live.testPayout])).rows[0].status as string;
    const page = (await op.client.get(`/operator/payouts?status=${status}`)).body;
    const testRow = rowOf(page, 'data-payout', live.testPayout)!;
    const liveRow = rowOf(page, 'data-payout', live.livePayout)!;
    expect(testRow).toContain('data-testid="test-badge"');
    expect(testRow).toContain(`test twin of</span> <a href="/operator/merchants/${live.merchantId}"`);
    expect(testRow).not.toContain(`/operator/merchants/${live.twinId}`);
    expect(liveRow).not.toContain('test-badge');
    // The link leads to a page (a twin has none of its own).
    expect((await op.client.get(`/operator/merchants/${live.merchantId}`)).statusCode).toBe(200);
  });

  it('the live/test switch shows only live or only test payouts', async () => {
    const status = (await t.db.pool.query('SELECT status::text FROM payouts WHERE id = $1', [live.testPayout])).rows[0].status as string;
    const liveOnly = (await op.client.get(`/operator/payouts?status=${status}&mode=live`)).body;
    expect(rowOf(liveOnly, 'data-payout', live.livePayout)).not.toBeNull();
    expect(rowOf(liveOnly, 'data-payout', live.testPayout)).toBeNull();
    const testOnly = (await op.client.get(`/operator/payouts?status=${status}&mode=test`)).body;
    expect(rowOf(testOnly, 'data-payout', live.testPayout)).not.toBeNull();
    expect(rowOf(testOnly, 'data-payout', live.livePayout)).toBeNull();
    // Anything else is "all".
    const all = (await op.client.get(`/operator/payouts?status=${status}&mode=bogus`));
    expect(all.statusCode).toBe(200);
    expect(rowOf(all.body, 'data-payout', live.testPayout)).not.toBeNull();
  });
});

describe('attention list', () => {
  it('an item of a test twin is marked "test" and links to the live merchant; a live one is not marked', async () => {
    const testItem = await stuckPayment(t, live.twinId);
    const liveItem = await stuckPayment(t);
    const page = (await op.client.get('/operator/attention')).body;
    const testRow = rowOf(page, 'data-attention', testItem.itemId)!;
    expect(testRow).toContain('data-testid="test-badge"');
    expect(testRow).toContain(`/operator/merchants/${live.merchantId}`);
    expect(rowOf(page, 'data-attention', liveItem.itemId)).not.toContain('test-badge');
  });
});

describe('merchant page', () => {
  it('a live merchant\'s page names its test twin and links to the twin\'s payouts', async () => {
    const page = (await op.client.get(`/operator/merchants/${live.merchantId}`)).body;
    expect(page).toContain(`id="test-twin"`);
    expect(page).toContain(`/operator/payouts?merchant_id=${live.twinId}&#38;mode=test`);
  });
});
