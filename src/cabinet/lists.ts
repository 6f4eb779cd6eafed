import type { Decimal } from 'decimal.js';

// The `where` of each list under its filters is the domain's (domain/merchant/list-filters.ts).

/**
 * How much of a payment went back: null, 'partly' or 'full' ("Partly refunded" / "Refunded").
 * The whole is what the refund service lets go back: the credited amount plus the commission.
 */
export function refundState(p: { refundedAmount: Decimal; accountAmount: Decimal | null; commission: Decimal }): 'full' | 'partly' | null {
  if (!p.refundedAmount.gt(0)) return null;
  if (p.accountAmount === null) return 'partly';
  return p.refundedAmount.gte(p.accountAmount.add(p.commission)) ? 'full' : 'partly';
}
