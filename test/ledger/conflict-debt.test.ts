import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { post, postOverdrawing, verifyLedger } from '../../src/domain/ledger/ledger.js';
import { adjustment, payoutPaidAfterAll } from '../../src/domain/ledger/postings.js';
import { DomainError } from '../../src/errors.js';
import { newId } from '../../src/lib/ids.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { fund } from '../payout/helpers.js';

/**
 * A merchant's available goes below zero only through a provider conflict's debit
 * (docs/adr/0021-provider-answer-after-final-state.md), held by the database: the
 * balances CHECK allows available down to -debt, only postOverdrawing raises debt, and the
 * balances_debt_shrinks trigger lowers it as money comes in, so no ordinary debit can use it.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const row = async (merchantId: string) => {
  const r = (await t.db.pool.query(`SELECT available::text, debt::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [merchantId])).rows[0];
  return { available: new Decimal(r.available).toFixed(2), debt: new Decimal(r.debt).toFixed(2) };
};
const debit = (merchantId: string, amount: string) => withPgTx(t.db.pool, (c) => post(c, adjustment({
  adjustmentId: newId(), merchantId, currency: 'RUB', amount: new Decimal(amount).neg(),
})));
const conflictDebit = (merchantId: string, amount: string) => withPgTx(t.db.pool, (c) => postOverdrawing(c, payoutPaidAfterAll({
  payoutId: newId(), merchantId, currency: 'RUB', amount: new Decimal(amount), commission: new Decimal('0'), connector: 'sandbox',
})));

describe('available below zero only by a conflict', () => {
  it('an ordinary debit past available is refused; a conflict debit goes below zero by exactly what it lacks', async () => {
    const m = await createMerchant(t);
    await fund(t, m.merchantId, '30');
    await expect(debit(m.merchantId, '31')).rejects.toBeInstanceOf(DomainError);
    await conflictDebit(m.merchantId, '50');
    expect(await row(m.merchantId)).toEqual({ available: '-20.00', debt: '20.00' });
    // A second conflict adds to it.
    await conflictDebit(m.merchantId, '5');
    expect(await row(m.merchantId)).toEqual({ available: '-25.00', debt: '25.00' });
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });

  it('while in debt every ordinary debit is refused; money in shrinks the debt and it cannot be used again', async () => {
    const m = await createMerchant(t);
    await conflictDebit(m.merchantId, '100');
    expect(await row(m.merchantId)).toEqual({ available: '-100.00', debt: '100.00' });
    await expect(debit(m.merchantId, '0.01')).rejects.toMatchObject({ code: 'balance_not_enough' });
    await fund(t, m.merchantId, '60');
    expect(await row(m.merchantId)).toEqual({ available: '-40.00', debt: '40.00' });
    await expect(debit(m.merchantId, '0.01')).rejects.toMatchObject({ code: 'balance_not_enough' });
    await fund(t, m.merchantId, '50');
    expect(await row(m.merchantId)).toEqual({ available: '10.00', debt: '0.00' });
    // The allowance is gone: available covers what it covers, no more.
    await expect(debit(m.merchantId, '10.01')).rejects.toMatchObject({ code: 'balance_not_enough' });
    await debit(m.merchantId, '10');
    expect(await row(m.merchantId)).toEqual({ available: '0.00', debt: '0.00' });
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });
});
