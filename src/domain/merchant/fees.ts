import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { commissionOf } from '../../lib/money.js';

/** The fee columns of a merchant row (null: the operator's default). */
export interface MerchantFeeColumns {
  paymentCardPercent: Decimal.Value | null; paymentCardFixed: Decimal.Value | null;
  paymentSbpPercent: Decimal.Value | null; paymentSbpFixed: Decimal.Value | null;
  payoutCardPercent: Decimal.Value | null; payoutCardFixed: Decimal.Value | null;
  payoutSbpPercent: Decimal.Value | null; payoutSbpFixed: Decimal.Value | null;
}

export type FeeKind = 'payment_card' | 'payment_sbp' | 'payout_card' | 'payout_sbp';

const COLUMNS: Record<FeeKind, [keyof MerchantFeeColumns, keyof MerchantFeeColumns]> = {
  payment_card: ['paymentCardPercent', 'paymentCardFixed'],
  payment_sbp: ['paymentSbpPercent', 'paymentSbpFixed'],
  payout_card: ['payoutCardPercent', 'payoutCardFixed'],
  payout_sbp: ['payoutSbpPercent', 'payoutSbpFixed'],
};

/** Percent and fixed part of a fee: the merchant's own setting, else the operator's default. */
export function feeRate(config: Config, m: Partial<MerchantFeeColumns>, kind: FeeKind): { percent: Decimal; fixed: Decimal } {
  const [pk, fk] = COLUMNS[kind];
  const p = m[pk];
  const f = m[fk];
  return {
    percent: p === null || p === undefined ? config.defaultFees[pk] : new Decimal(p.toString()),
    fixed: f === null || f === undefined ? config.defaultFees[fk] : new Decimal(f.toString()),
  };
}

/** The commission on `amount` for a fee kind, rounded half-up to kopecks. */
export function commissionFor(config: Config, m: Partial<MerchantFeeColumns>, kind: FeeKind, amount: Decimal): Decimal {
  const { percent, fixed } = feeRate(config, m, kind);
  return commissionOf(amount, percent, fixed);
}
