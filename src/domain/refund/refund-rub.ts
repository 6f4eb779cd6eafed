import { Decimal } from 'decimal.js';
import type { RefundablePayment } from './refund.repository.js';

/**
 * The roubles the provider gives back for a refund of `amount` (in the payment's account
 * currency). The payer paid the acquirer in RUB, so a RUB payment's refund is its own amount;
 * another currency's is the same share of the RUB paid as `amount` is of what the payment
 * received, rounded half-up to kopecks, and never more than the RUB not yet refunded. The refund
 * that takes all that is left of a payment takes all the RUB left, so rounding never strands
 * or overdraws a kopeck at the provider.
 */
export function refundRub(p: Pick<RefundablePayment, 'accountCurrency' | 'received' | 'receivedRub' | 'refundedRub' | 'chargebackAmount'>, amount: Decimal, takesTheRest: boolean): Decimal {
  if (p.accountCurrency === 'RUB') return amount;
  const leftRub = Decimal.max(p.receivedRub.minus(p.refundedRub), 0);
  if (takesTheRest && p.chargebackAmount.isZero()) return leftRub;
  if (p.received === null || p.received.lte(0)) return new Decimal(0);
  const share = amount.mul(p.receivedRub).div(p.received).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
  return Decimal.min(share, leftRub);
}
