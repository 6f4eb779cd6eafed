import type { Decimal } from 'decimal.js';
import { ValidationError } from '../../errors.js';
import { cardDigits, luhnValid } from '../../lib/card.js';
import { isValidAmount } from '../../lib/money.js';
import { readAmount } from '../../lib/amount-text.js';
import type { CardData } from '../providers/connector.js';

export type PayMethod = 'BANK_CARD' | 'SBP';

/** What the payer form posts, checked: the card lives only in memory, never in a row or a log. */
export interface PayInput {
  method: PayMethod;
  card?: CardData;
  /** Sandbox SBP: what the payer sends (UNDERPAID / OVERPAID). */
  sbpAmount?: Decimal;
  /** What the payer typed in the fields the bill asked for (or its prefilled e-mail). */
  payer: PayerFields;
  /** The payer ticked "save this card" (a bill with save_payment_method; docs/adr/0074-saved-cards-and-recurring-charges.md). */
  saveConsent?: boolean;
}

export interface PayerFields { email: string | null; phone: string | null; name: string | null; comment: string | null }

/** What the bill asks of the payer: `requestFields` are required; `payerEmail` prefills the e-mail. */
export interface PayerAsk {
  requestFields: ReadonlyArray<'email' | 'phone' | 'name' | 'comment'>;
  payerEmail: string | null;
}

/** Field error codes; the page translates them, the JSON answer uses the English text. */
export const PAY_FIELD_MESSAGES = {
  method_required: 'The method field is required.',
  method_invalid: 'The selected method is invalid.',
  method_not_allowed: 'The selected method is not allowed for this bill.',
  method_unavailable: 'The selected method is not available now.',
  card_number_required: 'The card number field is required.',
  card_number_invalid: 'The card number is invalid.',
  card_expiry_required: 'The card expiry field is required.',
  card_expiry_invalid: 'The card expiry must be a date in the form MM/YY.',
  card_expiry_past: 'The card has expired.',
  card_cvc_required: 'The card cvc field is required.',
  card_cvc_invalid: 'The card cvc must be 3 digits.',
  amount_invalid: 'The amount must be a positive number with at most 2 decimals.',
  payer_email_required: 'The payer email field is required.',
  payer_email_invalid: 'The payer email must be a valid email address.',
  payer_phone_required: 'The payer phone field is required.',
  payer_phone_invalid: 'The payer phone must be a phone number of 10 to 15 digits.',
  payer_name_required: 'The payer name field is required.',
  payer_name_invalid: 'The payer name may not be greater than 255 characters.',
  payer_comment_required: 'The payer comment field is required.',
  payer_comment_invalid: 'The payer comment may not be greater than 1000 characters.',
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
export function parsePayInput(raw: Record<string, unknown>, allowed: PayMethod | null, now = new Date(), ask: PayerAsk = NO_ASK, opts: { hostedCard?: boolean } = {}): PayInput {
  const errors: Record<string, PayFieldCode> = {};
  const payer = parsePayer(raw, ask, errors);
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
  if (method === 'BANK_CARD' && opts.hostedCard) {
    // The provider hosts the card form: no card data comes here (card fields are ignored).
  } else if (method === 'BANK_CARD') {
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
      // The payer's form: surrounding spaces dropped (str), then the one amount format.
      const d = readAmount(a);
      if (d === null || !isValidAmount(d)) errors.amount = 'amount_invalid';
      else sbpAmount = d;
    }
  }
  if (Object.keys(errors).length > 0) throw new PayValidationError(errors);
  // Consent is only ever a ticked box: absent, empty or anything else is no consent.
  const consent = str(raw.save_payment_method);
  const saveConsent = method === 'BANK_CARD' && (consent === '1' || consent === 'on' || consent === 'true');
  return { method: method!, card, sbpAmount, payer, ...(saveConsent ? { saveConsent } : {}) };
}

const NO_ASK: PayerAsk = { requestFields: [], payerEmail: null };
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * The payer fields (`payer_email`, `payer_phone`, `payer_name`, `payer_comment`): required
 * when the bill asked for them, checked when sent, ignored otherwise (a bill that asked for
 * nothing stores nothing but its prefilled e-mail).
 */
function parsePayer(raw: Record<string, unknown>, ask: PayerAsk, errors: Record<string, PayFieldCode>): PayerFields {
  const out: PayerFields = { email: null, phone: null, name: null, comment: null };
  const wants = (f: keyof PayerFields) => ask.requestFields.includes(f);
  const take = (f: keyof PayerFields, check: (s: string) => string | null) => {
    const field = `payer_${f}`;
    const v = str(raw[field]);
    if (v === undefined) {
      if (wants(f)) errors[field] = `${field}_required` as PayFieldCode;
      return;
    }
    const ok = v === '\u0000' ? null : check(v);
    if (ok === null) errors[field] = `${field}_invalid` as PayFieldCode;
    else out[f] = ok;
  };
  if (wants('email') || ask.payerEmail !== null) take('email', (s) => (s.length <= 255 && EMAIL.test(s) ? s : null));
  if (wants('phone')) {
    take('phone', (s) => {
      const digits = s.replace(/[\s()+-]/g, '');
      return /^\d{10,15}$/.test(digits) ? `+${digits.length === 10 ? `7${digits}` : digits.replace(/^8(\d{10})$/, '7$1')}` : null;
    });
  }
  if (wants('name')) take('name', (s) => (s.length <= 255 ? s : null));
  if (wants('comment')) take('comment', (s) => (s.length <= 1000 ? s : null));
  // The bill's own e-mail when the payer left the (optional) field empty.
  out.email ??= ask.payerEmail;
  return out;
}
