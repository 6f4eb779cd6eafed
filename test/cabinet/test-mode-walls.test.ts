import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { cabinetMerchant, signedIn, type CabinetClient, type CabinetMerchant } from './helpers.js';

/**
 * One merchant, one team, one allow-list across modes (issue 26 item 3): every cabinet form in
 * test mode acts on test objects only (a test bill, a test payout account, a test payout from
 * the test balance through the sandbox, a refund of a test payment) and never creates anything
 * live; what both modes share (the team, the IP allow-list) is the live merchant's, whichever
 * mode the form was sent in.
 */

let t: TestApp;
let m: CabinetMerchant;
let c: CabinetClient;
let twinId: string;

const one = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []) => (await t.db.pool.query(sql, params)).rows[0] as T;
const count = async (sql: string, params: unknown[]) => Number((await one<{ count: string }>(sql, params)).count);
const switchTo = (mode: 'live' | 'test') => c.submit('/cabinet', '/cabinet/mode', { mode, back: '/cabinet' });
const admin = (method: 'GET' | 'POST', url: string) => t.app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

/** A paid bill of `merchantId` (its token), for the refund forms. */
async function paidPayment(token: string, amount: string): Promise<string> {
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { authorization: `Bearer ${token}` }, payload: { amount, shop_id: m.shopId } });
  expect(r.statusCode, r.body).toBe(200);
  const p = await payRequest(t, r.json().bill_id, cardForm());
  expect(p.json().status).toBe('SUCCESS');
  return p.json().payment_id as string;
}

beforeAll(async () => {
  t = await setupTestApp();
  m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
  c = await signedIn(t, m);
  twinId = (await t.app.services.merchants.ensureTestTwin(m.merchantId)).twin.id;
});
afterAll(async () => { await t.close(); });

