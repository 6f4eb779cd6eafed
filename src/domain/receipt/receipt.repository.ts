import { Decimal } from 'decimal.js';
import type { Queryable } from '../../db/client.js';
import { runPaymentById } from '../payment/payment-by-id.js';
import { activeFiscal, fiscalOf } from './fiscal.js';
import { billLineName, paymentReceipt, refundReceipt, type Receipt, type ReceiptSource } from './receipt.js';

interface SourceRow {
  amount: string; commission: string; rate: string | null; payer_email: string | null; payer_phone: string | null;
  name: string | null; description: string | null; items: Array<{ name: string; price: string; quantity: string }> | null;
  currency_in: string; payer_pays_commission: boolean; fiscalization: unknown;
}

/** What a payment's receipt is built from, read from the payment, its bill and its shop; null when the shop does not fiscalize now. */
async function sourceOf(c: Queryable, paymentId: string): Promise<ReceiptSource | null> {
  const r = await runPaymentById<SourceRow>(c, paymentId, {
    text: `SELECT p.amount::text, p.commission::text, p.rate::text, p.payer_email, p.payer_phone, b.name, b.description, b.items,
                  b.currency_in::text, b.payer_pays_commission, s.fiscalization
             FROM payments p JOIN bills b ON b.id = p.bill_id JOIN shops s ON s.id = b.shop_id
            WHERE p.id = $1`,
    values: [paymentId], column: 'p.created_at',
  });
  const x = r.rows[0];
  const fiscal = x ? activeFiscal(fiscalOf(x.fiscalization)) : null;
  if (!x || !fiscal) return null;
  return {
    fiscal, billName: x.name, billDescription: x.description, items: x.items ?? [], totalRub: new Decimal(x.amount),
    payerCommission: x.payer_pays_commission ? new Decimal(x.commission) : new Decimal(0),
    rate: x.rate === null ? new Decimal(1) : new Decimal(x.rate), rub: x.currency_in === 'RUB', email: x.payer_email, phone: x.payer_phone,
  };
}

/**
 * The receipt a refund of `refundRub` roubles of a payment carries, rebuilt from what the payment,
 * its bill and its shop store (the same function built the payment's, so a full refund repeats
 * it line by line). Null when the shop does not fiscalize now (the providers' requirement is the
 * shop's setting at the time of the call) or no e-mail or phone is known.
 */
export async function refundReceiptOf(c: Queryable, paymentId: string, refundRub: Decimal): Promise<Receipt | null> {
  const source = await sourceOf(c, paymentId);
  return source ? refundReceipt(paymentReceipt(source), refundRub, billLineName(source)) : null;
}

/**
 * The receipt a two-stage payment's capture of `capturedRub` roubles carries (docs/adr/0075):
 * the payment's own receipt when all of it is captured; a part captured is the same bill's
 * lines scaled to that part (the payer's fee with them, in proportion), so the lines add up to
 * the captured amount exactly. Null when the shop does not fiscalize now or no contact is known.
 */
export async function captureReceiptOf(c: Queryable, paymentId: string, capturedRub: Decimal): Promise<Receipt | null> {
  const source = await sourceOf(c, paymentId);
  if (!source) return null;
  if (capturedRub.eq(source.totalRub) || !source.totalRub.gt(0)) return paymentReceipt(source);
  const share = capturedRub.div(source.totalRub);
  return paymentReceipt({ ...source, totalRub: capturedRub, payerCommission: source.payerCommission.mul(share) });
}
