import type { Decimal } from 'decimal.js';
import type { Currency } from '../../generated/prisma/enums.js';

export interface RefundOrder {
  /** Idempotency key at the acquirer: the same refund asked twice is refunded once. */
  refundId: string;
  paymentId: string;
  amount: Decimal;
  currency: Currency;
  /** The payer's masked card (first 6, stars, last 4), null for SBP payments. */
  fromCard: string | null;
}

export type RefundOutcome = { ok: true } | { ok: false; reason: string };

/** Sends a refund to the acquirer that took the payment. A real bank connector is one more class. */
export interface RefundAcquirer {
  refund(order: RefundOrder): Promise<RefundOutcome>;
}

/**
 * Sandbox rule (docs/decisions.md, README): refunds of payments paid with a card ending in 4444
 * (the sandbox's second paying card, 5555555555554444) FAIL; every other refund SUCCEEDS.
 */
export class SandboxRefundAcquirer implements RefundAcquirer {
  async refund(order: RefundOrder): Promise<RefundOutcome> {
    if (order.fromCard !== null && order.fromCard.endsWith('4444')) {
      return { ok: false, reason: 'sandbox: refunds to cards ending 4444 are declined' };
    }
    return { ok: true };
  }
}
