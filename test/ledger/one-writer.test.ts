import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { payNewBill } from '../factories/payment.js';
import { paymentReceived, payoutCreated } from '../../src/domain/ledger/postings.js';
import { card, fund, payoutMerchant } from '../payout/helpers.js';

/**
 * One ledger writer (issue 28 item 3): the hot statements (payment finishing, payout creation)
 * write exactly the legs postings.ts builds for their event, so a leg rule is changed in one
 * place. Each test reads what the statement wrote and compares it with the TypeScript transfer.
 */

let t: TestApp;
beforeAll(async () => { t = await setupTestApp({ FEE_PAYMENT_CARD_PERCENT: '2.5', FEE_PAYOUT_CARD_FIXED: '15' }); });
afterAll(async () => { await t.close(); });

const entries = async (transferId: string) => (await t.db.pool.query<{ leg: number; currency: string; dr: string; cr: string; amount: string }>(
  `SELECT leg, currency::text, debit_account AS dr, credit_account AS cr, amount::text FROM ledger_entries WHERE transfer_id = $1 ORDER BY leg`, [transferId])).rows;
const asRows = (legs: { from: string; to: string; amount: Decimal; currency: string }[]) =>
  legs.map((l, i) => ({ leg: i + 1, currency: l.currency, dr: l.from, cr: l.to, amount: l.amount.toFixed(8) }));

describe('the hot statements write the legs postings.ts builds', () => {
  it('a card payment (pay_finish): PAYMENT_CREDIT as paymentReceived', async () => {
    const m = await createMerchant(t);
    const paid = await payNewBill(t, m, { amount: '200.00' });
    expect(paid.status).toBe('SUCCESS');
    const p = (await t.db.pool.query('SELECT amount_received::text, commission::text, account_amount::text, connector FROM payments WHERE id = $1', [paid.paymentId])).rows[0];
    const built = paymentReceived({
      paymentId: paid.paymentId, merchantId: m.merchantId, currency: 'RUB', connector: p.connector,
      receivedRub: new Decimal(p.amount_received), accountAmount: new Decimal(p.account_amount), commission: new Decimal(p.commission),
    });
    expect(new Decimal(p.commission).toFixed(2)).toBe('5.00');
    expect(await entries(`PAYMENT_CREDIT:${paid.paymentId}`)).toEqual(asRows(built.legs));
    const bal = (await t.db.pool.query(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId])).rows[0];
    expect(bal.available).toBe('195.00000000');
  });

  it('a split payout (payout_insert): one PAYOUT_LOCK per payout as payoutCreated, the balance moved by their sum', async () => {
    const m = await payoutMerchant(t, { payoutMaxCard: new Decimal('1000') });
    await fund(t, m.merchantId, '5000');
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload: card('2500') });
    expect(r.statusCode, r.body).toBe(200);
    const payouts = r.json().data as Array<{ id: string; amount: number | string; commission: number | string }>;
    expect(payouts).toHaveLength(3);
    for (const po of payouts) {
      const built = payoutCreated({ payoutId: po.id, merchantId: m.merchantId, currency: 'RUB', amount: new Decimal(po.amount), commission: new Decimal(po.commission) });
      expect(await entries(`PAYOUT_LOCK:${po.id}`)).toEqual(asRows(built.legs));
    }
    const bal = (await t.db.pool.query(`SELECT available::text, locked::text, hold::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId])).rows[0];
    expect(bal).toEqual({ available: '2455.00000000', locked: '2500.00000000', hold: '45.00000000' });
  });
});
