import { Decimal } from 'decimal.js';
import type { ActiveFiscal, FfdVersion, PaymentMode, PaymentSubject } from './fiscal.js';

/**
 * A 54-FZ receipt as the service builds it, before a connector writes it in its provider's
 * format (YooKassa `receipt`, T-Bank `Receipt`). Amounts are RUB Decimals with 2 places: both
 * providers take roubles only. `price` is per unit, `amount` = price x quantity exactly, and the
 * lines add up to the payment's (or refund's) amount exactly (docs/adr/0026-fiscal-receipts.md).
 */
export interface ReceiptLine {
  name: string;
  price: Decimal;
  quantity: Decimal;
  amount: Decimal;
  vatCode: number;
  paymentSubject: PaymentSubject;
  paymentMode: PaymentMode;
}

export interface Receipt {
  /** At least one of them (both providers require an e-mail or a phone). Phone as +7XXXXXXXXXX. */
  customer: { email?: string; phone?: string };
  taxSystemCode: number;
  /**
   * The shop's register format when the receipt was built: with "1.2" every line is sold by the
   * piece, which each connector writes in its provider's word (T-Bank `MeasurementUnit`, YooKassa `measure`).
   */
  ffdVersion: FfdVersion;
  lines: ReceiptLine[];
}

/** What a payment's receipt is built from (the bill, the shop's settings, what the payer paid). */
export interface ReceiptSource {
  fiscal: ActiveFiscal;
  billName: string | null;
  billDescription: string | null;
  /** bill/create `items`, in the bill's currency. */
  items: ReadonlyArray<{ name: string; price: string; quantity: string }>;
  /** What the payer paid, in RUB (payments.amount). */
  totalRub: Decimal;
  /** The fee the payer paid on top of the amount, in the bill's currency (0 when the merchant pays it). */
  payerCommission: Decimal;
  /** RUB per unit of the bill's currency (1 for RUB). */
  rate: Decimal;
  /** The bill is in RUB: its items are roubles already. */
  rub: boolean;
  email: string | null;
  phone: string | null;
}

/** Both providers cap a line's name at 128 characters (YooKassa `description`, T-Bank `Name`). */
const NAME_MAX = 128;
/** At most this many item lines (bill/create takes 100); more becomes one line: a receipt's item count is bounded at the providers. */
const MAX_LINES = 100;
/** The name of the payer-paid fee's line (the payer sees it on the receipt). */
export const COMMISSION_LINE_NAME = 'Комиссия за оплату';

const round2 = (d: Decimal) => d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
const name = (s: string) => s.trim().slice(0, NAME_MAX);

/** The line of a bill without items: its name, or description, or "Payment". */
export function billLineName(s: Pick<ReceiptSource, 'billName' | 'billDescription'>): string {
  return name(s.billName?.trim() || s.billDescription?.trim() || 'Payment');
}

function line(f: ActiveFiscal, n: string, price: Decimal, quantity: Decimal, subject: PaymentSubject = f.paymentSubject): ReceiptLine {
  return { name: name(n), price, quantity, amount: price.mul(quantity), vatCode: f.vatCode, paymentSubject: subject, paymentMode: f.paymentMode };
}

/** The sum of a receipt's lines. */
export function receiptTotal(r: Receipt): Decimal {
  return r.lines.reduce((s, l) => s.add(l.amount), new Decimal(0));
}

/**
 * The receipt of a payment; null when no e-mail or phone is known (bill/create refuses such a
 * bill for a fiscalized shop, and the page asks for an e-mail). Lines:
 * - the bill's `items` as sent when the bill is in RUB and they add up to its amount;
 * - otherwise (a USD/EUR bill, or items that do not add up) the items scaled to the RUB paid for
 *   the goods, each rounded to kopecks and the rounding left on the last line; a line whose
 *   scaled amount does not divide by its quantity into kopecks becomes quantity 1 at that amount;
 * - without items, one line: the bill's name (or description, or "Payment"), quantity 1;
 * - plus, when the payer paid the fee on top, a line "Комиссия за оплату" (subject `service`)
 *   of that fee in RUB. The goods are what is left of the RUB paid after it, so the lines always
 *   add up to the payment's amount exactly.
 */
