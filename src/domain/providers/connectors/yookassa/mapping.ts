import { Decimal } from 'decimal.js';
import { ConnectorRefusedError, PAYMENT_METHOD_REVOKED, type OperationOutcome, type PaymentOutcome, type SavedCard } from '../../connector.js';
import type { ProviderAnswer } from '../../provider-http.js';
import type { Receipt } from '../../../receipt/receipt.js';

export type Money = { value: string; currency: string };
export interface YkObject {
  id: string;
  status: string;
  amount?: Money;
  confirmation?: { type?: string; confirmation_url?: string; confirmation_data?: string };
  cancellation_details?: { party?: string; reason?: string };
  metadata?: Record<string, unknown>;
  test?: boolean;
  /** `saved` and `id` when the method was saved for autopayments; the card as first6/last4 and expiry. */
  payment_method?: { id?: string; saved?: boolean; card?: { first6?: string; last4?: string; expiry_month?: string; expiry_year?: string } };
}
export interface YkError { type: 'error'; code?: string; description?: string; parameter?: string }

/**
 * A payment object as ours, for every status but `waiting_for_capture` (the client captures it).
 * `pending` with a confirmation: the payer's action (YooKassa's redirect page, or an SBP QR).
 */
export function paymentOutcomeOf(p: YkObject): PaymentOutcome {
  switch (p.status) {
    case 'succeeded': {
      const saved = savedOf(p);
      return { status: 'paid', amountReceived: new Decimal(p.amount!.value), ref: p.id, ...(saved ? { saved } : {}) };
    }
    case 'canceled': {
      const { party = 'yoo_money', reason = 'canceled' } = p.cancellation_details ?? {};
      // "permission_revoked": the payer withdrew the permission to charge the saved method
      // (yookassa.ru/developers/payment-acceptance/after-the-payment/declined-payments): it is
      // revoked here too (docs/adr/0092-saved-methods-follow-the-payer.md).
      const code = reason === 'permission_revoked' ? PAYMENT_METHOD_REVOKED : reason;
      return { status: 'declined', code, message: `YooKassa: canceled by ${party} (${reason})`, ref: p.id };
    }
    default: {
      const c = p.confirmation;
      if (c?.type === 'redirect' && c.confirmation_url) return { status: 'action', action: { type: 'redirect', url: c.confirmation_url }, ref: p.id };
      if (c?.type === 'qr' && c.confirmation_data) {
        return { status: 'action', action: { type: 'sbp_qr', payload: c.confirmation_data, links: [{ name: 'SBP', url: c.confirmation_data }] }, ref: p.id };
      }
      return { status: 'pending', ref: p.id };
    }
  }
}

/**
 * The saved method of a succeeded payment (`payment_method.saved`: true, its `id`), the card as
 * first 6 / last 4 and MM/YY; null when YooKassa saved nothing.
 */
export function savedOf(p: YkObject): SavedCard | null {
  const m = p.payment_method;
  if (!m || m.saved !== true || typeof m.id !== 'string' || m.id === '') return null;
  const c = m.card;
  const mask = c?.first6 && c.last4 && /^\d{6}$/.test(c.first6) && /^\d{4}$/.test(c.last4) ? `${c.first6}******${c.last4}` : null;
  const expiry = c?.expiry_month && c.expiry_year && /^\d{1,2}$/.test(c.expiry_month) && /^\d{4}$/.test(c.expiry_year)
    ? `${c.expiry_month.padStart(2, '0')}/${c.expiry_year.slice(-2)}` : null;
  return { providerId: m.id, mask, expiry };
}

/** `{value: "10.00", currency}` from the Decimal: a string with two decimals, never a float. */
export function money(d: Decimal, currency = 'RUB'): Money {
  if (d.decimalPlaces() > 2 || d.lte(0)) throw new ConnectorRefusedError('yookassa:invalid_amount', `yookassa: ${d.toString()} is not an amount in kopecks`);
  return { value: d.toFixed(2), currency };
}

