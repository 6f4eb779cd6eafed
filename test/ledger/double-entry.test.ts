import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { post, verifyLedger } from '../../src/domain/ledger/ledger.js';
import { chargebackDebited } from '../../src/domain/ledger/postings.js';
import { DomainError } from '../../src/errors.js';
import { classifyDatabaseError } from '../../src/db/database-error.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill, payRequest } from '../factories/payment.js';
import { booksBalance, card, fund, payoutMerchant, regular } from '../payout/helpers.js';
import { admin } from '../admin/helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

/** The legs of a transfer as 'debit -> credit amount' with the merchant id shortened to M. */
async function legs(kind: string, refId: string, merchantId: string): Promise<string[]> {
  const r = await t.db.pool.query<{ d: string; c: string; a: string }>(
    `SELECT debit_account AS d, credit_account AS c, amount::text AS a FROM ledger_entries WHERE transfer_id = $1 ORDER BY leg`, [`${kind}:${refId}`]);
  return r.rows.map((x) => `${x.d} -> ${x.c} ${new Decimal(x.a).toFixed(2)}`.replaceAll(merchantId, 'M'));
}

async function accountBalance(id: string): Promise<string> {
  const r = await admin(t, 'GET', `/ledger/accounts?currency=${id.split(':')[0]}`);
  const a = (r.body.accounts as Array<{ id: string; balance: string }>).find((x) => x.id === id);
  return a ? new Decimal(a.balance).toFixed(2) : 'missing';
}

describe('postings', () => {
  it('payment received: acquirer clearing debited with what the payer paid, available credited net, fee revenue with the commission', async () => {
    const m = await createMerchant(t, { merchant: { paymentCardPercent: '2.5', paymentCardFixed: '10' } });
    const id = (await payRequest(t, await createBill(t, m, { amount: '1000.00' }))).json().payment_id;
    expect(await legs('PAYMENT_CREDIT', id, m.merchantId)).toEqual([
      'RUB:acquirer_clearing:sandbox -> RUB:merchant:M:available 965.00',
      'RUB:acquirer_clearing:sandbox -> RUB:fee_revenue 35.00',
    ]);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });

  it('a USD bill: RUB from acquirer clearing into the RUB fx account, the USD fx account pays the merchant and the fee', async () => {
    await t.db.pool.query(`INSERT INTO fx_rates (currency, rub_per_unit) VALUES ('USD', 92.5) ON CONFLICT (currency) DO UPDATE SET rub_per_unit = 92.5`);
    const m = await createMerchant(t, { merchant: { paymentCardPercent: '2', paymentCardFixed: '0' } });
    const id = (await payRequest(t, await createBill(t, m, { amount: '10.00', currencyIn: 'USD' }))).json().payment_id;
    expect(await legs('PAYMENT_CREDIT', id, m.merchantId)).toEqual([
      'RUB:acquirer_clearing:sandbox -> RUB:fx 925.00',
      'USD:fx -> USD:merchant:M:available 9.80',
      'USD:fx -> USD:fee_revenue 0.20',
    ]);
    const books = await verifyLedger(t.db.pool);
    expect(books.ok).toBe(true);
    for (const row of books.trial_balance) expect(row.debits).toBe(row.credits);
    expect(books.trial_balance.map((r) => r.currency)).toEqual(expect.arrayContaining(['RUB', 'USD']));
  });

  it('payout created locks amount and holds commission; SUCCESS moves them to payout clearing and fee revenue; FAIL returns both', async () => {
    const m = await payoutMerchant(t, { payoutCardPercent: '1', payoutCardFixed: '5' });
    await fund(t, m.merchantId, '1000');
    const ok = (await regular(t, m, card('100'))).json().data[0].id as string;
    const bad = (await regular(t, m, card('200', { account_identifier: '4000000000000002' }))).json().data[0].id as string;
    expect(await legs('PAYOUT_LOCK', ok, m.merchantId)).toEqual(['RUB:merchant:M:available -> RUB:merchant:M:locked 100.00', 'RUB:merchant:M:available -> RUB:merchant:M:hold 6.00']);
    await t.db.pool.query(`UPDATE payouts SET process_after = now() - interval '1 second' WHERE id = ANY($1)`, [[ok, bad]]);
    await t.app.services.payouts.processDue();
    expect(await legs('PAYOUT_DEBIT', ok, m.merchantId)).toEqual(['RUB:merchant:M:locked -> RUB:payout_clearing:sandbox 100.00', 'RUB:merchant:M:hold -> RUB:fee_revenue 6.00']);
    expect(await legs('PAYOUT_RELEASE', bad, m.merchantId)).toEqual(['RUB:merchant:M:locked -> RUB:merchant:M:available 200.00', 'RUB:merchant:M:hold -> RUB:merchant:M:available 7.00']);
    expect(await booksBalance(t)).toEqual([]);
  });

  it('a chargeback is one transfer out of available, refused past available', async () => {
    const m = await createMerchant(t);
    await fund(t, m.merchantId, '50');
    const out = (refId: string, amount: string) => chargebackDebited({ chargebackId: refId, paymentId: 'p1', merchantId: m.merchantId, currency: 'RUB', amount: new Decimal(amount) });
    await withPgTx(t.db.pool, (c) => post(c, out('cb1', '20')));
    expect(await legs('CHARGEBACK_DEBIT', 'cb1', m.merchantId)).toEqual(['RUB:merchant:M:available -> RUB:chargebacks 20.00']);
    await expect(withPgTx(t.db.pool, (c) => post(c, out('cb2', '30.01')))).rejects.toThrow(DomainError);
  });
});

