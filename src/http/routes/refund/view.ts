import { Type } from '@sinclair/typebox';
import type { RefundRecord } from '../../../domain/refund/refund.service.js';
import { moneyNumber } from '../../../lib/money.js';
import { formatDateTime } from '../../../lib/time.js';

/** The spec's Refund fields. */
export const RefundSchema = Type.Object({
  id: Type.String(),
  status: Type.String({ enum: ['NEW', 'PROCESS', 'SUCCESS', 'FAIL'] }),
  amount: Type.Number({ description: 'Refund amount in `currency`; a JSON number' }),
  currency: Type.String({ enum: ['RUB', 'USD', 'EUR'] }),
  entity_type: Type.Literal('payment'),
  entity_id: Type.String({ description: 'ID of the refunded payment' }),
  created_at: Type.String({ description: 'Y-m-d H:i:s in the service time zone' }),
  success: Type.Boolean(),
}, { examples: [{ id: 'R7kq2LmZ9xPa3sDf', status: 'SUCCESS', amount: '50.50', currency: 'RUB', entity_type: 'payment', entity_id: '1Ja97ZcnUXyfJn9l', created_at: '2026-11-23 18:45:02', success: true }] });

export function refundView(r: RefundRecord, tz: string) {
  return {
    id: r.id,
    status: r.status,
    amount: moneyNumber(r.amount),
    currency: r.currency,
    entity_type: 'payment' as const,
    entity_id: r.paymentId,
    created_at: formatDateTime(r.createdAt, tz),
    success: true,
  };
}

/** Statuses of the spec's error keys for the refund endpoints (part 4). */
