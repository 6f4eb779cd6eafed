import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { DEBIT_NORMAL, merchantAccount, operatorAccount, parseAccount } from '../../src/domain/ledger/accounts.js';
import { BALANCE_COLUMNS } from '../../src/domain/ledger/balance.row.js';
import { ledgerParams, transfersSql } from '../../src/domain/ledger/fragments.js';
import { merchantDeltas, type Leg, type Transfer } from '../../src/domain/ledger/ledger.js';
import {
  adjustment, chargebackDebited, conflictHoldReleased, paymentNotReceivedAfterAll, paymentReceived, paymentReceivedAfterAll, payoutCreated, payoutNotPaidAfterAll,
  payoutConflictHeld, payoutPaidAfterAll, payoutReturned, payoutSucceeded, refundConflictHeld, refundCreated, refundMadeAfterAll, refundNotMadeAfterAll, refundReturned, refundSucceeded,
} from '../../src/domain/ledger/postings.js';

/**
 * Every business event's transfer, leg for leg (DESIGN.md "Balance and ledger"), and the checks
 * the one ledger writer makes before anything reaches the database. Pure: no database. Found
 * missing by mutation testing (docs/testing.md): the conflict transfers and the refund ones were
 * reached by no test of the ledger.
 */
const D = (v: string) => new Decimal(v);
const M = 'm_1';
const acct = (b: 'available' | 'locked' | 'hold', cur: 'RUB' | 'USD' = 'RUB') => merchantAccount(M, b, cur);
/** The legs as plain strings (amounts fixed to 2 places), so a wrong account, amount or currency shows. */
const flat = (t: Transfer) => ({ ...t, legs: t.legs.map((l) => `${l.from} -> ${l.to} ${l.amount.toFixed(2)} ${l.currency}`) });

const payout = { payoutId: 'po_1', merchantId: M, currency: 'RUB' as const, amount: D('100'), commission: D('2.5') };
const refund = { refundId: 'rf_1', paymentId: 'pay_1', merchantId: M, currency: 'RUB' as const, amount: D('40') };
const rubPayment = { paymentId: 'pay_1', merchantId: M, currency: 'RUB' as const, connector: 'acq', receivedRub: D('100'), accountAmount: D('97'), commission: D('3') };

describe('accounts', () => {
  it('ids put the currency first; per-connector operator accounts need their connector, the others refuse one', () => {
    expect(merchantAccount(M, 'hold', 'USD')).toBe('USD:merchant:m_1:hold');
    expect(operatorAccount('fee_revenue', 'RUB')).toBe('RUB:fee_revenue');
    expect(operatorAccount('payout_clearing', 'RUB', 'tb')).toBe('RUB:payout_clearing:tb');
    expect(() => operatorAccount('acquirer_clearing', 'RUB')).toThrow('operator account acquirer_clearing: connector missing');
    expect(() => operatorAccount('fee_revenue', 'RUB', 'tb')).toThrow('operator account fee_revenue: connector tb');
    expect(parseAccount('RUB:payout_clearing:tb')).toEqual({ currency: 'RUB', kind: 'payout_clearing', merchantId: null, connector: 'tb' });
    expect(parseAccount('USD:merchant:m_1:locked')).toEqual({ currency: 'USD', kind: 'locked', merchantId: M, connector: null });
  });

  it('debit-normal accounts: the acquirer clearing, adjustments and fx; the reads select currency and the three buckets', () => {
    expect([...DEBIT_NORMAL]).toEqual(['acquirer_clearing', 'adjustments', 'fx']);
    expect(BALANCE_COLUMNS).toBe('currency, available, locked, hold');
  });
});

