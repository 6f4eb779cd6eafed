/** A bill row as the views read it (snake_case columns, NUMERIC as string). */
export interface BillRow {
  id: string;
  status: string;
  type: string;
  amount: string;
  currency_in: string;
  active: boolean;
  created_at: Date;
  order_id: string | null;
  ttl: number | null;
  expires_at: Date | null;
  /** Past its ttl by the database's clock (the clock the payment page refuses it by). */
  expired: boolean;
}

/** Columns to SELECT for `BillRow`. */
export const BILL_COLUMNS = 'id, status, type, amount, currency_in, active, created_at, order_id, ttl, expires_at, (expires_at IS NOT NULL AND expires_at <= now()) AS expired';
