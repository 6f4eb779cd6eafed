import { Decimal } from 'decimal.js';

/**
 * Money as people read it: one format per language on every face (cabinet, console, the payer's
 * pages, mails). Russian `1 234,50 ₽` (groups of three split by a no-break space, a decimal
 * comma, the currency's sign after the number); English `RUB 1,234.50` (the ISO code first,
 * comma groups, a decimal dot). A currency without a sign (USDT) is written by its code in both.
 * Always two decimals: a balance kept to 8 decimals is cut to kopecks towards zero (never
 * showing money that is not there). Decimal in, string out: no value passes through a float.
 * For screens, mails and CSVs only; the API and postbacks keep their wire format (lib/money.ts).
 */
export type MoneyLang = 'ru' | 'en';

const SIGNS: Record<string, string> = { RUB: '₽', USD: '$', EUR: '€' };
const NBSP = '\u00a0';

/** The amount's digits in the language's marks, two decimals, no currency: `1 234,50` / `1,234.50`. */
export function formatAmount(value: Decimal.Value, lang: MoneyLang): string {
  const d = new Decimal(value).toDecimalPlaces(2, Decimal.ROUND_DOWN);
  const [int, frac] = d.abs().toFixed(2).split('.') as [string, string];
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, lang === 'ru' ? NBSP : ',');
  const sign = d.isNegative() && !d.isZero() ? '-' : '';
  return `${sign}${grouped}${lang === 'ru' ? ',' : '.'}${frac}`;
}

/**
 * An amount with its currency: ru `1 234,50 ₽`, en `RUB 1,234.50`; with no currency, the
 * amount alone (a table whose column names the currency).
 */
export function formatMoney(value: Decimal.Value, lang: MoneyLang, currency: string | null = null): string {
  const amount = formatAmount(value, lang);
  if (currency === null) return amount;
  if (lang === 'ru') return `${amount}${NBSP}${currencyMark(currency, lang)}`;
  return amount.startsWith('-') ? `-${currency}${NBSP}${amount.slice(1)}` : `${currency}${NBSP}${amount}`;
}

/** How the language writes a currency next to an amount: ru its sign (`₽`), en its code (`RUB`). */
export function currencyMark(currency: string, lang: MoneyLang): string {
  return lang === 'ru' ? SIGNS[currency] ?? currency : currency;
}

/** A CSV cell: plain decimal, two places, the language's decimal mark (`1234,50` / `1234.50`). */
export function csvAmount(value: Decimal.Value, lang: MoneyLang): string {
  const s = new Decimal(value).toDecimalPlaces(2, Decimal.ROUND_DOWN).toFixed(2);
  return lang === 'ru' ? s.replace('.', ',') : s;
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
