import { Decimal } from 'decimal.js';
import type { Currency } from '../../generated/prisma/enums.js';
import { merchantAccount, operatorAccount } from './accounts.js';
import type { Leg, Transfer } from './ledger.js';

/**
 * The transfer of each business event (DESIGN "Balance and ledger"), built in one place. Legs of
 * zero are left out (a payment without commission has no fee leg).
 */

const legs = (...all: Leg[]): Leg[] => all.filter((l) => l.amount.gt(0));
const leg = (from: string, to: string, amount: Decimal, currency: Currency): Leg => ({ from, to, amount, currency });

export interface PaymentReceived {
  paymentId: string;
  merchantId: string;
  /** The bill's currency: the merchant's account and the commission are in it. */
  currency: Currency;
  /** The acquirer that took the money (its clearing account is debited). */
  connector: string;
  /** What the payer paid, in RUB. */
  receivedRub: Decimal;
  /** What the merchant is credited (received minus commission), in `currency`. */
  accountAmount: Decimal;
  commission: Decimal;
}

/**
 * Payment received: the acquirer owes what the payer paid (acquirer_clearing debited), the
 * merchant's available is credited with it minus the commission, fee_revenue with the
 * commission. A USD/EUR bill is paid in RUB: the RUB go from acquirer clearing into the RUB fx
 * account, and the bill currency's fx account pays the merchant and the fee, so each currency
 * balances on its own and the fx accounts hold the operator's conversion position.
 */
export function paymentReceived(p: PaymentReceived): Transfer {
  const available = merchantAccount(p.merchantId, 'available', p.currency);
  const fee = operatorAccount('fee_revenue', p.currency);
  const acquirer = operatorAccount('acquirer_clearing', 'RUB', p.connector);
  const l = p.currency === 'RUB'
    ? legs(leg(acquirer, available, p.accountAmount, 'RUB'), leg(acquirer, fee, p.commission, 'RUB'))
    : legs(
      leg(acquirer, operatorAccount('fx', 'RUB'), p.receivedRub, 'RUB'),
      leg(operatorAccount('fx', p.currency), available, p.accountAmount, p.currency),
      leg(operatorAccount('fx', p.currency), fee, p.commission, p.currency),
    );
  return { kind: 'PAYMENT_CREDIT', refType: 'payment', refId: p.paymentId, merchantId: p.merchantId, legs: l };
}

interface PayoutMoney { payoutId: string; merchantId: string; currency: Currency; amount: Decimal; commission: Decimal }

/** Payout created: amount available -> locked, commission available -> hold (payoutLockFragment on the hot path). */
export function payoutCreated(p: PayoutMoney): Transfer {
  const m = (b: 'available' | 'locked' | 'hold') => merchantAccount(p.merchantId, b, p.currency);
  return {
    kind: 'PAYOUT_LOCK', refType: 'payout', refId: p.payoutId, merchantId: p.merchantId,
    legs: legs(leg(m('available'), m('locked'), p.amount, p.currency), leg(m('available'), m('hold'), p.commission, p.currency)),
  };
}

/** Payout SUCCESS: locked -> the provider's payout clearing, hold -> fee revenue. */
export function payoutSucceeded(p: PayoutMoney & { connector: string }): Transfer {
  const m = (b: 'locked' | 'hold') => merchantAccount(p.merchantId, b, p.currency);
  return {
    kind: 'PAYOUT_DEBIT', refType: 'payout', refId: p.payoutId, merchantId: p.merchantId,
    legs: legs(
      leg(m('locked'), operatorAccount('payout_clearing', p.currency, p.connector), p.amount, p.currency),
      leg(m('hold'), operatorAccount('fee_revenue', p.currency), p.commission, p.currency),
    ),
  };
}

/** Payout FAIL, ERROR or DECLINED: locked and hold back to available. */
export function payoutReturned(p: PayoutMoney): Transfer {
  const m = (b: 'available' | 'locked' | 'hold') => merchantAccount(p.merchantId, b, p.currency);
  return {
    kind: 'PAYOUT_RELEASE', refType: 'payout', refId: p.payoutId, merchantId: p.merchantId,
    legs: legs(leg(m('locked'), m('available'), p.amount, p.currency), leg(m('hold'), m('available'), p.commission, p.currency)),
  };
}

interface RefundMoney { refundId: string; paymentId: string; merchantId: string; currency: Currency; amount: Decimal }

