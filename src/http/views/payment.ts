import { Type } from '@sinclair/typebox';
import { moneyNumber } from '../../lib/money.js';
import { formatDateTime } from '../../lib/time.js';
import { paymentError } from '../../domain/payment/payment-errors.js';
import { PAYMENT_COLUMNS, type PaymentRow } from '../../domain/payment/payment.row.js';

export { PAYMENT_COLUMNS, type PaymentRow };

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
  account_bank: string | null;
  payer_phone: string | null;
  payer_email: string | null;
  payer_name: string | null;
  payer_comment: string | null;
  error_code: string | null;
  error_message: string | null;
  payment_method_id: string | null;
}

/**
 * The wire payment: spec fields plus commission, account_amount (what the balance received;
 * null until credited), account_currency_code, refunded_amount, and the fields the public
 * clients read (null when absent): account_bank (the payer's bank; the sandbox acquirer does not
 * report one), payer_* (what the page asked the payer), error_code and error_message (why a FAIL
 * failed). Amounts are JSON numbers.
 */
export function paymentView(p: PaymentRow, tz: string): PaymentView {
  const err = paymentError(p.status, p.failure_reason);
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
    account_bank: null,
    payer_phone: p.payer_phone,
    payer_email: p.payer_email,
    payer_name: p.payer_name,
    payer_comment: p.payer_comment,
    error_code: err.code,
    error_message: err.message,
    payment_method_id: p.payment_method_id,
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
  account_bank: Type.Union([Type.String(), Type.Null()], { description: "The payer's bank when the acquirer reports it (null in the sandbox)" }),
  payer_phone: Type.Union([Type.String(), Type.Null()], { description: 'Asked on the page (request_fields), E.164', examples: ['+79001234567'] }),
  payer_email: Type.Union([Type.String(), Type.Null()], { description: 'Asked on the page, or the bill\'s payer_email', examples: ['buyer@example.com'] }),
  payer_name: Type.Union([Type.String(), Type.Null()], { examples: ['Anna'] }),
  payer_comment: Type.Union([Type.String(), Type.Null()], { examples: ['Ring twice'] }),
  error_code: Type.Union([Type.String(), Type.Null()], { description: 'Why a FAIL failed; null otherwise', examples: ['card_declined'] }),
  error_message: Type.Union([Type.String(), Type.Null()], { examples: ['The card was declined by the issuer.'] }),
  payment_method_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The saved card this payment saved (the payer consented) or was charged with (payment/charge); null when none',
    examples: ['Zq3LmN8pR2sT5vW7'],
  }),
}, {
  examples: [{
    id: '1Ja97ZcnUXyfJn9l', bill_id: 'vEmenaKVep', status: 'FAIL', amount: 100, amount_received: 0, from_card: '400000******0002',
    currency_in: 'RUB', created_at: '2026-11-23 18:42:11', commission: 0, account_amount: 0, account_currency_code: 'RUB',
    refunded_amount: 0, account_bank: null, payer_phone: '+79001234567', payer_email: 'buyer@example.com', payer_name: 'Anna',
    payer_comment: null, error_code: 'card_declined', error_message: 'The card was declined by the issuer.', payment_method_id: null,
  }],
});
