import type { Queryable } from '../../db/client.js';
import { randomId } from '../../lib/ids.js';
import { runPaymentById } from '../payment/payment-by-id.js';
import type { RegisterReport } from '../providers/connector.js';

/** The attention item of a receipt the provider's cash register did not register. */
export const RECEIPT_FAILED = 'receipt_failed';

/**
 * A register's failure to register a receipt (T-Bank's `RECEIPT` notification with a non-zero
 * ErrorCode), put before an operator: the law expects a correction receipt, which only a person
 * can issue. One attention item of kind `receipt_failed` per payment or refund, naming it, with
 * the register's code and message; a later failure of the same object is added to what it heard.
 * The refund is the payment's refund of that amount (the latest one not failed); when none is
 * found the item names the payment. Returns the object named, or null when the payment is not ours.
 */
export async function recordReceiptFailure(
  c: Queryable, x: { connector: string; paymentId: string; ref: string; report: RegisterReport },
): Promise<{ objectType: 'payment' | 'refund'; objectId: string } | null> {
  const p = (await runPaymentById<{ merchant_id: string }>(c, x.paymentId, { text: `SELECT merchant_id FROM payments WHERE id = $1`, values: [x.paymentId] })).rows[0];
  if (!p) return null;
  let target: { objectType: 'payment' | 'refund'; objectId: string } = { objectType: 'payment', objectId: x.paymentId };
  if (x.report.of === 'refund' && x.report.amount) {
    const r = await c.query<{ id: string }>(
      `SELECT id FROM refunds WHERE payment_id = $1 AND amount_rub = $2 AND status <> 'FAIL' ORDER BY created_at DESC, id DESC LIMIT 1`,
      [x.paymentId, x.report.amount.toFixed(2)]);
    if (r.rows[0]) target = { objectType: 'refund', objectId: r.rows[0].id };
  }
  const heard = {
    register_error_code: x.report.code, register_message: x.report.message, receipt_of: x.report.of,
    amount: x.report.amount?.toFixed(2) ?? null, payment_id: x.paymentId,
  };
  const what = target.objectType === 'refund' ? 'refund receipt' : 'payment receipt';
  const reason = `The cash register did not register the ${what} (error ${x.report.code}${x.report.message ? `: ${x.report.message}` : ''}); a correction receipt is due.`;
  await c.query(
    `INSERT INTO attention_items (id, object_type, object_id, merchant_id, connector, provider_ref, kind, reason, last_heard)
     VALUES ($1, $2, $3, $4, $5, $6, '${RECEIPT_FAILED}', $7, $8::jsonb)
     ON CONFLICT ("object_type", "object_id", "kind") DO UPDATE
        SET last_heard = attention_items.last_heard || jsonb_build_object('later', EXCLUDED.last_heard), reason = EXCLUDED.reason`,
    [`att_${randomId(16)}`, target.objectType, target.objectId, p.merchant_id, x.connector, x.ref, reason, JSON.stringify(heard)]);
  return target;
}