/** Refund created: available -> locked. */
export function refundCreated(r: RefundMoney): Transfer {
  const m = (b: 'available' | 'locked') => merchantAccount(r.merchantId, b, r.currency);
  return {
    kind: 'REFUND_LOCK', refType: 'refund', refId: r.refundId, merchantId: r.merchantId, memo: `refund of payment ${r.paymentId}`,
    legs: legs(leg(m('available'), m('locked'), r.amount, r.currency)),
  };
}

/**
 * Refund SUCCESS: locked -> refund clearing in the refund's currency (DESIGN.md "Balance and
 * ledger": what the operator owes the acquirer that gave the payer's money back; it is settled
 * with the acquirer outside this ledger). The connector and the roubles sent (`amount_rub`) are
 * on the refund row for the reconciliation of that settlement.
 */
export function refundSucceeded(r: RefundMoney): Transfer {
  return {
    kind: 'REFUND_DEBIT', refType: 'refund', refId: r.refundId, merchantId: r.merchantId,
    legs: legs(leg(merchantAccount(r.merchantId, 'locked', r.currency), operatorAccount('refund_clearing', r.currency), r.amount, r.currency)),
  };
}

/** Refund FAIL: locked back to available. */
export function refundReturned(r: RefundMoney): Transfer {
  const m = (b: 'available' | 'locked') => merchantAccount(r.merchantId, b, r.currency);
  return {
    kind: 'REFUND_RELEASE', refType: 'refund', refId: r.refundId, merchantId: r.merchantId,
    legs: legs(leg(m('locked'), m('available'), r.amount, r.currency)),
  };
}

/** Operator adjustment: adjustments -> available for a credit, available -> adjustments for a debit. */
export function adjustment(a: { adjustmentId: string; merchantId: string; currency: Currency; amount: Decimal; memo?: string }): Transfer {
  const available = merchantAccount(a.merchantId, 'available', a.currency);
  const adj = operatorAccount('adjustments', a.currency);
  return {
    kind: 'ADJUSTMENT', refType: 'adjustment', refId: a.adjustmentId, merchantId: a.merchantId, memo: a.memo,
    legs: legs(a.amount.gt(0) ? leg(adj, available, a.amount, a.currency) : leg(available, adj, a.amount.neg(), a.currency)),
  };
}

/**
 * Chargeback recorded against a payment: available -> chargebacks. The ledger refuses it when
 * available does not cover it (balance_not_enough).
 */
export function chargebackDebited(o: { chargebackId: string; paymentId: string; merchantId: string; currency: Currency; amount: Decimal }): Transfer {
  return {
    kind: 'CHARGEBACK_DEBIT', refType: 'chargeback', refId: o.chargebackId, merchantId: o.merchantId, memo: `chargeback of payment ${o.paymentId}`,
    legs: legs(leg(merchantAccount(o.merchantId, 'available', o.currency), operatorAccount('chargebacks', o.currency), o.amount, o.currency)),
  };
}

/**
 * Transfers that follow a provider's answer contradicting a final state we had made (docs/adr/0021-provider-answer-after-final-state.md); each kind applies once per object.
 */

/** A payout we returned (FAIL, ERROR) that the provider paid: available -> payout clearing and fee revenue, as its SUCCESS would have. */
export function payoutPaidAfterAll(p: PayoutMoney & { connector: string }): Transfer {
  const available = merchantAccount(p.merchantId, 'available', p.currency);
  return {
    kind: 'PAYOUT_CONFLICT_DEBIT', refType: 'payout', refId: p.payoutId, merchantId: p.merchantId, memo: 'the provider paid a payout we had returned',
    legs: legs(
      leg(available, operatorAccount('payout_clearing', p.currency, p.connector), p.amount, p.currency),
      leg(available, operatorAccount('fee_revenue', p.currency), p.commission, p.currency),
    ),
  };
}

/** A payout we made SUCCESS that the provider failed: payout clearing and fee revenue back to available. */
export function payoutNotPaidAfterAll(p: PayoutMoney & { connector: string }): Transfer {
  const available = merchantAccount(p.merchantId, 'available', p.currency);
  return {
    kind: 'PAYOUT_CONFLICT_CREDIT', refType: 'payout', refId: p.payoutId, merchantId: p.merchantId, memo: 'the provider failed a payout we had made SUCCESS',
    legs: legs(
      leg(operatorAccount('payout_clearing', p.currency, p.connector), available, p.amount, p.currency),
      leg(operatorAccount('fee_revenue', p.currency), available, p.commission, p.currency),
    ),
  };
}