/**
 * The receipt as YooKassa takes it on POST /payments and POST /refunds
 * (yookassa.ru/developers/payment-acceptance/receipts/54fz/yoomoney/basics and .../parameters-values;
 * the official SDKs' Receipt and ReceiptItem): `customer` {email, phone (ITU-T E.164 digits, no
 * "+")}, `items` [{description (<= 128), quantity (a number), amount {value, currency} = the PRICE
 * OF ONE UNIT, vat_code, payment_subject, payment_mode}], `tax_system_code`. The receipt's total is
 * the sum of amount x quantity, which must equal the payment's (or refund's) amount. `vat_code`
 * is YooKassa's own number, 1..12 (docs/connectors/fiscal.md). With an FFD 1.2 register every
 * item carries `measure` ("piece": .../54fz/parameters-values, "Единица измерения", required for
 * FFD 1.2). `ownReceipts` ("Чеки от ЮKassa"): the receipt reaches the payer by e-mail only ("пока
 * есть только один способ доставки чека пользователю — на электронную почту. Отправка чека в смс
 * недоступна": .../receipts/54fz/yoomoney/basics), so the phone is not sent and a receipt without
 * an e-mail is refused before anything moves.
 */
export function ykReceipt(r: Receipt, ownReceipts = false): Record<string, unknown> {
  const customer: Record<string, string> = {};
  if (r.customer.email) customer.email = r.customer.email;
  if (ownReceipts && !customer.email) {
    throw new ConnectorRefusedError('yookassa:receipt_email_required', 'yookassa: receipts by YooKassa go by e-mail only, and the payer gave none');
  }
  if (r.customer.phone && !ownReceipts) customer.phone = r.customer.phone.replace(/^\+/, '');
  return {
    customer,
    items: r.lines.map((l) => ({
      description: l.name, quantity: l.quantity.toNumber(), amount: money(l.price), vat_code: l.vatCode,
      payment_subject: l.paymentSubject, payment_mode: l.paymentMode, ...(r.ffdVersion === '1.2' ? { measure: 'piece' } : {}),
    })),
    tax_system_code: r.taxSystemCode,
  };
}

/** A refund or payout object as ours. */
export function operationOutcome(o: YkObject): OperationOutcome {
  if (o.status === 'succeeded') return { status: 'succeeded', ref: o.id };
  if (o.status === 'canceled') {
    const { party = 'yoo_money', reason = 'canceled' } = o.cancellation_details ?? {};
    return { status: 'failed', code: reason, message: `YooKassa: canceled by ${party} (${reason})`, ref: o.id };
  }
  return { status: 'pending', ref: o.id };
}

/** A non-200 answer as a refusal carrying YooKassa's error code (`yookassa:invalid_request`). */
export function refusal(a: ProviderAnswer): ConnectorRefusedError {
  const e = a.body as YkError | null;
  const code = e && e.type === 'error' && e.code ? e.code : `http_${a.status}`;
  const detail = e?.description ? `: ${e.description}${e.parameter ? ` (${e.parameter})` : ''}` : '';
  return new ConnectorRefusedError(`yookassa:${code}`, `yookassa: HTTP ${a.status} ${code}${detail}`);
}

/**
 * YooKassa keeps an Idempotence-Key 24 hours (yookassa.ru/developers/using-api/basics,
 * "Идемпотентность"): a repeat after that is a new request. A creation first sent longer ago
 * than the life less a margin (so a repeat in flight cannot cross it) is never sent again.
 */
export const IDEMPOTENCE_KEY_LIFE_MS = 24 * 3_600_000;
export const IDEMPOTENCE_KEY_MARGIN_MS = 15 * 60_000;

export function keyExpired(firstSentAt: Date | null | undefined, now = Date.now()): boolean {
  return !!firstSentAt && now - firstSentAt.getTime() >= IDEMPOTENCE_KEY_LIFE_MS - IDEMPOTENCE_KEY_MARGIN_MS;
}

/**
 * An answer that leaves the result open after the repeats (docs/connectors/yookassa.md "Errors"),
 * as the reason of an `unknown` outcome: 202 (still processing), 429 (not taken yet), a 5xx
 * ("result unknown"). Null for an answer that decides.
 */
export function notDone(a: ProviderAnswer): string | null {
  if (a.status === 202) return 'yookassa: HTTP 202, still processing after the repeats (asked again with the same key)';
  if (a.status === 429) return 'yookassa: HTTP 429 too_many_requests after the repeats (asked again with the same key)';
  if (a.status >= 500) return `yookassa: HTTP ${a.status}, result unknown (asked again with the same key)`;
  return null;
}
