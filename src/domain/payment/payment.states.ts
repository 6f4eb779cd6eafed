import type { PaymentStatus } from '../../generated/prisma/enums.js';
import { MONEY_RECEIVED_STATUSES } from '../statuses.js';

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


export class IllegalPaymentTransitionError extends Error {
  constructor(public readonly from: PaymentStatus, public readonly to: PaymentStatus) {
    super(`payment cannot go from ${from} to ${to}`);
  }
}

export const canTransitionPayment = (from: PaymentStatus, to: PaymentStatus): boolean =>
  PAYMENT_TRANSITIONS[from].includes(to);

export function assertPaymentTransition(from: PaymentStatus, to: PaymentStatus): void {
  if (!canTransitionPayment(from, to)) throw new IllegalPaymentTransitionError(from, to);
}

export const isPaymentFinal = (s: PaymentStatus): boolean => FINAL_PAYMENT_STATUSES.includes(s);
