/** A payment row as the merchant's reads select it (snake_case columns, NUMERIC as string). */
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
  payer_email: string | null;
  payer_phone: string | null;
  payer_name: string | null;
  payer_comment: string | null;
  failure_reason: string | null;
  payment_method_id: string | null;
}

/** Columns to SELECT for `PaymentRow`. */
export const PAYMENT_COLUMNS = `id, bill_id, status, amount, amount_received, from_card, currency_in, created_at,
  commission, account_amount, account_currency, refunded_amount, payer_email, payer_phone, payer_name, payer_comment,
  failure_reason, payment_method_id`;
