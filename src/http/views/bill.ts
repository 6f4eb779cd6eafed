import { Type } from '@sinclair/typebox';
import { moneyNumber } from '../../lib/money.js';
import { formatDateTime } from '../../lib/time.js';

/** A bill row as the views read it (snake_case columns, NUMERIC as string). */
export interface BillRow {
  id: string;
  status: string;
  type: string;
  amount: string;
  currency_in: string;
  active: boolean;
  created_at: Date;
}

/** Columns to SELECT for `BillRow`. */
export const BILL_COLUMNS = 'id, status, type, amount, currency_in, active, created_at';

export interface BillView {
  id: string;
  status: string;
  type: string;
  amount: number;
  currency_in: string;
  created_at: string;
  active: boolean;
}

/** The wire bill: spec fields plus `active` (DESIGN: responses are a superset). */
export function billView(b: BillRow, tz: string): BillView {
  return {
    id: b.id,
    status: b.status,
    type: b.type,
    amount: moneyNumber(b.amount),
    currency_in: b.currency_in,
    created_at: formatDateTime(b.created_at, tz),
    active: b.active,
  };
}

export const BillSchema = Type.Object({
  id: Type.String(),
  status: Type.String({ enum: ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'] }),
  type: Type.String({ enum: ['NORMAL', 'MULTI'] }),
  amount: Type.Number({ description: 'decimal(10,2) as a JSON number (100.05, 35400): clients decode it as a float' }),
  currency_in: Type.String({ enum: ['RUB', 'USD', 'EUR'] }),
  created_at: Type.String({ description: 'Y-m-d H:i:s, service time zone' }),
  active: Type.Boolean(),
});