describe('the database guards the books', () => {
  const transfer = (id: string) => t.db.pool.query(`INSERT INTO ledger_transfers (id, kind, ref_type, ref_id) VALUES ($1, 'ADJUSTMENT', 'test', $2)`, [`ADJUSTMENT:${id}`, id]);

  it('an entry has both sides: one without its credit account is refused', async () => {
    await transfer('g1');
    await expect(t.db.pool.query(`INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, amount) VALUES ('ADJUSTMENT:g1', 1, 'RUB', 'RUB:adjustments', 5)`))
      .rejects.toThrow(/credit_account/);
  });

  it('both sides of an entry are in its currency: a RUB debit against a USD credit is refused', async () => {
    await transfer('g2');
    await expect(t.db.pool.query(`INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount) VALUES ('ADJUSTMENT:g2', 1, 'RUB', 'RUB:adjustments', 'USD:fee_revenue', 5)`))
      .rejects.toThrow(/ledger_entries_currency_check/);
  });

  it('amounts are positive and an account never pays itself', async () => {
    await transfer('g3');
    await expect(t.db.pool.query(`INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount) VALUES ('ADJUSTMENT:g3', 1, 'RUB', 'RUB:adjustments', 'RUB:fee_revenue', -5)`))
      .rejects.toThrow(/ledger_entries_amount_check/);
    await expect(t.db.pool.query(`INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount) VALUES ('ADJUSTMENT:g3', 1, 'RUB', 'RUB:fx', 'RUB:fx', 5)`))
      .rejects.toThrow(/ledger_entries_accounts_check/);
  });

  it('a transfer id applies once, and it is its (kind, ref_id)', async () => {
    await expect(transfer('g1')).rejects.toThrow(/ledger_transfers_pkey/);
    await expect(t.db.pool.query(`INSERT INTO ledger_transfers (id, kind, ref_type, ref_id) VALUES ('ADJUSTMENT:x', 'ADJUSTMENT', 'test', 'y')`))
      .rejects.toThrow(/ledger_transfers_id_check/);
  });

  it('a leg naming an account that does not exist is refused by the database, on either side', async () => {
    await transfer('g5');
    const leg = (dr: string, cr: string) => t.db.pool.query(
      `INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount, created_at)
       SELECT id, 1, split_part($1, ':', 1)::"Currency", $1, $2, 5, created_at FROM ledger_transfers WHERE id = 'ADJUSTMENT:g5'`, [dr, cr]);
    await expect(leg('RUB:adjustments', 'RUB:merchant:nobody:available')).rejects.toMatchObject({ code: '23503', constraint: 'ledger_entries_credit_account_fkey' });
    await expect(leg('RUB:acquirer_clearing:nowhere', 'RUB:fee_revenue')).rejects.toMatchObject({ code: '23503', constraint: 'ledger_entries_debit_account_fkey' });
    // A well-formed id of a kind the ledger has is not enough: the account must be a row.
    await expect(leg('RUB:adjustments', 'RUB:payout_clearing:nowhere')).rejects.toMatchObject({ constraint: 'ledger_entries_credit_account_fkey' });
    // The refusal is a broken money invariant (a 500 with an alert), never the client's fault.
    expect(classifyDatabaseError(await leg('RUB:adjustments', 'RUB:merchant:nobody:available').catch((e: unknown) => e)))
      .toMatchObject({ fault: 'invariant', constraint: 'ledger_entries_credit_account_fkey', money: true });
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE transfer_id = 'ADJUSTMENT:g5'`)).rows[0].n).toBe(0);
    // The same leg on accounts that exist is written (the refusals above are the accounts').
    await leg('EUR:adjustments', 'EUR:fx');
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE transfer_id = 'ADJUSTMENT:g5'`)).rows[0].n).toBe(1);
  });

  it('a transfer posted on a missing account moves nothing: no transfer, no entry, the balance as it was', async () => {
    const m = await createMerchant(t);
    const before = await t.db.pool.query(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId]);
    const bad = {
      kind: 'ADJUSTMENT' as const, refType: 'adjustment', refId: 'g6', merchantId: m.merchantId,
      legs: [{ from: 'RUB:adjustments:typo', to: `RUB:merchant:${m.merchantId}:available`, amount: new Decimal('7'), currency: 'RUB' as const }],
    };
    await expect(withPgTx(t.db.pool, (c) => post(c, bad))).rejects.toMatchObject({ code: '23503', constraint: 'ledger_entries_debit_account_fkey' });
    expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_transfers WHERE id = 'ADJUSTMENT:g6'`)).rows[0].n).toBe(0);
    expect((await t.db.pool.query(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId])).rows).toEqual(before.rows);
  });

  it('a connector has its clearing accounts in every currency from its creation on', async () => {
    await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('acme-acq', 'sandbox', 'test')`);
    const r = await t.db.pool.query<{ id: string }>(`SELECT id FROM ledger_accounts WHERE connector = 'acme-acq' ORDER BY id`);
    expect(r.rows.map((x) => x.id)).toEqual([
      'EUR:acquirer_clearing:acme-acq', 'EUR:payout_clearing:acme-acq', 'RUB:acquirer_clearing:acme-acq', 'RUB:payout_clearing:acme-acq',
      'USD:acquirer_clearing:acme-acq', 'USD:payout_clearing:acme-acq',
    ]);
  });

  it('verify reports a transfer without entries and a balance that drifts from its entries', async () => {
    await transfer('g4');
    const m = await createMerchant(t);
    await t.db.pool.query(`UPDATE balances SET hold = hold + 1 WHERE merchant_id = $1 AND currency = 'EUR'`, [m.merchantId]);
    const r = await admin(t, 'GET', '/ledger/verify');
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(false);
    expect(r.body.problems).toEqual(expect.arrayContaining([
      { type: 'empty_transfer', transfer_id: 'ADJUSTMENT:g4' },
      expect.objectContaining({ type: 'balance_drift', merchant_id: m.merchantId, currency: 'EUR', hold: '1.00000000', sum_hold: '0' }),
    ]));
    await t.db.pool.query(`UPDATE balances SET hold = hold - 1 WHERE merchant_id = $1 AND currency = 'EUR'`, [m.merchantId]);
  });
});

