import { money8, moneyNumber } from '../../lib/money.js';
import { formatDateTime } from '../../lib/time.js';
import type { PayoutWebhookFields } from '../../outbox/events.js';
import type { ProviderData } from '../providers/connector.js';

/** A payout row as the plain-SQL paths read it (NUMERIC as text). */
export interface PayoutRow {
  id: string;
  merchant_id: string;
  request_id: string;
  order_id: string | null;
  kind: 'PERSONAL' | 'REGULAR';
  status: 'NEW' | 'MODERATING' | 'PROCESS' | 'SUCCESS' | 'FAIL' | 'ERROR' | 'DECLINED';
  account_type: 'CARD' | 'SBP';
  account_masked: string;
  account_enc: string | null;
  /** The connector that took it (set once one answered or left its outcome unknown) and its reference. */
  connector?: string | null;
  provider_ref?: string | null;
  /** What its connector's answers kept (docs/adr/0118; selected by the lifecycle's reads only, never shown). */
  provider_data?: ProviderData | null;
  card_holder: string | null;
  bank_member_id: string | null;
  amount: string;
  commission: string;
  currency: string;
  is_auto: boolean;
  created_at: Date;
  /** Why it ended FAIL, ERROR or DECLINED (the provider's or the operator's words). */
  failure_reason?: string | null;
}

export const PAYOUT_COLUMNS = `id, merchant_id, request_id, order_id, kind, status, account_type, account_masked,
  account_enc, card_holder, bank_member_id::text AS bank_member_id, amount::text AS amount,
  commission::text AS commission, currency, is_auto, created_at, connector, provider_ref, failure_reason`;

/** The spec's Payout object: amounts as JSON numbers (go-cent-app decodes them as float64), the account masked. */
export interface PayoutView {
  id: string;
  status: string;
  amount: number;
  commission: number;
  account_identifier: string;
  currency: string;
  created_at: string;
  /** Why a FAIL, ERROR or DECLINED payout failed; null otherwise (as payments' error_message). */
  error_message: string | null;
}

const FAILED = new Set(['FAIL', 'ERROR', 'DECLINED']);

export function payoutView(r: Pick<PayoutRow, 'id' | 'status' | 'amount' | 'commission' | 'account_masked' | 'currency' | 'created_at' | 'failure_reason'>, tz: string): PayoutView {
  return {
    id: r.id,
    status: r.status,
    amount: moneyNumber(r.amount),
    commission: moneyNumber(r.commission),
    account_identifier: r.account_masked,
    currency: r.currency,
    created_at: formatDateTime(r.created_at, tz),
    error_message: FAILED.has(r.status) ? (r.failure_reason ?? null) : null,
  };
}

/** Operator view: the spec's fields plus who and what; amounts stay 8-decimal strings (operator API). */
export function adminPayoutView(r: PayoutRow, tz: string) {
  return {
    ...payoutView(r, tz),
    amount: money8(r.amount),
    commission: money8(r.commission),
    merchant_id: r.merchant_id,
    order_id: r.order_id,
    kind: r.kind,
    account_type: r.account_type,
    request_id: r.request_id,
  };
}

/**
 * The payout webhook (spec part 6). ERROR is sent as FAIL (the spec's webhook knows only
 * DECLINED, SUCCESS, FAIL); amounts with 8 decimals, exactly the strings signed.
 */
export function payoutWebhookFields(r: PayoutRow, status: 'SUCCESS' | 'FAIL' | 'ERROR' | 'DECLINED'): PayoutWebhookFields {
  return {
    TrsId: r.id,
    Amount: money8(r.amount),
    IsAuto: r.is_auto ? 'true' : 'false',
    Status: status === 'ERROR' ? 'FAIL' : status,
    Currency: r.currency,
    Commission: money8(r.commission),
    AccountType: r.account_type === 'CARD' ? 'BANK_CARD' : 'SBP',
    AccountNumber: r.account_masked,
    BalanceAmount: money8(r.amount),
    BalanceCommission: money8(r.commission),
    BalanceCurrency: r.currency,
    CommissionApplyType: 'sender',
  };
}