describe.each(['live', 'test'] as const)('cabinet forms in %s mode', (mode) => {
  const own = () => (mode === 'test' ? twinId : m.merchantId);
  const other = () => (mode === 'test' ? m.merchantId : twinId);

  beforeAll(async () => { expect((await switchTo(mode)).statusCode).toBe(303); });

  it('a new bill is this mode\'s and nothing of the other mode is created', async () => {
    const r = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '15.00', shop_id: m.shopId, order_id: `walls-${mode}` });
    expect(r.statusCode, r.body).toBe(303);
    expect(await count('SELECT count(*) FROM bills WHERE order_id = $1 AND merchant_id = $2', [`walls-${mode}`, own()])).toBe(1);
    expect(await count('SELECT count(*) FROM bills WHERE order_id = $1 AND merchant_id = $2', [`walls-${mode}`, other()])).toBe(0);
  });

  it('a payout account, then a payout to it from this mode\'s balance, through the connector of this mode', async () => {
    const acc = await c.submit('/cabinet/accounts', '/cabinet/accounts', { type: 'card', identifier: '4242424242424242', card_holder: 'IVAN PETROV' });
    expect(acc.statusCode, acc.body).toBe(303);
    const account = await one<{ id: string; merchant_id: string }>('SELECT id, merchant_id FROM payout_accounts WHERE merchant_id = ANY($1) ORDER BY created_at DESC LIMIT 1', [[own(), other()]]);
    expect(account.merchant_id).toBe(own());
    // Money on this mode's balance only: the other mode's stays 0.
    await t.app.services.adjustments.create(own(), { currency: 'RUB', amount: new (await import('decimal.js')).Decimal('500'), reason: 'walls test' });
    const before = await one<{ available: string }>(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [other()]);
    const p = await c.submit('/cabinet/payouts/new', '/cabinet/payouts', { amount: '100.00', payout_account_id: account.id, order_id: `po-${mode}` });
    expect(p.statusCode, p.body).toBe(303);
    const payout = await one<{ merchant_id: string }>('SELECT merchant_id FROM payouts WHERE order_id = $1', [`po-${mode}`]);
    expect(payout.merchant_id).toBe(own());
    expect(await one(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [other()])).toEqual(before);
    expect(await count('SELECT count(*) FROM payouts WHERE order_id = $1 AND merchant_id = $2', [`po-${mode}`, other()])).toBe(0);
  });

  it('a refund of this mode\'s payment comes out of this mode\'s balance', async () => {
    const token = mode === 'test' ? (await t.app.services.merchants.refreshTestToken(m.merchantId)).apiToken : m.token;
    const paymentId = await paidPayment(token, '80.00');
    const page = await c.get(`/cabinet/payments/${paymentId}`);
    expect(page.statusCode, page.body).toBe(200);
    const r = await c.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'partial', amount: '30.00' });
    expect(r.statusCode, r.body).toBe(303);
    expect(await one('SELECT merchant_id, amount::text FROM refunds WHERE payment_id = $1', [paymentId])).toEqual({ merchant_id: own(), amount: '30.00' });
  });

  it('an invited member joins the live merchant\'s team, listed by the cabinet and the operator API', async () => {
    const email = `member-${mode}@walls.test`;
    const r = await c.submit('/cabinet/team', '/cabinet/team', { email, role: 'support' });
    expect(r.statusCode, r.body).toBeLessThan(400);
    expect(await one('SELECT merchant_id FROM merchant_users WHERE email = $1', [email])).toEqual({ merchant_id: m.merchantId });
    const team = await admin('GET', `/admin/v1/merchants/${m.merchantId}/team`);
    expect(team.statusCode).toBe(200);
    expect(JSON.stringify(team.json())).toContain(email);
    await switchTo('live');
    expect((await c.get('/cabinet/team')).body).toContain(email);
    await switchTo(mode);
  });

  it('the IP allow-list set here is the one setting both tokens obey', async () => {
    const r = await c.submit('/cabinet/api', '/cabinet/api/allowlist', { api_ip_allowlist: '203.0.113.7' });
    expect(r.statusCode, r.body).toBe(303);
    const rows = await t.db.pool.query('SELECT id, api_ip_allowlist FROM merchants WHERE id = ANY($1) ORDER BY id', [[m.merchantId, twinId]]);
    for (const row of rows.rows) expect(row.api_ip_allowlist).toEqual(['203.0.113.7']);
    const testToken = (await t.app.services.merchants.refreshTestToken(m.merchantId)).apiToken;
    for (const token of [m.token, testToken]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${token}` }, remoteAddress: '198.51.100.1' });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('api:error.ip_access_denied');
    }
    await c.submit('/cabinet/api', '/cabinet/api/allowlist', { api_ip_allowlist: '' });
  });
});

describe('the database keeps the walls whatever the code does', () => {
  it('a team member cannot be attached to a test twin', async () => {
    await expect(t.db.pool.query(
      `INSERT INTO merchant_users (id, merchant_id, email, role) VALUES ('mu-twin', $1, 'twin-member@walls.test', 'SUPPORT')`, [twinId],
    )).rejects.toThrow(/merchant_users_merchant_live_fkey|foreign key/);
  });

  it("a twin's allow-list (or any setting it copies) cannot be written on its own: it follows the live merchant's", async () => {
    await expect(t.db.pool.query(`UPDATE merchants SET api_ip_allowlist = '[]'::jsonb WHERE id = $1`, [twinId]))
      .rejects.toThrow(/test twin/);
    await t.db.pool.query(`UPDATE merchants SET api_ip_allowlist = '["192.0.2.1"]'::jsonb WHERE id = $1`, [m.merchantId]);
    expect(await one('SELECT api_ip_allowlist FROM merchants WHERE id = $1', [twinId])).toEqual({ api_ip_allowlist: ['192.0.2.1'] });
    await t.db.pool.query('UPDATE merchants SET api_ip_allowlist = NULL WHERE id = $1', [m.merchantId]);
  });
});