export function paymentReceipt(s: ReceiptSource): Receipt | null {
  const customer = contactOf(s.email, s.phone);
  if (!customer) return null;
  const f = s.fiscal;
  const feeRub = s.payerCommission.gt(0) ? Decimal.min(round2(s.payerCommission.mul(s.rate)), s.totalRub) : new Decimal(0);
  const goodsRub = s.totalRub.sub(feeRub);
  const lines = goodsRub.gt(0) ? goodsLines(s, goodsRub) : [];
  if (feeRub.gt(0)) lines.push(line(f, COMMISSION_LINE_NAME, feeRub, new Decimal(1), 'service'));
  return { customer, taxSystemCode: f.taxSystemCode, ffdVersion: f.ffdVersion, lines };
}

function goodsLines(s: ReceiptSource, goodsRub: Decimal): ReceiptLine[] {
  const f = s.fiscal;
  const single = () => [line(f, billLineName(s), goodsRub, new Decimal(1))];
  const items = s.items.map((i) => ({ name: i.name, price: new Decimal(i.price), quantity: new Decimal(i.quantity) }))
    .filter((i) => i.price.gt(0));
  if (items.length === 0 || items.length >= MAX_LINES) return single();
  const totals = items.map((i) => i.price.mul(i.quantity));
  const itemsTotal = totals.reduce((a, b) => a.add(b), new Decimal(0));
  // The items as the merchant sent them, when they are roubles in kopecks that add up.
  if (s.rub && itemsTotal.eq(goodsRub) && totals.every((t) => t.decimalPlaces() <= 2)) {
    return items.map((i) => line(f, i.name, i.price, i.quantity));
  }
  // Scaled to the roubles paid for the goods: each share rounded down to kopecks, the rest on the last line.
  const shares = totals.map((t) => goodsRub.mul(t).div(itemsTotal).toDecimalPlaces(2, Decimal.ROUND_DOWN));
  shares[shares.length - 1] = goodsRub.sub(shares.slice(0, -1).reduce((a, b) => a.add(b), new Decimal(0)));
  const out: ReceiptLine[] = [];
  items.forEach((i, k) => {
    const amount = shares[k]!;
    if (amount.lte(0)) return;
    const unit = amount.div(i.quantity);
    out.push(unit.decimalPlaces() <= 2 ? line(f, i.name, unit, i.quantity) : line(f, i.name, amount, new Decimal(1)));
  });
  return out.length > 0 ? out : single();
}

/**
 * The receipt of a refund of `refundRub` roubles: the payment's receipt when the refund gives back
 * everything it took, else one line of the refunded amount, quantity 1, named as the payment's
 * only line (or the bill's line name when it had several). Null without a payment receipt.
 */
export function refundReceipt(payment: Receipt | null, refundRub: Decimal, fallbackName: string): Receipt | null {
  if (!payment || payment.lines.length === 0) return null;
  if (receiptTotal(payment).eq(refundRub)) return payment;
  const first = payment.lines[0]!;
  const n = payment.lines.length === 1 ? first.name : fallbackName;
  return {
    customer: payment.customer, taxSystemCode: payment.taxSystemCode, ffdVersion: payment.ffdVersion,
    lines: [{ ...first, name: n, price: refundRub, quantity: new Decimal(1), amount: refundRub }],
  };
}

function contactOf(email: string | null, phone: string | null): Receipt['customer'] | null {
  const c: Receipt['customer'] = {};
  if (email) c.email = email;
  if (phone) c.phone = phone;
  return c.email || c.phone ? c : null;
}