describe('postings', () => {
  it('a RUB payment: acquirer -> available (received minus commission) and -> fee revenue; no fee leg without commission', () => {
    expect(flat(paymentReceived(rubPayment))).toEqual({
      kind: 'PAYMENT_CREDIT', refType: 'payment', refId: 'pay_1', merchantId: M,
      legs: ['RUB:acquirer_clearing:acq -> RUB:merchant:m_1:available 97.00 RUB', 'RUB:acquirer_clearing:acq -> RUB:fee_revenue 3.00 RUB'],
    });
    expect(flat(paymentReceived({ ...rubPayment, accountAmount: D('100'), commission: D('0') })).legs)
      .toEqual(['RUB:acquirer_clearing:acq -> RUB:merchant:m_1:available 100.00 RUB']);
  });

  it('a USD bill paid in RUB goes through the fx accounts, each currency balanced on its own', () => {
    expect(flat(paymentReceived({ ...rubPayment, currency: 'USD', receivedRub: D('9000'), accountAmount: D('97'), commission: D('3') })).legs).toEqual([
      'RUB:acquirer_clearing:acq -> RUB:fx 9000.00 RUB', 'USD:fx -> USD:merchant:m_1:available 97.00 USD', 'USD:fx -> USD:fee_revenue 3.00 USD',
    ]);
  });

  it('payouts: lock, debit to the provider and fee revenue, release', () => {
    expect(flat(payoutCreated(payout))).toEqual({
      kind: 'PAYOUT_LOCK', refType: 'payout', refId: 'po_1', merchantId: M,
      legs: [`${acct('available')} -> ${acct('locked')} 100.00 RUB`, `${acct('available')} -> ${acct('hold')} 2.50 RUB`],
    });
    expect(flat(payoutSucceeded({ ...payout, connector: 'tb' }))).toEqual({
      kind: 'PAYOUT_DEBIT', refType: 'payout', refId: 'po_1', merchantId: M,
      legs: [`${acct('locked')} -> RUB:payout_clearing:tb 100.00 RUB`, `${acct('hold')} -> RUB:fee_revenue 2.50 RUB`],
    });
    expect(flat(payoutReturned(payout))).toEqual({
      kind: 'PAYOUT_RELEASE', refType: 'payout', refId: 'po_1', merchantId: M,
      legs: [`${acct('locked')} -> ${acct('available')} 100.00 RUB`, `${acct('hold')} -> ${acct('available')} 2.50 RUB`],
    });
  });

  it('refunds: lock (with the payment in its memo), debit to refund clearing, release', () => {
    expect(flat(refundCreated(refund))).toEqual({
      kind: 'REFUND_LOCK', refType: 'refund', refId: 'rf_1', merchantId: M, memo: 'refund of payment pay_1',
      legs: [`${acct('available')} -> ${acct('locked')} 40.00 RUB`],
    });
    expect(flat(refundSucceeded(refund))).toEqual({
      kind: 'REFUND_DEBIT', refType: 'refund', refId: 'rf_1', merchantId: M, legs: [`${acct('locked')} -> RUB:refund_clearing 40.00 RUB`],
    });
    expect(flat(refundReturned(refund))).toEqual({
      kind: 'REFUND_RELEASE', refType: 'refund', refId: 'rf_1', merchantId: M, legs: [`${acct('locked')} -> ${acct('available')} 40.00 RUB`],
    });
  });

  it('adjustments both ways, with their memo; a chargeback from available', () => {
    expect(flat(adjustment({ adjustmentId: 'adj_1', merchantId: M, currency: 'RUB', amount: D('5'), memo: 'goodwill' }))).toEqual({
      kind: 'ADJUSTMENT', refType: 'adjustment', refId: 'adj_1', merchantId: M, memo: 'goodwill', legs: [`RUB:adjustments -> ${acct('available')} 5.00 RUB`],
    });
    expect(flat(adjustment({ adjustmentId: 'adj_2', merchantId: M, currency: 'RUB', amount: D('-5') })).legs).toEqual([`${acct('available')} -> RUB:adjustments 5.00 RUB`]);
    expect(flat(chargebackDebited({ chargebackId: 'cb_1', paymentId: 'pay_1', merchantId: M, currency: 'RUB', amount: D('10') }))).toEqual({
      kind: 'CHARGEBACK_DEBIT', refType: 'chargeback', refId: 'cb_1', merchantId: M, memo: 'chargeback of payment pay_1',
      legs: [`${acct('available')} -> RUB:chargebacks 10.00 RUB`],
    });
  });

  it('conflict transfers: the money follows the provider, each of its own kind and memo', () => {
    expect(flat(payoutPaidAfterAll({ ...payout, connector: 'tb' }))).toEqual({
      kind: 'PAYOUT_CONFLICT_DEBIT', refType: 'payout', refId: 'po_1', merchantId: M, memo: 'the provider paid a payout we had returned',
      legs: [`${acct('available')} -> RUB:payout_clearing:tb 100.00 RUB`, `${acct('available')} -> RUB:fee_revenue 2.50 RUB`],
    });
    expect(flat(payoutNotPaidAfterAll({ ...payout, connector: 'tb' }))).toEqual({
      kind: 'PAYOUT_CONFLICT_CREDIT', refType: 'payout', refId: 'po_1', merchantId: M, memo: 'the provider failed a payout we had made SUCCESS',
      legs: [`RUB:payout_clearing:tb -> ${acct('available')} 100.00 RUB`, `RUB:fee_revenue -> ${acct('available')} 2.50 RUB`],
    });
    expect(flat(refundMadeAfterAll(refund))).toEqual({
      kind: 'REFUND_CONFLICT_DEBIT', refType: 'refund', refId: 'rf_1', merchantId: M, memo: 'the provider made a refund we had failed',
      legs: [`${acct('available')} -> RUB:refund_clearing 40.00 RUB`],
    });
    expect(flat(refundNotMadeAfterAll(refund))).toEqual({
      kind: 'REFUND_CONFLICT_CREDIT', refType: 'refund', refId: 'rf_1', merchantId: M, memo: 'the provider failed a refund we had made SUCCESS',
      legs: [`RUB:refund_clearing -> ${acct('available')} 40.00 RUB`],
    });
    expect(flat(paymentReceivedAfterAll(rubPayment))).toEqual({
      kind: 'PAYMENT_CONFLICT_CREDIT', refType: 'payment', refId: 'pay_1', merchantId: M, memo: 'the provider charged a payment we had failed',
      legs: ['RUB:acquirer_clearing:acq -> RUB:merchant:m_1:available 97.00 RUB', 'RUB:acquirer_clearing:acq -> RUB:fee_revenue 3.00 RUB'],
    });
    const credit = paymentReceived(rubPayment).legs;
    expect(flat(paymentNotReceivedAfterAll({ paymentId: 'pay_1', merchantId: M, credit }))).toEqual({
      kind: 'PAYMENT_CONFLICT_DEBIT', refType: 'payment', refId: 'pay_1', merchantId: M, memo: 'the provider declined a payment we had credited',
      legs: ['RUB:merchant:m_1:available -> RUB:acquirer_clearing:acq 97.00 RUB', 'RUB:fee_revenue -> RUB:acquirer_clearing:acq 3.00 RUB'],
    });
  });
});

