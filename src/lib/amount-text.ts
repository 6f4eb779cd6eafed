import { Decimal } from 'decimal.js';
import type { Lang } from './i18n.js';

/**
 * The one reader of numbers that come from outside (docs/adr/0077-one-amount-format.md): merchant
 * API, operator API and CLI, the payer's pages, the cabinet and the console. The wire format
 * is digits with an optional dot and at most `places` decimals (`^\d{1,8}(\.\d{1,2})?$` for an
 * amount once its range rule has run); a JSON number is read by its digits, as the body parser
 * keeps the text of a number that is not in its shortest form (json-number-text.ts). An
 * exponent (`1e3`), a sign (`+10`, `-5` where no debit is meant), a bare dot (`10.`, `.5`) or
 * surrounding spaces are not a mistyped amount to be guessed at: refused, so they never become
 * a real charge.
 */
export interface NumberFormat {
  /** Most decimal places; more is a format error, never rounded. */
  places: number;
  /** A leading '-' belongs to the format (balance adjustments debit with it). */
  signed?: boolean;
}

/** Bill, payment, payout, refund and chargeback amounts, fixed fees: kopecks. */
export const AMOUNT: NumberFormat = { places: 2 };

/**
 * Integer digits the format reads at most. Wider than any column (12 digits for limits and
 * rates), so a too-large value still meets its endpoint's range rule and key (`100000000` on
 * bill/create stays 403 api:error.invalid_amount), while a text of thousands of digits is cut
 * before decimal.js sees it.
 */
const MAX_INT_DIGITS = 15;

const patterns = new Map<string, RegExp>();
function patternOf(f: NumberFormat): RegExp {
  const key = `${f.signed ? '-' : ''}${f.places}`;
  let re = patterns.get(key);
  if (!re) {
    const frac = f.places > 0 ? `(?:\\.\\d{1,${f.places}})?` : '';
    re = new RegExp(`^${f.signed ? '-?' : ''}\\d{1,${MAX_INT_DIGITS}}${frac}$`);
    patterns.set(key, re);
  }
  return re;
}

/** The format in words, for a field's 422: "digits with an optional dot and at most 2 decimals (150.50)". */
export function formatWords(f: NumberFormat = AMOUNT): string {
  const sign = f.signed ? 'an optional leading minus, then ' : '';
  const frac = f.places > 0 ? ` with an optional dot and at most ${f.places} decimal${f.places === 1 ? '' : 's'}` : '';
  const example = f.places > 0 ? `150.${'50'.padEnd(f.places, '0').slice(0, f.places)}` : '150';
  return `${sign}digits${frac} (${example}), no exponent, no spaces${f.signed ? '' : ', no sign'}`;
}

/**
 * A number in the wire format as a Decimal, or null. A string is read as it is (no trimming:
 * `" 10"` is refused); a JS number (a JSON number already in its shortest form) by its digits,
 * so `1e21` (written `1e+21`) is refused too.
 */
export function readNumber(raw: unknown, f: NumberFormat = AMOUNT): Decimal | null {
  let text: string;
  if (typeof raw === 'string') text = raw;
  else if (typeof raw === 'number' && Number.isFinite(raw)) text = String(raw);
  else return null;
  if (!patternOf(f).test(text)) return null;
  return new Decimal(text);
}

/** An amount in the wire format (2 decimals, no sign), or null; its range rule is the caller's. */
export const readAmount = (raw: unknown): Decimal | null => readNumber(raw, AMOUNT);

const SPACES = /[\u0020\u00a0\u202f\u2009]/g;

/**
 * An amount typed by a person (cabinet, console, the payer's pages) as the wire text: "1 500,00",
 * "1 500.00", "1500,5" (and "1,500.00" in English) become "1500.00", "1500.5"; surrounding
 * spaces (a pasted value) are dropped. Group marks count only in groups of three digits, so
 * "1 0" or "1,0,0" stay as typed. A lone comma is the decimal mark in Russian and a thousands
 * mark in English ("1,500"). No sign, no exponent: anything else is returned as typed
 * (trimmed), for `readNumber` to refuse.
 */
export function peopleAmountText(raw: string | undefined, lang: Lang): string | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim();
  // Spaces as thousands separators (any language), then a comma or dot decimal part.
  let m = /^(\d{1,3}(?:[\u0020\u00a0\u202f\u2009]\d{3})+|\d+)(?:[.,](\d+))?$/.exec(s);
  if (m) {
    const int = m[1]!.replace(SPACES, '');
    if (m[2] === undefined) return int;
    const commaDecimal = s.includes(',');
    if (commaDecimal && lang === 'en' && m[2].length === 3 && !/\s/.test(s)) return `${int}${m[2]}`; // en "1,500"
    return `${int}.${m[2]}`;
  }
  // "1,500.00" (comma groups, dot decimal) and "1.500,00" (dot groups, comma decimal).
  m = /^(\d{1,3}(?:,\d{3})+)(?:\.(\d+))?$/.exec(s);
  if (m) return `${m[1]!.replace(/,/g, '')}${m[2] !== undefined ? `.${m[2]}` : ''}`;
  m = /^(\d{1,3}(?:\.\d{3})+),(\d+)$/.exec(s);
  if (m) return `${m[1]!.replace(/\./g, '')}.${m[2]}`;
  return s;
}
