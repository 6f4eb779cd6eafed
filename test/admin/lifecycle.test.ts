import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { admin, adminMerchant } from './helpers.js';

// The operator's settings as the merchant API sees them, end to end over HTTP.
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

async function api(token: string, url: string, payload: Record<string, unknown>) {
  const r = await t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: { authorization: `Bearer ${token}` }, payload });
  return { status: r.statusCode, body: r.json() as Record<string, any> };
}

async function fundedMerchant(amount = '10000') {
  const m = await adminMerchant(t);
  const acc = await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '4242424242424242', card_holder: 'IVAN PETROV' });
  expect(acc.status).toBe(201);
  expect((await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount, reason: 'funding' })).status).toBe(201);
  return { m, accountId: acc.body.id as string };
}

describe('merchant lifecycle through the merchant API', () => {
  it('an unverified merchant cannot pay out; once verified it can, to its stored account', async () => {
    const { m, accountId } = await fundedMerchant();
    const before = await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId });
    expect(before.status).toBe(400);
    expect(before.body.message).toBe('api:error.merchant_not_verified');
    await admin(t, 'PATCH', `/merchants/${m.id}`, { verified: true });
    const after = await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId });
    expect(after.status).toBe(200);
    expect(after.body.data).toHaveLength(1);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a banned payout account refuses payouts (payout_account_banned) until unbanned', async () => {
    const { m, accountId } = await fundedMerchant();
    await admin(t, 'PATCH', `/merchants/${m.id}`, { verified: true });
    await admin(t, 'PATCH', `/payout-accounts/${accountId}`, { status: 'banned' });
    const r = await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('api:error.payout_account_banned');
    await admin(t, 'PATCH', `/payout-accounts/${accountId}`, { status: 'active' });
    expect((await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId })).status).toBe(200);
  });

  it("another merchant's payout account is not found for this merchant", async () => {
    const { accountId } = await fundedMerchant();
    const other = await fundedMerchant();
    await admin(t, 'PATCH', `/merchants/${other.m.id}`, { verified: true });
    const r = await api(other.m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('api:error.payout_account_not_found');
  });

  it('the regular payout needs the grant (403 until the operator grants it)', async () => {
    const { m } = await fundedMerchant();
    await admin(t, 'PATCH', `/merchants/${m.id}`, { verified: true });
    const body = { amount: '100', currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN PETROV' };
    const denied = await api(m.api_token, '/payout/regular/create', body);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ success: false, message: 'This action is unauthorized.' });
    await admin(t, 'PATCH', `/merchants/${m.id}`, { grants: { regular_payouts: true } });
    expect((await api(m.api_token, '/payout/regular/create', body)).status).toBe(200);
  });

  it('a daily limit set by the operator refuses payouts beyond it; clearing it lifts it', async () => {
    const { m, accountId } = await fundedMerchant();
    await admin(t, 'PATCH', `/merchants/${m.id}`, { verified: true, payout_daily_limit: '150' });
    expect((await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId })).status).toBe(200);
    const over = await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId });
    expect(over.status).toBe(400);
    expect(over.body.message).toBe('api:error.daily_payout_limit_exceeded');
    await admin(t, 'PATCH', `/merchants/${m.id}`, { payout_daily_limit: null });
    expect((await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId })).status).toBe(200);
  });

  it('payout fees set by the operator are charged on payouts (hold = commission)', async () => {
    const { m, accountId } = await fundedMerchant('1000');
    await admin(t, 'PATCH', `/merchants/${m.id}`, { verified: true, fees: { payout_card_percent: '2', payout_card_fixed: '10' } });
    const r = await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId });
    expect(r.status).toBe(200);
    const b = await t.db.pool.query(`SELECT available::text, locked::text, hold::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.id]);
    // 2% of 100 + 10 = 12 held; 100 locked; 888 left.
    expect(b.rows[0]).toEqual({ available: '888.00000000', locked: '100.00000000', hold: '12.00000000' });
  });

  it('over the moderation threshold a payout waits for the operator, who approves or declines it', async () => {
    const { m, accountId } = await fundedMerchant('1000');
    await admin(t, 'PATCH', `/merchants/${m.id}`, { verified: true, moderation_threshold: '50' });
    const a = await api(m.api_token, '/payout/personal/create', { amount: '100', payout_account_id: accountId });
    const b = await api(m.api_token, '/payout/personal/create', { amount: '200', payout_account_id: accountId });
    expect([a.body.data[0].status, b.body.data[0].status]).toEqual(['MODERATING', 'MODERATING']);
    expect((await admin(t, 'POST', `/payouts/${a.body.data[0].id}/approve`)).status).toBe(200);
    expect((await t.db.prisma.payout.findUniqueOrThrow({ where: { id: a.body.data[0].id } })).status).toBe('PROCESS');
    expect((await admin(t, 'POST', `/payouts/${b.body.data[0].id}/decline`, { reason: 'suspicious' })).status).toBe(200);
    expect((await t.db.prisma.payout.findUniqueOrThrow({ where: { id: b.body.data[0].id } })).status).toBe('DECLINED');
    // Declined money is back; the approved payout stays locked until it finishes.
    const bal = await t.db.pool.query(`SELECT available::text, locked::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.id]);
    expect(bal.rows[0]).toEqual({ available: '900.00000000', locked: '100.00000000' });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('an exchange rate set by the operator allows USD bills, priced to the payer in RUB; deleting it refuses them again', async () => {
    const m = await adminMerchant(t);
    const shop = (await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'USD shop' })).body;
    const create = () => api(m.api_token, '/bill/create', { amount: '10', shop_id: shop.id, currency_in: 'USD' });
    const refused = await create();
    expect(refused.status).not.toBe(200);
    expect(refused.body.message).toBe('api:error.rate-not-found');
    await admin(t, 'PUT', '/rates/USD', { rub_per_unit: '92.5' });
    const bill = await create();
    expect(bill.status, JSON.stringify(bill.body)).toBe(200);
    const billId = String(bill.body.link_page_url).split('/').pop()!;
    const paid = await t.app.inject({ method: 'POST', url: `/pay/${billId}`, headers: { accept: 'application/json' }, payload: { method: 'SBP' } });
    expect(paid.statusCode, paid.body).toBe(200);
    const p = await t.db.prisma.payment.findUniqueOrThrow({ where: { id: paid.json().payment_id } });
    expect([p.amount.toString(), p.currencyIn, p.billCurrency]).toEqual(['925', 'RUB', 'USD']);
    await admin(t, 'DELETE', '/rates/USD');
    expect((await create()).body.message).toBe('api:error.rate-not-found');
  });
});
