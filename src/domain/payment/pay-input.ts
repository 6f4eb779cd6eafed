import { Decimal } from 'decimal.js';
import { ValidationError } from '../../http/errors.js';
import { cardDigits, luhnValid } from '../../lib/card.js';
import { isValidAmount } from '../../lib/money.js';
import type { CardData } from '../providers/connector.js';

export type PayMethod = 'BANK_CARD' | 'SBP';

/** What the payer form posts, checked: the card lives only in memory, never in a row or a log. */
export interface PayInput {
  method: PayMethod;
  card?: CardData;
  /** Sandbox SBP: what the payer sends (UNDERPAID / OVERPAID). */
  sbpAmount?: Decimal;
}

/** Field error codes; the page translates them, the JSON answer uses the English text. */
export const PAY_FIELD_MESSAGES = {
  method_required: 'The method field is required.',
  method_invalid: 'The selected method is invalid.',
  method_not_allowed: 'The selected method is not allowed for this bill.',
  card_number_required: 'The card number field is required.',
  card_number_invalid: 'The card number is invalid.',
  card_expiry_required: 'The card expiry field is required.',
  card_expiry_invalid: 'The card expiry must be a date in the form MM/YY.',
  card_expiry_past: 'The card has expired.',
  card_cvc_required: 'The card cvc field is required.',
  card_cvc_invalid: 'The card cvc must be 3 digits.',
  amount_invalid: 'The amount must be a positive number with at most 2 decimals.',
} as const;

export type PayFieldCode = keyof typeof PAY_FIELD_MESSAGES;

/** A ValidationError that also carries the codes (for localized pages). */
export class PayValidationError extends ValidationError {
  constructor(public readonly codes: Record<string, PayFieldCode>) {
    super(Object.fromEntries(Object.entries(codes).map(([f, c]) => [f, [PAY_FIELD_MESSAGES[c]]])));
  }
}

const str = (v: unknown): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v.trim() === '' ? undefined : v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return '\u0000'; // arrays, objects, booleans: present but never valid
};

/**
 * Parses the payer form against the bill: `allowed` is the bill's fixed method (null: both).
 * Every bad field is reported at once (422); `now` decides whether an expiry is in the past.
 */
export function parsePayInput(raw: Record<string, unknown>, allowed: PayMethod | null, now = new Date()): PayInput {
  const errors: Record<string, PayFieldCode> = {};
  const m = str(raw.method)?.toUpperCase();
  let method: PayMethod | undefined;
  if (m === undefined) {
    if (allowed) method = allowed;
    else errors.method = 'method_required';
  } else if (m === 'BANK_CARD' || m === 'SBP') {
    if (allowed && m !== allowed) errors.method = 'method_not_allowed';
    else method = m;
  } else {
    errors.method = 'method_invalid';
  }

  let card: CardData | undefined;
  let sbpAmount: Decimal | undefined;
  if (method === 'BANK_CARD') {
    const n = str(raw.card_number);
    const digits = n === undefined ? undefined : cardDigits(n);
    if (digits === undefined) errors.card_number = 'card_number_required';
    else if (!luhnValid(digits)) errors.card_number = 'card_number_invalid';

    const e = str(raw.card_expiry);
    let expMonth = 0;
    let expYear = 0;
    if (e === undefined) errors.card_expiry = 'card_expiry_required';
    else {
      const x = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(e) ?? /^(\d{2})(\d{2})$/.exec(e);
      expMonth = x ? Number(x[1]) : 0;
      expYear = x ? (x[2]!.length === 2 ? 2000 + Number(x[2]) : Number(x[2])) : 0;
      if (!x || expMonth < 1 || expMonth > 12 || expYear > now.getUTCFullYear() + 25) errors.card_expiry = 'card_expiry_invalid';
      // A card is valid through the last day of its expiry month.
      else if (expYear * 12 + expMonth < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1) errors.card_expiry = 'card_expiry_past';
    }

    const cvc = str(raw.card_cvc);
    if (cvc === undefined) errors.card_cvc = 'card_cvc_required';
    else if (!/^\d{3}$/.test(cvc)) errors.card_cvc = 'card_cvc_invalid';

    if (Object.keys(errors).length === 0) card = { number: digits!, expMonth, expYear, cvc: cvc! };
  } else if (method === 'SBP') {
    const a = str(raw.amount);
    if (a !== undefined) {
      const ok = /^\d+(\.\d+)?$/.test(a) && isValidAmount(new Decimal(a));
      if (!ok) errors.amount = 'amount_invalid';
      else sbpAmount = new Decimal(a);
    }
  }
  if (Object.keys(errors).length > 0) throw new PayValidationError(errors);
  return { method: method!, card, sbpAmount };
}