describe('GET /admin/v1/ledger/accounts', () => {
  it("lists the operator's accounts and every merchant's, each with its balance on its normal side", async () => {
    const r = await admin(t, 'GET', '/ledger/accounts?currency=RUB');
    expect(r.status).toBe(200);
    const ids = (r.body.accounts as Array<{ id: string; currency: string }>).map((a) => a.id);
    expect(ids).toEqual(expect.arrayContaining(['RUB:acquirer_clearing:sandbox', 'RUB:payout_clearing:sandbox', 'RUB:fee_revenue', 'RUB:refund_clearing', 'RUB:chargebacks', 'RUB:adjustments', 'RUB:fx']));
    expect((r.body.accounts as Array<{ currency: string }>).every((a) => a.currency === 'RUB')).toBe(true);
    // 35 (first payment) + 6 (payout fee) of fee revenue; the acquirer owes what the payers paid in RUB.
    expect(await accountBalance('RUB:fee_revenue')).toBe('41.00');
    expect(await accountBalance('RUB:acquirer_clearing:sandbox')).toBe('1925.00');
    expect(await accountBalance('RUB:payout_clearing:sandbox')).toBe('100.00');
    expect(await accountBalance('USD:fee_revenue')).toBe('0.20');
    expect((await admin(t, 'GET', '/ledger/accounts?currency=XYZ')).status).toBe(422);
  });
});

// Last in this file: it drops a check of this file's own database.
describe('verify does not trust the checks that wrote the books', () => {
  it('an entry across two currencies, written where the currency check was lost (a restore without constraints), shows as an unbalanced trial balance in each', async () => {
    const before = await verifyLedger(t.db.pool);
    expect(before.problems.filter((p) => p.type === 'unbalanced')).toEqual([]);
    await t.db.pool.query(`ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_currency_check`);
    // The entry carries its transfer's created_at (the monthly partitions' key is in the foreign key).
    await t.db.pool.query(`WITH tr AS (INSERT INTO ledger_transfers (id, kind, ref_type, ref_id) VALUES ('ADJUSTMENT:g9', 'ADJUSTMENT', 'test', 'g9') RETURNING id, created_at)
      INSERT INTO ledger_entries (transfer_id, created_at, leg, currency, debit_account, credit_account, amount) SELECT id, created_at, 1, 'RUB', 'RUB:adjustments', 'USD:adjustments', 5 FROM tr`);
    const after = await verifyLedger(t.db.pool);
    expect(after.ok).toBe(false);
    const unbalanced = after.problems.filter((p) => p.type === 'unbalanced');
    expect(unbalanced.map((p) => (p as { currency: string }).currency).sort()).toEqual(['RUB', 'USD']);
    expect(unbalanced.find((p) => (p as { currency: string }).currency === 'USD')).toMatchObject({ type: 'unbalanced', currency: 'USD' });
    const usd = after.trial_balance.find((x) => x.currency === 'USD')!;
    expect(new Decimal(usd.credits).minus(usd.debits).toFixed(2)).toBe('5.00');
  });
});
