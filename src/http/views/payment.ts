import { Type } from '@sinclair/typebox';
import { money2, money8 } from '../../lib/money.js';
import { formatDateTime } from '../../lib/time.js';

export interface PaymentRow {
  id: string;
  bill_id: string;
  status: string;
  amount: string;
  amount_received: string;
  from_card: string | null;
  currency_in: string;
  created_at: Date;
  commission: string;
  account_amount: string | null;
  account_currency: string;
  refunded_amount: string;
}

/** Columns to SELECT for `PaymentRow`. */
export const PAYMENT_COLUMNS = `id, bill_id, status, amount, amount_received, from_card, currency_in, created_at,
  commission, account_amount, account_currency, refunded_amount`;

export interface PaymentView {
  id: string;
  bill_id: string;
  status: string;
  amount: string;
  amount_received: string;
  from_card: string | null;
  currency_in: string;
  created_at: string;
  commission: string;
  account_amount: string | null;
  account_currency_code: string;
  refunded_amount: string;
}

/**
 * The wire payment: spec fields plus commission, account_amount (what the balance received,
 * 8 decimals like balances; null until credited), account_currency_code and refunded_amount.
 */
export function paymentView(p: PaymentRow, tz: string): PaymentView {
  return {
    id: p.id,
    bill_id: p.bill_id,
    status: p.status,
    amount: money2(p.amount),
    amount_received: money2(p.amount_received),
    from_card: p.from_card,
    currency_in: p.currency_in,
    created_at: formatDateTime(p.created_at, tz),
    commission: money2(p.commission),
    account_amount: p.account_amount === null ? null : money8(p.account_amount),
    account_currency_code: p.account_currency,
    refunded_amount: money2(p.refunded_amount),
  };
}

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const PaymentSchema = Type.Object({
  id: Type.String(),
  bill_id: Type.String(),
  status: Type.String({ enum: ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'] }),
  amount: Type.String({ description: 'Total payment amount, 2 decimals' }),
  amount_received: Type.String({ description: '2 decimals' }),
  from_card: NullableString,
  currency_in: Type.String(),
  created_at: Type.String({ description: 'Y-m-d H:i:s, service time zone' }),
  commission: Type.String({ description: '2 decimals' }),
  account_amount: NullableString,
  account_currency_code: Type.String(),
  refunded_amount: Type.String({ description: '2 decimals' }),
});
