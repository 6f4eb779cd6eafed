import { ConflictError } from '../../errors.js';
import type { PayoutStatus } from '../../generated/prisma/enums.js';
import { sourcesOf } from '../../kernel/transitions.js';

/**
 * Every payout transition (DESIGN.md "States"). A payout is created NEW and leaves NEW in the
 * same transaction (MODERATING over the merchant's threshold, else PROCESS); final states never
 * change.
 */
export const PAYOUT_TRANSITIONS: Readonly<Record<PayoutStatus, readonly PayoutStatus[]>> = {
  NEW: ['MODERATING', 'PROCESS'],
  MODERATING: ['PROCESS', 'DECLINED'],
  PROCESS: ['SUCCESS', 'FAIL', 'ERROR'],
  SUCCESS: [],
  FAIL: [],
  ERROR: [],
  DECLINED: [],
};

export const FINAL_PAYOUT_STATUSES: readonly PayoutStatus[] = ['SUCCESS', 'FAIL', 'ERROR', 'DECLINED'];

/** Statuses whose payouts do not count against the daily and monthly limits. */
export const NOT_COUNTED_STATUSES: readonly PayoutStatus[] = ['FAIL', 'ERROR', 'DECLINED'];

export function canTransition(from: PayoutStatus, to: PayoutStatus): boolean {
  return PAYOUT_TRANSITIONS[from].includes(to);
}

/** Raised when a payout is asked to move where its table does not allow (e.g. approve twice). */
export class IllegalPayoutTransition extends ConflictError {
  constructor(public readonly from: PayoutStatus, public readonly to: PayoutStatus) {
    super(`Payout is ${from}; it cannot become ${to}.`);
  }
}

/** The statuses a payout may be in just before it enters `to` (the conditional UPDATE's guard). */
export const payoutSourcesOf = (to: PayoutStatus): PayoutStatus[] => sourcesOf(PAYOUT_TRANSITIONS, to);

export function assertTransition(from: PayoutStatus, to: PayoutStatus): void {
  if (!canTransition(from, to)) throw new IllegalPayoutTransition(from, to);
}