describe('money held while a contradicting notification is unconfirmed', () => {
  it('a payout the provider says it paid: amount to locked, fee to hold; a refund it says it made: amount to locked; each released the way it came', () => {
    const heldPayout = payoutConflictHeld(payout);
    expect(flat(heldPayout)).toEqual({
      kind: 'PAYOUT_CONFLICT_HOLD', refType: 'payout', refId: 'po_1', merchantId: M, memo: 'held: the provider says it paid a payout we had returned',
      legs: [`${acct('available')} -> ${acct('locked')} 100.00 RUB`, `${acct('available')} -> ${acct('hold')} 2.50 RUB`],
    });
    expect(merchantDeltas(heldPayout)).toMatchObject({ currency: 'RUB', available: D('-102.5'), locked: D('100'), hold: D('2.5') });
    const heldRefund = refundConflictHeld(refund);
    expect(flat(heldRefund)).toEqual({
      kind: 'REFUND_CONFLICT_HOLD', refType: 'refund', refId: 'rf_1', merchantId: M, memo: 'held: the provider says it made a refund we had failed',
      legs: [`${acct('available')} -> ${acct('locked')} 40.00 RUB`],
    });
    expect(flat(conflictHoldReleased({ ...heldPayout, merchantId: M, kind: 'PAYOUT_CONFLICT_HOLD' }))).toEqual({
      kind: 'PAYOUT_CONFLICT_RELEASE', refType: 'payout', refId: 'po_1', merchantId: M, memo: 'conflict hold ended',
      legs: [`${acct('locked')} -> ${acct('available')} 100.00 RUB`, `${acct('hold')} -> ${acct('available')} 2.50 RUB`],
    });
    expect(flat(conflictHoldReleased({ ...heldRefund, merchantId: M, kind: 'REFUND_CONFLICT_HOLD' }))).toMatchObject({
      kind: 'REFUND_CONFLICT_RELEASE', refType: 'refund', refId: 'rf_1', legs: [`${acct('locked')} -> ${acct('available')} 40.00 RUB`],
    });
    // A payout without a fee holds no fee leg.
    expect(payoutConflictHeld({ ...payout, commission: D('0') }).legs).toHaveLength(1);
  });
});

