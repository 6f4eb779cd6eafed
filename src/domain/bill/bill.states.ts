import { DomainError } from '../../http/errors.js';

export type BillStatus = 'NEW' | 'PROCESS' | 'UNDERPAID' | 'SUCCESS' | 'OVERPAID' | 'FAIL';
export type BillType = 'NORMAL' | 'MULTI';

/** Statuses in which a payment has received money. */
export const PAID_STATUSES: readonly BillStatus[] = ['SUCCESS', 'UNDERPAID', 'OVERPAID'];

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
    super('bill_is_finished', 403);
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
