import { Type } from '@sinclair/typebox';
import type { ChargebackRecord } from '../../domain/chargeback/chargeback.repository.js';
import { money2 } from '../../lib/money.js';
import { formatDateTime } from '../../lib/time.js';

/** A chargeback on the wire (payment/status `chargeback=1`, operator API). */
export function chargebackView(c: ChargebackRecord, tz: string) {
  return {
    id: c.id,
    payment_id: c.paymentId,
    amount: money2(c.amount),
    currency: c.currency,
    reason: c.reason,
    created_at: formatDateTime(c.createdAt, tz),
  };
}

export const ChargebackSchema = Type.Object({
  id: Type.String(),
  payment_id: Type.String(),
  amount: Type.String({ description: "2 decimals, in the payment's account currency" }),
  currency: Type.String({ enum: ['RUB', 'USD', 'EUR'] }),
  reason: Type.String(),
  created_at: Type.String({ description: 'Y-m-d H:i:s, service time zone' }),
}, { examples: [{ id: 'k3Jd8sLq0PzX1vBn', payment_id: '1Ja97ZcnUXyfJn9l', amount: '100.00', currency: 'RUB', reason: 'fraud: card not present', created_at: '2026-11-23 18:42:11' }] });