describe('the ledger writer refuses a malformed transfer before the database', () => {
  const leg = (from: string, to: string, amount: string, currency: 'RUB' | 'USD' = 'RUB'): Leg => ({ from, to, amount: D(amount), currency });
  const tr = (legs: Leg[], o: Partial<Transfer> = {}): Transfer => ({ kind: 'ADJUSTMENT', refType: 'adjustment', refId: 'x1', merchantId: M, legs, ...o });

  it("a merchant's deltas per bucket; none for a transfer between operator accounts; never another merchant's or two currencies", () => {
    const d = merchantDeltas(tr([leg(acct('available'), acct('locked'), '10'), leg(acct('available'), acct('hold'), '1')]))!;
    expect([d.currency, d.available.toFixed(), d.locked.toFixed(), d.hold.toFixed()]).toEqual(['RUB', '-11', '10', '1']);
    expect(merchantDeltas(tr([leg('RUB:adjustments', 'RUB:fee_revenue', '1')], { merchantId: null }))).toBeNull();
    expect(() => merchantDeltas(tr([leg('RUB:adjustments', merchantAccount('m_2', 'available', 'RUB'), '1')])))
      .toThrow("transfer ADJUSTMENT x1 moves another merchant's account RUB:merchant:m_2:available");
    expect(() => merchantDeltas(tr([leg('RUB:adjustments', acct('available'), '1'), leg('USD:adjustments', acct('available', 'USD'), '1', 'USD')])))
      .toThrow('transfer ADJUSTMENT x1 moves merchant accounts in two currencies');
  });

  it('no legs, another merchant, another currency, a leg of zero: refused with what is wrong', () => {
    expect(() => ledgerParams(M, 'RUB', [tr([])], 'update')).toThrow('transfer ADJUSTMENT x1 has no legs');
    expect(() => ledgerParams('m_2', 'RUB', [tr([leg('RUB:adjustments', acct('available'), '1')])], 'update'))
      .toThrow("transfer ADJUSTMENT x1 is merchant m_1's, not m_2's");
    expect(() => ledgerParams(M, 'USD', [tr([leg('RUB:adjustments', acct('available'), '1')])], 'update')).toThrow('transfer ADJUSTMENT x1 moves RUB, not USD');
    expect(() => ledgerParams(M, 'RUB', [tr([leg('RUB:adjustments', acct('available'), '0')])], 'update')).toThrow('transfer ADJUSTMENT x1: a leg of 0');
    expect(() => ledgerParams(M, 'RUB', [tr([leg('RUB:adjustments', acct('available'), '-1')])], 'update')).toThrow('transfer ADJUSTMENT x1: a leg of -1');
  });

  it('a credit statement refuses a transfer that takes from any one bucket; an update statement takes it', () => {
    for (const b of ['available', 'locked', 'hold'] as const) {
      const taking = tr([leg(acct(b), 'RUB:adjustments', '1')]);
      expect(() => ledgerParams(M, 'RUB', [taking], 'credit'), b).toThrow('transfer ADJUSTMENT x1 is not a credit');
      expect(ledgerParams(M, 'RUB', [taking], 'update')[`ledger_${b}`]).toBe('-1');
    }
    expect(ledgerParams(M, 'RUB', [tr([leg('RUB:adjustments', acct('hold'), '1')])], 'credit').ledger_hold).toBe('1');
  });

  it('the values: ids, entries in leg order, the memo cut to 500 characters (null without one), the buckets summed over the transfers', () => {
    const a = tr([leg(acct('available'), acct('locked'), '10'), leg(acct('available'), acct('hold'), '0.5')], { memo: 'y'.repeat(600) });
    const b = tr([leg('RUB:adjustments', acct('available'), '3')], { refId: 'x2' });
    expect(ledgerParams(M, 'RUB', [a, b], 'update')).toEqual({
      ledger_ids: ['ADJUSTMENT:x1', 'ADJUSTMENT:x2'], ledger_kinds: ['ADJUSTMENT', 'ADJUSTMENT'], ledger_ref_types: ['adjustment', 'adjustment'],
      ledger_ref_ids: ['x1', 'x2'], ledger_memos: ['y'.repeat(500), null],
      ledger_entry_transfers: ['ADJUSTMENT:x1', 'ADJUSTMENT:x1', 'ADJUSTMENT:x2'], ledger_entry_legs: [1, 2, 1], ledger_entry_currencies: ['RUB', 'RUB', 'RUB'],
      ledger_entry_debits: [acct('available'), acct('available'), 'RUB:adjustments'], ledger_entry_credits: [acct('locked'), acct('hold'), acct('available')],
      ledger_entry_amounts: ['10', '0.5', '3'],
      ledger_merchant: M, ledger_currency: 'RUB', ledger_available: '-7.5', ledger_locked: '10', ledger_hold: '0.5',
    });
  });

  it('a credit statement upserts the balances row, an update statement only moves an existing one', () => {
    expect(transfersSql('g', 'credit')).toContain('INSERT INTO balances');
    expect(transfersSql('g', 'update')).not.toContain('INSERT INTO balances');
    expect(transfersSql('g', 'update')).toContain('UPDATE balances');
  });
});
