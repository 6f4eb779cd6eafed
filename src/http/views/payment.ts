import { Type } from '@sinclair/typebox';
import { moneyNumber } from '../../lib/money.js';
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
  amount: number;
  amount_received: number;
  from_card: string | null;
  currency_in: string;
  created_at: string;
  commission: number;
  account_amount: number | null;
  account_currency_code: string;
  refunded_amount: number;
}

/**
 * The wire payment: spec fields plus commission, account_amount (what the balance received;
 * null until credited), account_currency_code and refunded_amount. Amounts are JSON numbers.
 */
export function paymentView(p: PaymentRow, tz: string): PaymentView {
  return {
    id: p.id,
    bill_id: p.bill_id,
    status: p.status,
    amount: moneyNumber(p.amount),
    amount_received: moneyNumber(p.amount_received),
    from_card: p.from_card,
    currency_in: p.currency_in,
    created_at: formatDateTime(p.created_at, tz),
    commission: moneyNumber(p.commission),
    account_amount: p.account_amount === null ? null : moneyNumber(p.account_amount),
    account_currency_code: p.account_currency,
    refunded_amount: moneyNumber(p.refunded_amount),
  };
}

const NullableString = Type.Union([Type.String(), Type.Null()]);
const Amount = (description: string) => Type.Number({ description: `${description}; a JSON number` });

export const PaymentSchema = Type.Object({
  id: Type.String(),
  bill_id: Type.String(),
  status: Type.String({ enum: ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'] }),
  amount: Amount('Total payment amount'),
  amount_received: Amount('Received amount'),
  from_card: NullableString,
  currency_in: Type.String(),
  created_at: Type.String({ description: 'Y-m-d H:i:s, service time zone' }),
  commission: Amount('Fee'),
  account_amount: Type.Union([Type.Number(), Type.Null()], { description: 'Credited to the balance, in account_currency_code; null until credited' }),
  account_currency_code: Type.String(),
  refunded_amount: Amount('Refunded so far'),
});
