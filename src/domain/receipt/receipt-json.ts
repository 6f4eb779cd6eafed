import { Decimal } from 'decimal.js';
import { FFD_VERSIONS, type FfdVersion, type PaymentMode, type PaymentSubject } from './fiscal.js';
import type { Receipt } from './receipt.js';

/**
 * A receipt as an operation keeps it (payments.receipt, payments.capture_receipt, refunds.receipt):
 * built once when the operation is created and read back for every send, so a repeat's body is
 * the first one's byte for byte whatever the shop's settings say by then (docs/adr/0087).
 * Amounts are Decimal strings, never floats. `whole`: a refund that gives back everything its
 * payment took, with nothing refunded before it (T-Bank then reverses the payment's own receipt
 * and its Cancel carries none).
 */
export interface StoredReceipt { receipt: Receipt; whole: boolean }

interface LineJson { name: string; price: string; quantity: string; amount: string; vat_code: number; payment_subject: string; payment_mode: string }
interface ReceiptJson {
  customer: { email?: string; phone?: string }; tax_system_code: number; ffd_version: string; lines: LineJson[]; whole?: boolean;
}

export function receiptToJson(r: Receipt, whole = false): string {
  const j: ReceiptJson = {
    customer: r.customer, tax_system_code: r.taxSystemCode, ffd_version: r.ffdVersion,
    lines: r.lines.map((l) => ({
      name: l.name, price: l.price.toString(), quantity: l.quantity.toString(), amount: l.amount.toString(),
      vat_code: l.vatCode, payment_subject: l.paymentSubject, payment_mode: l.paymentMode,
    })),
    ...(whole ? { whole: true } : {}),
  };
  return JSON.stringify(j);
}

/** The stored receipt (a jsonb column as pg returns it); null when none was kept. */
export function receiptFromJson(raw: unknown): StoredReceipt | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const j = raw as ReceiptJson;
  return {
    whole: j.whole === true,
    receipt: {
      customer: { ...(j.customer?.email ? { email: j.customer.email } : {}), ...(j.customer?.phone ? { phone: j.customer.phone } : {}) },
      taxSystemCode: j.tax_system_code,
      ffdVersion: (FFD_VERSIONS as readonly string[]).includes(j.ffd_version) ? j.ffd_version as FfdVersion : '1.05',
      lines: (j.lines ?? []).map((l) => ({
        name: l.name, price: new Decimal(l.price), quantity: new Decimal(l.quantity), amount: new Decimal(l.amount),
        vatCode: l.vat_code, paymentSubject: l.payment_subject as PaymentSubject, paymentMode: l.payment_mode as PaymentMode,
      })),
    },
  };
}
