import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { admin, adminMerchant, merchantBalance } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const available = async (merchantId: string, currency = 'RUB') =>
  (await t.db.pool.query('SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = $2', [merchantId, currency])).rows[0].available as string;

describe('POST /admin/v1/merchants/{id}/balance-adjustments', () => {
  it('a credit writes the adjustment and one ADJUSTMENT ledger entry, and the merchant sees it', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '1500.25', reason: 'opening balance' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      success: true, merchant_id: m.id, currency: 'RUB', amount: '1500.25000000', reason: 'opening balance',
      balance: { currency: 'RUB', balance_available: '1500.25000000', balance_locked: '0.00000000', balance_hold: '0.00000000' },
    });
    const entries = await t.db.pool.query(
      `SELECT t.kind, t.ref_type, e.debit_account, e.credit_account, e.amount::text FROM ledger_transfers t JOIN ledger_entries e ON e.transfer_id = t.id WHERE t.ref_id = $1`,
      [r.body.id]);
    expect(entries.rows).toEqual([{ kind: 'ADJUSTMENT', ref_type: 'adjustment', debit_account: 'RUB:adjustments', credit_account: `RUB:merchant:${m.id}:available`, amount: '1500.25000000' }]);
    const b = await merchantBalance(t, m.api_token);
    expect(b.body.balances.find((x: { currency: string }) => x.currency === 'RUB').balance_available).toBe('1500.25000000');
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a negative amount debits available; numbers are accepted; other currencies are separate', async () => {
    const m = await adminMerchant(t);
    await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'USD', amount: 100, reason: 'credit' });
    const r = await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'usd', amount: -40.5, reason: 'chargeback fee' });
    expect(r.status).toBe(201);
    expect(r.body.amount).toBe('-40.50000000');
    expect(await available(m.id, 'USD')).toBe('59.50000000');
    expect(await available(m.id, 'RUB')).toBe('0.00000000');
    const list = await admin(t, 'GET', `/merchants/${m.id}/balance-adjustments`);
    expect(list.body.data.map((a: { amount: string }) => a.amount).sort()).toEqual(['-40.50000000', '100.00000000']);
  });

  it('a debit past available is refused (422 on amount, api:error.balance_not_enough) and leaves nothing behind', async () => {
    const m = await adminMerchant(t);
    await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '10', reason: 'credit' });
    const r = await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '-10.00000001', reason: 'too much' });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ success: false, message: 'api:error.balance_not_enough' });
    expect(r.body.errors.amount).toBeDefined();
    expect(await available(m.id)).toBe('10.00000000');
    expect(await t.db.prisma.balanceAdjustment.count({ where: { merchantId: m.id } })).toBe(1);
    expect(await t.db.prisma.ledgerTransfer.count({ where: { merchantId: m.id } })).toBe(1);
    // Exactly to zero is allowed.
    expect((await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '-10', reason: 'all' })).status).toBe(201);
    expect(await available(m.id)).toBe('0.00000000');
  });

  it('concurrent debits never overdraw: 20 debits of 10 against 100 -> exactly 10 succeed', async () => {
    const m = await adminMerchant(t);
    await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '100', reason: 'credit' });
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '-10', reason: `debit ${i}` })));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(10);
    expect(rs.filter((r) => r.status === 422)).toHaveLength(10);
    expect(await available(m.id)).toBe('0.00000000');
    expect(await t.db.prisma.balanceAdjustment.count({ where: { merchantId: m.id } })).toBe(11);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('validation: currency, amount (non-zero, at most 8 decimals, a number) and reason are checked', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'GBP', amount: 'ten' });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors).sort()).toEqual(['amount', 'currency', 'reason']);
    for (const amount of ['0', '0.000000001', '1e20', '-0']) {
      const x = await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount, reason: 'x' });
      expect(x.status, amount).toBe(422);
      expect(x.body.errors.amount, amount).toBeDefined();
    }
    expect(await t.db.prisma.balanceAdjustment.count({ where: { merchantId: m.id } })).toBe(0);
  });

  it('unknown merchant is 404', async () => {
    expect((await admin(t, 'POST', '/merchants/unknown/balance-adjustments', { currency: 'RUB', amount: '1', reason: 'x' })).status).toBe(404);
    expect((await admin(t, 'GET', '/merchants/unknown/balance-adjustments')).status).toBe(404);
  });

  it('GET /admin/v1/ledger/verify reports the books balanced', async () => {
    const r = await admin(t, 'GET', '/ledger/verify');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, trial_balance: expect.any(Array), problems: [] });
  });
});
