import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { DuplicatePostingError, post, postOverdrawing, verifyBalances } from '../../src/domain/ledger/ledger.js';
import { adjustment } from '../../src/domain/ledger/postings.js';
import { DomainError } from '../../src/errors.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';

let t: TestApp;
let merchantId: string;
beforeAll(async () => {
  t = await setupTestApp();
  merchantId = (await createMerchant(t)).merchantId;
});
afterAll(async () => { await t.close(); });

const credit = (refId: string, amount: string) => adjustment({ adjustmentId: refId, merchantId, currency: 'RUB', amount: new Decimal(amount) });

describe('ledger', () => {
  it('a posting creates the balance row and moves it by its deltas', async () => {
    const b = await withPgTx(t.db.pool, (c) => post(c, credit('a1', '100.50')));
    expect(new Decimal(b.available).toFixed(2)).toBe('100.50');
  });

  it('refuses a posting that would take available below zero, and changes nothing', async () => {
    await expect(withPgTx(t.db.pool, (c) => post(c, credit('a2', '-100.51')))).rejects.toThrow(DomainError);
    const r = await t.db.pool.query('SELECT available::text FROM balances WHERE merchant_id = $1', [merchantId]);
    expect(r.rows[0].available).toBe('100.50000000');
  });

  it('applies one business event once: the same (kind, ref_id) is refused', async () => {
    await expect(withPgTx(t.db.pool, (c) => post(c, credit('a1', '5')))).rejects.toThrow(DuplicatePostingError);
  });

  it('entries are append-only: UPDATE and DELETE are refused by the database', async () => {
    await expect(t.db.pool.query('UPDATE ledger_entries SET amount = amount + 1')).rejects.toThrow(/append-only/);
    await expect(t.db.pool.query('DELETE FROM ledger_entries')).rejects.toThrow(/append-only/);
    await expect(t.db.pool.query('UPDATE ledger_transfers SET memo = $1', ['x'])).rejects.toThrow(/append-only/);
    await expect(t.db.pool.query('DELETE FROM ledger_transfers')).rejects.toThrow(/append-only/);
  });

  it('concurrent debits never overdraw: 20 debits of 10 against 100.50 -> exactly 10 succeed', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => withPgTx(t.db.pool, (c) => post(c, credit(`d${i}`, '-10')))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    const r = await t.db.pool.query('SELECT available::text FROM balances WHERE merchant_id = $1', [merchantId]);
    expect(r.rows[0].available).toBe('0.50000000');
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });
});

describe('post and postOverdrawing, the paths besides a merchant with a balances row', () => {
  const operatorOnly = (refId: string) => ({
    kind: 'ADJUSTMENT' as const, refType: 'adjustment', refId, merchantId: null,
    legs: [{ from: 'RUB:adjustments', to: 'RUB:fee_revenue', amount: new Decimal('1.25'), currency: 'RUB' as const }],
  });
  const entries = async (transferId: string) =>
    (await t.db.pool.query(`SELECT debit_account, credit_account, amount::text FROM ledger_entries WHERE transfer_id = $1`, [transferId])).rows;

  it('a transfer between operator accounts moves no balances row and answers zeros, through post and postOverdrawing alike', async () => {
    expect(await withPgTx(t.db.pool, (c) => post(c, operatorOnly('op1')))).toEqual({ available: '0', locked: '0', hold: '0' });
    expect(await withPgTx(t.db.pool, (c) => postOverdrawing(c, operatorOnly('op2')))).toEqual({ available: '0', locked: '0', hold: '0' });
    expect(await entries('ADJUSTMENT:op1')).toEqual([{ debit_account: 'RUB:adjustments', credit_account: 'RUB:fee_revenue', amount: '1.25000000' }]);
    expect(await entries('ADJUSTMENT:op2')).toHaveLength(1);
  });

  it('a merchant without a balances row in the currency gets one, moved by the transfer', async () => {
    const m = (await createMerchant(t)).merchantId;
    await t.db.pool.query(`DELETE FROM balances WHERE merchant_id = $1 AND currency = 'EUR'`, [m]);
    const b = await withPgTx(t.db.pool, (c) => post(c, adjustment({ adjustmentId: `eur-${m}`, merchantId: m, currency: 'EUR', amount: new Decimal('7.5') })));
    expect(b).toEqual({ available: '7.50000000', locked: '0.00000000', hold: '0.00000000' });
    expect((await t.db.pool.query(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'EUR'`, [m])).rows).toEqual([{ available: '7.50000000' }]);
  });
});
