import { Decimal } from 'decimal.js';

/** decimal(10,2): bill, payment and refund amounts. */
export const MAX_AMOUNT = new Decimal('99999999.99');

/** Bill and payment amounts on the wire: 2 decimals. */
export const money2 = (d: Decimal.Value): string => new Decimal(d).toFixed(2);
/** Balance and payout amounts on the wire: 8 decimals. */
export const money8 = (d: Decimal.Value): string => new Decimal(d).toFixed(8);

/** True for a positive amount with at most 2 decimals and at most 99,999,999.99. */
export function isValidAmount(d: Decimal): boolean {
  return d.isFinite() && d.gt(0) && d.decimalPlaces() <= 2 && d.lte(MAX_AMOUNT);
}

/** Commission = amount * percent / 100 + fixed, rounded half-up to kopecks. */
export function commissionOf(amount: Decimal, percent: Decimal, fixed: Decimal): Decimal {
  return amount.mul(percent).div(100).add(fixed).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
}
