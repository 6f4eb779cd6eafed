import type { RefundStatus } from '../../generated/prisma/enums.js';
import { ConflictError } from '../../errors.js';
import { sourcesOf as tableSourcesOf } from '../../kernel/transitions.js';

/**
 * Every refund transition (DESIGN.md): NEW -> PROCESS -> SUCCESS | FAIL; SUCCESS and FAIL are
 * final. A refund left in PROCESS by a crashed worker is taken again once its lease expires
 * (a lease renewal, not a transition): the acquirer is asked with the refund id as its
 * idempotency key, so asking twice refunds once.
 */
export const REFUND_TRANSITIONS: Readonly<Record<RefundStatus, readonly RefundStatus[]>> = {
  NEW: ['PROCESS'],
  PROCESS: ['SUCCESS', 'FAIL'],
  SUCCESS: [],
  FAIL: [],
};

export const FINAL_REFUND_STATUSES: readonly RefundStatus[] = ['SUCCESS', 'FAIL'];

/** An attempted transition the table does not allow (a lost race, never user input): 409 naming the current status. */
export class IllegalRefundTransitionError extends ConflictError {
  constructor(public readonly from: RefundStatus, public readonly to: RefundStatus) {
    super(`Refund is ${from}; it cannot become ${to}.`);
  }
}

export function canTransition(from: RefundStatus, to: RefundStatus): boolean {
  return REFUND_TRANSITIONS[from].includes(to);
}

export function assertTransition(from: RefundStatus, to: RefundStatus): void {
  if (!canTransition(from, to)) throw new IllegalRefundTransitionError(from, to);
}

/** The statuses a refund may be in just before it enters `to` (used in conditional UPDATEs). */
export function sourcesOf(to: RefundStatus): RefundStatus[] {
  return tableSourcesOf(REFUND_TRANSITIONS, to);
}
