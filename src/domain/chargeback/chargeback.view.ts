import { Type } from '@sinclair/typebox';
import type { ChargebackRecord } from './chargeback.repository.js';
import { money2, moneyNumber } from '../../lib/money.js';
import { formatDateTime } from '../../lib/time.js';

/**
 * A chargeback on the wire: in payment/status (`chargeback=1`) its amount is a JSON number like
 * every merchant API amount (docs/adr/0001-money-as-decimal-and-wire-amounts.md); the operator API keeps its
 * decimal strings (`adminChargebackView`).
 */
export function chargebackView(c: ChargebackRecord, tz: string) {
  return { ...adminChargebackView(c, tz), amount: moneyNumber(c.amount) };
}

/** A chargeback in the operator API: amounts as 2-decimal strings, as its other money. */
export function adminChargebackView(c: ChargebackRecord, tz: string) {
  return {
    id: c.id,
    payment_id: c.paymentId,
    amount: money2(c.amount),
    currency: c.currency,
    reason: c.reason,
    created_at: formatDateTime(c.createdAt, tz),
  };
}

const chargebackFields = {
  id: Type.String(),
  payment_id: Type.String(),
  currency: Type.String({ enum: ['RUB', 'USD', 'EUR'] }),
  reason: Type.String(),
  created_at: Type.String({ description: 'Y-m-d H:i:s, service time zone' }),
};
const example = { id: 'k3Jd8sLq0PzX1vBn', payment_id: '1Ja97ZcnUXyfJn9l', currency: 'RUB', reason: 'fraud: card not present', created_at: '2026-11-23 18:42:11' };

export const ChargebackSchema = Type.Object({
  ...chargebackFields,
  amount: Type.Number({ description: "In the payment's account currency; a JSON number" }),
}, { examples: [{ ...example, amount: 100 }] });

export const AdminChargebackSchema = Type.Object({
  ...chargebackFields,
  amount: Type.String({ description: "2 decimals, in the payment's account currency" }),
}, { examples: [{ ...example, amount: '100.00' }] });
