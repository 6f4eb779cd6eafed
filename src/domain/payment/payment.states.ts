import type { PaymentStatus } from '../../generated/prisma/enums.js';
import { ConflictError } from '../../errors.js';
import { MONEY_RECEIVED_STATUSES } from '../../kernel/statuses.js';
import { sourcesOf } from '../../kernel/transitions.js';

export { MONEY_RECEIVED_STATUSES };

/**
 * Every payment transition (DESIGN "States"): NEW (payer opened a payment) -> PROCESS (sent to
 * the acquirer) -> one final status. Final statuses never change.
 */
export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  NEW: ['PROCESS', 'FAIL'],
  PROCESS: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'],
  SUCCESS: [],
  UNDERPAID: [],
  OVERPAID: [],
  FAIL: [],
};

export const FINAL_PAYMENT_STATUSES: readonly PaymentStatus[] = [...MONEY_RECEIVED_STATUSES, 'FAIL'];


/** A payment asked to move where its table does not allow: 409 naming its current status. */
export class IllegalPaymentTransitionError extends ConflictError {
  constructor(public readonly from: PaymentStatus, public readonly to: PaymentStatus) {
    super(`Payment is ${from}; it cannot become ${to}.`);
  }
}

/** The statuses a payment may be in just before it enters `to` (the finish statement's guard). */
export const paymentSourcesOf = (to: PaymentStatus): PaymentStatus[] => sourcesOf(PAYMENT_TRANSITIONS, to);

export const canTransitionPayment = (from: PaymentStatus, to: PaymentStatus): boolean =>
  PAYMENT_TRANSITIONS[from].includes(to);

export function assertPaymentTransition(from: PaymentStatus, to: PaymentStatus): void {
  if (!canTransitionPayment(from, to)) throw new IllegalPaymentTransitionError(from, to);
}

export const isPaymentFinal = (s: PaymentStatus): boolean => FINAL_PAYMENT_STATUSES.includes(s);