/**
 * A payout we returned that the provider's notification says it paid, before a read confirmed
 * it: what left is held from available (amount -> locked, fee -> hold), so no other payout can
 * spend it. Ended once by conflictHoldReleased (docs/adr/0080-unconfirmed-conflict-holds-the-money.md).
 */
export function payoutConflictHeld(p: PayoutMoney): Transfer {
  const m = (b: 'available' | 'locked' | 'hold') => merchantAccount(p.merchantId, b, p.currency);
  return {
    kind: 'PAYOUT_CONFLICT_HOLD', refType: 'payout', refId: p.payoutId, merchantId: p.merchantId, memo: 'held: the provider says it paid a payout we had returned',
    legs: legs(leg(m('available'), m('locked'), p.amount, p.currency), leg(m('available'), m('hold'), p.commission, p.currency)),
  };
}

/** A refund we failed that the provider's notification says it made, before a read confirmed it: the amount held (available -> locked). */
export function refundConflictHeld(r: Omit<RefundMoney, 'paymentId'>): Transfer {
  const m = (b: 'available' | 'locked') => merchantAccount(r.merchantId, b, r.currency);
  return {
    kind: 'REFUND_CONFLICT_HOLD', refType: 'refund', refId: r.refundId, merchantId: r.merchantId, memo: 'held: the provider says it made a refund we had failed',
    legs: legs(leg(m('available'), m('locked'), r.amount, r.currency)),
  };
}

const RELEASE_OF = { PAYOUT_CONFLICT_HOLD: 'PAYOUT_CONFLICT_RELEASE', REFUND_CONFLICT_HOLD: 'REFUND_CONFLICT_RELEASE' } as const;

/**
 * The end of a conflict's hold: its legs (as the ledger wrote them) the other way, back to
 * available. Applied once per object (its id); a confirmed debit follows it in the same
 * transaction, so the held money then leaves as the provider says.
 */
export function conflictHoldReleased(hold: { kind: keyof typeof RELEASE_OF; refType: string; refId: string; merchantId: string; legs: Leg[] }): Transfer {
  return {
    kind: RELEASE_OF[hold.kind], refType: hold.refType, refId: hold.refId, merchantId: hold.merchantId, memo: 'conflict hold ended',
    legs: hold.legs.map((l) => ({ ...l, from: l.to, to: l.from })),
  };
}

/** A refund we returned (FAIL) that the provider refunded: available -> refund clearing. */
export function refundMadeAfterAll(r: RefundMoney): Transfer {
  return {
    kind: 'REFUND_CONFLICT_DEBIT', refType: 'refund', refId: r.refundId, merchantId: r.merchantId, memo: 'the provider made a refund we had failed',
    legs: legs(leg(merchantAccount(r.merchantId, 'available', r.currency), operatorAccount('refund_clearing', r.currency), r.amount, r.currency)),
  };
}

/** A refund we made SUCCESS that the provider failed: refund clearing back to available. */
export function refundNotMadeAfterAll(r: RefundMoney): Transfer {
  return {
    kind: 'REFUND_CONFLICT_CREDIT', refType: 'refund', refId: r.refundId, merchantId: r.merchantId, memo: 'the provider failed a refund we had made SUCCESS',
    legs: legs(leg(operatorAccount('refund_clearing', r.currency), merchantAccount(r.merchantId, 'available', r.currency), r.amount, r.currency)),
  };
}

/** A payment we failed that the provider charged: credited as its PAYMENT_CREDIT would have been. */
export function paymentReceivedAfterAll(p: PaymentReceived): Transfer {
  return { ...paymentReceived(p), kind: 'PAYMENT_CONFLICT_CREDIT', memo: 'the provider charged a payment we had failed' };
}

/** A payment we credited that the provider declined: its PAYMENT_CREDIT's legs (`credit`) the other way. */
export function paymentNotReceivedAfterAll(p: { paymentId: string; merchantId: string; credit: Leg[] }): Transfer {
  return {
    kind: 'PAYMENT_CONFLICT_DEBIT', refType: 'payment', refId: p.paymentId, merchantId: p.merchantId, memo: 'the provider declined a payment we had credited',
    legs: p.credit.map((l) => ({ ...l, from: l.to, to: l.from })),
  };
}
