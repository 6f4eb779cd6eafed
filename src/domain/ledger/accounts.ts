import type { Currency } from '../../generated/prisma/enums.js';

/**
 * Accounts of the double-entry ledger (DESIGN "Balance and ledger"). An account id says what it
 * is and its currency comes first, so the database can check that both sides of an entry are in
 * the entry's currency without a lookup: '<CUR>:merchant:<merchant_id>:<bucket>' for a
 * merchant's available / locked / hold, '<CUR>:<kind>[:<connector>]' for the operator's own.
 */
export const MERCHANT_BUCKETS = ['available', 'locked', 'hold'] as const;
export type MerchantBucket = (typeof MERCHANT_BUCKETS)[number];

export const OPERATOR_KINDS = ['acquirer_clearing', 'payout_clearing', 'fee_revenue', 'refund_clearing', 'chargebacks', 'adjustments', 'fx'] as const;
export type OperatorKind = (typeof OPERATOR_KINDS)[number];

/** Operator accounts kept per connector (what each acquirer or payout provider owes or is owed). */
export const PER_CONNECTOR: readonly OperatorKind[] = ['acquirer_clearing', 'payout_clearing'];

/**
 * Accounts whose balance is read as debits minus credits (what is owed to the operator or what
 * it spent): the acquirer's clearing, corrections granted to merchants, the fx position.
 * Every other account (merchant money, payouts and refunds owed out, fee revenue, chargebacks)
 * is read as credits minus debits.
 */
export const DEBIT_NORMAL: readonly string[] = ['acquirer_clearing', 'adjustments', 'fx'];

export function merchantAccount(merchantId: string, bucket: MerchantBucket, currency: Currency): string {
  return `${currency}:merchant:${merchantId}:${bucket}`;
}

export function operatorAccount(kind: OperatorKind, currency: Currency, connector?: string): string {
  if (PER_CONNECTOR.includes(kind) !== (connector !== undefined)) throw new Error(`operator account ${kind}: connector ${connector ?? 'missing'}`);
  return connector === undefined ? `${currency}:${kind}` : `${currency}:${kind}:${connector}`;
}

export interface AccountInfo { currency: Currency; kind: string; merchantId: string | null; connector: string | null }

export function parseAccount(id: string): AccountInfo {
  const [currency, second, third, fourth] = id.split(':');
  if (second === 'merchant') return { currency: currency as Currency, kind: fourth!, merchantId: third!, connector: null };
  return { currency: currency as Currency, kind: second!, merchantId: null, connector: third ?? null };
}
