import { Decimal } from 'decimal.js';

/** decimal(10,2): bill, payment and refund amounts. */
export const MAX_AMOUNT = new Decimal('99999999.99');

/** Bill and payment amounts on the wire: 2 decimals. */
export const money2 = (d: Decimal.Value): string => new Decimal(d).toFixed(2);
/** Balances on the wire (and postback/webhook form fields): 8 decimals. */
export const money8 = (d: Decimal.Value): string => new Decimal(d).toFixed(8);

/**
 * A JSON-number amount of the API (bills, payments, payouts, refunds: public clients decode them
 * into float64/float, docs/adr/0001-money-as-decimal-and-wire-amounts.md). Converted once, at the wire, after all
 * arithmetic; the round trip is checked so a value a double cannot hold exactly (never for
 * decimal(10,2), or 2-decimal payouts below 10^13) fails loudly instead of going out altered.
 */
export function moneyNumber(d: Decimal.Value): number {
  const dec = new Decimal(d);
  const n = dec.toNumber();
  if (!Number.isFinite(n) || !new Decimal(n).eq(dec)) throw new Error(`amount ${dec.toString()} has no exact JSON number`);
  return n;
}

/** True for a positive amount with at most 2 decimals and at most 99,999,999.99. */
export function isValidAmount(d: Decimal): boolean {
  return d.isFinite() && d.gt(0) && d.decimalPlaces() <= 2 && d.lte(MAX_AMOUNT);
}

/** Commission = amount * percent / 100 + fixed, rounded half-up to kopecks. */
export function commissionOf(amount: Decimal, percent: Decimal, fixed: Decimal): Decimal {
  return amount.mul(percent).div(100).add(fixed).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
}
