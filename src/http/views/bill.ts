import { Type } from '@sinclair/typebox';
import { moneyNumber } from '../../lib/money.js';
import { formatDateTime } from '../../lib/time.js';
import { BILL_COLUMNS, type BillRow } from '../../domain/bill/bill.row.js';

export { BILL_COLUMNS, type BillRow };

export interface BillView {
  id: string;
  status: string;
  type: string;
  amount: number;
  currency_in: string;
  created_at: string;
  active: boolean;
  order_id: string | null;
  ttl: number | null;
  expires_at: string | null;
}

/**
 * The wire bill: spec fields plus `active`, `order_id`, `ttl` (as sent at creation) and
 * `expires_at` (DESIGN: responses are a superset).
 */
export function billView(b: BillRow, tz: string): BillView {
  return {
    id: b.id,
    status: b.status,
    type: b.type,
    amount: moneyNumber(b.amount),
    currency_in: b.currency_in,
    created_at: formatDateTime(b.created_at, tz),
    // A bill past its ttl takes no payment, whatever its flag says: the payer sees what the page will do.
    active: b.active && !b.expired,
    order_id: b.order_id,
    ttl: b.ttl,
    expires_at: b.expires_at === null ? null : formatDateTime(b.expires_at, tz),
  };
}

export const BillSchema = Type.Object({
  id: Type.String(),
  status: Type.String({ enum: ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'] }),
  type: Type.String({ enum: ['NORMAL', 'MULTI'] }),
  amount: Type.Number({ description: 'decimal(10,2) as a JSON number (100.05, 35400): clients decode it as a float' }),
  currency_in: Type.String({ enum: ['RUB', 'USD', 'EUR'] }),
  created_at: Type.String({ description: 'Y-m-d H:i:s, service time zone' }),
  active: Type.Boolean({ description: 'Whether the bill takes payments now: false when toggled off or past expires_at' }),
  order_id: Type.Union([Type.String(), Type.Null()], { description: 'As sent at bill/create', examples: ['ord-42'] }),
  ttl: Type.Union([Type.Integer(), Type.Null()], { description: 'Seconds the bill lives, as sent at bill/create; null: no limit', examples: [3600] }),
  expires_at: Type.Union([Type.String(), Type.Null()], { description: 'Y-m-d H:i:s: after it the bill takes no payment; null: never', examples: ['2026-11-23 19:30:00'] }),
}, { examples: [{ id: 'Ab12Cd34Ef', status: 'NEW', type: 'NORMAL', amount: '100.00', currency_in: 'RUB', created_at: '2026-11-23 18:30:00', active: true, order_id: 'ord-42', ttl: 3600, expires_at: '2026-11-23 19:30:00' }] });
