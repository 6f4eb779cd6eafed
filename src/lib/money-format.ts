import { Decimal } from 'decimal.js';

/**
 * Money as people read it (issue 16 item 4): the locale's thousands separator and decimal mark,
 * at least two decimals, the currency sign where the locale puts it ("1 500,00 ₽" in Russian,
 * "₽1,500.00" in English). Decimal-safe: the Decimal's own fixed string is cut into its integer
 * and fraction, the integer grouped by Intl as a BigInt, so no value ever passes through a
 * float. Intl gives only the pattern (where the sign, minus and currency go). For screens only:
 * the API and postbacks keep their wire format (lib/money.ts).
 */
export type MoneyLang = 'ru' | 'en';

const LOCALE: Record<MoneyLang, string> = { ru: 'ru-RU', en: 'en-US' };
const SIGNS: Record<string, string> = { RUB: '₽', USD: '$', EUR: '€' };
const patterns = new Map<string, Intl.NumberFormatPart[]>();
const groupers = new Map<string, Intl.NumberFormat>();

function pattern(lang: MoneyLang, currency: string | null, negative: boolean): Intl.NumberFormatPart[] {
  const key = `${lang}:${currency ?? ''}:${negative ? '-' : '+'}`;
  let p = patterns.get(key);
  if (!p) {
    const opts: Intl.NumberFormatOptions = currency
      ? { style: 'currency', currency, currencyDisplay: 'narrowSymbol', minimumFractionDigits: 2 }
      : { minimumFractionDigits: 2 };
    p = new Intl.NumberFormat(LOCALE[lang], opts).formatToParts(negative ? -1 : 1);
    patterns.set(key, p);
  }
  return p;
}

function grouped(lang: MoneyLang, integer: string): string {
  let g = groupers.get(lang);
  if (!g) { g = new Intl.NumberFormat(LOCALE[lang], { useGrouping: true }); groupers.set(lang, g); }
  return g.format(BigInt(integer));
}

/**
 * `places`: decimals shown; by default two, more only when the value has them (an 8-decimal
 * balance with 0.00000001 shows it, 1500.00000000 shows 1 500,00).
 */
export function formatMoney(value: Decimal.Value, lang: MoneyLang, currency: string | null = null, places?: number): string {
  const d = new Decimal(value);
  const dp = places ?? Math.min(8, Math.max(2, d.decimalPlaces()));
  const [int, frac = ''] = d.abs().toFixed(dp).split('.') as [string, string?];
  const negative = d.isNegative() && !d.isZero();
  const known = currency !== null && currency in SIGNS;
  const out = pattern(lang, known ? currency : null, negative).map((part) => {
    switch (part.type) {
      case 'integer': return null;
      case 'group': return '';
      case 'fraction': return frac;
      case 'currency': return SIGNS[currency!]!;
      default: return part.value;
    }
  });
  // The integer parts (and their group marks) collapse into the first one.
  const first = out.indexOf(null);
  const text = out.map((v, i) => (i === first ? grouped(lang, int) : v ?? '')).join('');
  const s = dp === 0 ? text.replace(/[.,]$/, '') : text;
  return known || currency === null ? s : `${s} ${currency}`;
}

const SPACES = /[\u0020\u00a0\u202f\u2009]/g;

/**
 * An amount typed in a cabinet form the way people write it: "1 500,00", "1 500.00", "1500,5"
 * (and "1,500.00" in English) become "1500.00", "1500.5". Group marks are accepted only in
 * groups of three digits, so "1 0" or "1,0,0" stay as typed and the usual validation refuses
 * them. A lone comma is the decimal mark in Russian and a thousands mark in English ("1,500").
 * Anything else is returned unchanged (trimmed) for the service's own validation.
 */
export function parseAmountInput(raw: string | undefined, lang: MoneyLang): string | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim();
  // Spaces as thousands separators (any language), then a comma or dot decimal part.
  let m = /^(-?\d{1,3}(?:[\u0020\u00a0\u202f\u2009]\d{3})+|-?\d+)(?:[.,](\d+))?$/.exec(s);
  if (m) {
    const int = m[1]!.replace(SPACES, '');
    if (m[2] === undefined) return int;
    const commaDecimal = s.includes(',');
    if (commaDecimal && lang === 'en' && m[2].length === 3 && !/\s/.test(s)) return `${int}${m[2]}`; // en "1,500"
    return `${int}.${m[2]}`;
  }
  // "1,500.00" (comma groups, dot decimal) and "1.500,00" (dot groups, comma decimal).
  m = /^(-?\d{1,3}(?:,\d{3})+)(?:\.(\d+))?$/.exec(s);
  if (m) return `${m[1]!.replace(/,/g, '')}${m[2] !== undefined ? `.${m[2]}` : ''}`;
  m = /^(-?\d{1,3}(?:\.\d{3})+),(\d+)$/.exec(s);
  if (m) return `${m[1]!.replace(/\./g, '')}.${m[2]}`;
  return s;
}
