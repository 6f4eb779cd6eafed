import { DomainError, type ErrorCode } from '../../errors.js';
import { MONEY_RECEIVED_STATUSES } from '../../kernel/statuses.js';
import { sourcesOf as tableSourcesOf } from '../../kernel/transitions.js';

export type BillStatus = 'NEW' | 'PROCESS' | 'UNDERPAID' | 'SUCCESS' | 'OVERPAID' | 'FAIL';
export type BillType = 'NORMAL' | 'MULTI';

/** Statuses in which a payment has received money (src/domain/statuses.ts). */
export const PAID_STATUSES: readonly BillStatus[] = MONEY_RECEIVED_STATUSES;

/**
 * Every bill status change, per bill type (DESIGN.md "States").
 * NORMAL: the first payment that receives money finishes the bill for good; a FAIL may be
 * paid again. MULTI: the status follows its latest payment, so a finished status goes back
 * to PROCESS when a new payment starts.
 */
export const BILL_TRANSITIONS: Record<BillType, Record<BillStatus, readonly BillStatus[]>> = {
  NORMAL: {
    NEW: ['PROCESS'],
    PROCESS: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'],
    FAIL: ['PROCESS'],
    SUCCESS: [],
    UNDERPAID: [],
    OVERPAID: [],
  },
  MULTI: {
    NEW: ['PROCESS'],
    PROCESS: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'],
    FAIL: ['PROCESS'],
    SUCCESS: ['PROCESS'],
    UNDERPAID: ['PROCESS'],
    OVERPAID: ['PROCESS'],
  },
};

/** An illegal bill status change (a programming or race error, never a client's input). */
export class IllegalBillTransitionError extends DomainError {
  constructor(public readonly from: BillStatus, public readonly to: BillStatus, public readonly type: BillType) {
    // A finished NORMAL bill is what a client can run into (e.g. paying twice): the spec's key.
    super('bill_is_finished');
  }
}

export function canTransition(from: BillStatus, to: BillStatus, type: BillType): boolean {
  return BILL_TRANSITIONS[type][from].includes(to);
}

export function assertTransition(from: BillStatus, to: BillStatus, type: BillType): void {
  if (!canTransition(from, to, type)) throw new IllegalBillTransitionError(from, to, type);
}

/** A NORMAL bill whose payment received money: it never changes again (no toggle, no payment). */
export function isBillFinished(bill: { type: BillType; status: BillStatus }): boolean {
  return bill.type === 'NORMAL' && PAID_STATUSES.includes(bill.status);
}

/** The statuses a bill of `type` may be in just before it enters `to` (for conditional UPDATEs). */
export function sourcesOf(to: BillStatus, type: BillType): BillStatus[] {
  return tableSourcesOf(BILL_TRANSITIONS[type], to);
}

/**
 * The statuses in which a bill of each type accepts a new payment: those it may enter PROCESS
 * from, and for a MULTI bill PROCESS itself (another payment running; the bill stays there).
 * The payment-open statement and every refusal (API, page) read this one definition.
 */
export const PAYABLE_FROM: Readonly<Record<BillType, readonly BillStatus[]>> = {
  NORMAL: sourcesOf('PROCESS', 'NORMAL'),
  MULTI: [...sourcesOf('PROCESS', 'MULTI'), 'PROCESS'],
};

/** Each refusal's status is its code's in src/errors.ts (the payment page's JSON answers, DESIGN "Sandbox"). */
export type PayRefusal = Extract<ErrorCode, 'bill_is_finished' | 'bill_inactive' | 'bill_expired' | 'payment_in_progress'>;

/** Past its ttl at `now` (the cabinet's lists; the API and the page ask the database's clock). */
export function isBillExpired(bill: { expiresAt: Date | null }, now: Date = new Date()): boolean {
  return bill.expiresAt !== null && bill.expiresAt.getTime() <= now.getTime();
}

/** Why a payment cannot open on this bill now, or null when it can. */
export function payRefusal(bill: { type: BillType; status: BillStatus; active: boolean; expired?: boolean }): PayRefusal | null {
  if (isBillFinished(bill)) return 'bill_is_finished';
  if (!bill.active) return 'bill_inactive';
  // Past its ttl (api-in-the-wild: "an expired bill takes no payment").
  if (bill.expired) return 'bill_expired';
  if (!PAYABLE_FROM[bill.type].includes(bill.status)) return 'payment_in_progress';
  return null;
}
