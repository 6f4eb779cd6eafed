import { Decimal } from 'decimal.js';
import type { Lang } from './i18n.js';

/**
 * Money as people read it: one format per language on every face (cabinet, console, the payer's
 * pages, mails). Russian `1 234,50 ₽` (groups of three split by a no-break space, a decimal
 * comma, the currency's sign after the number); English `RUB 1,234.50` (the ISO code first,
 * comma groups, a decimal dot). A currency without a sign (USDT) is written by its code in both.
 * Always two decimals: a balance kept to 8 decimals is cut to kopecks towards zero (never
 * showing money that is not there). Decimal in, string out: no value passes through a float.
 * For screens, mails and CSVs only; the API and postbacks keep their wire format (lib/money.ts).
 */

const SIGNS: Record<string, string> = { RUB: '₽', USD: '$', EUR: '€' };
const NBSP = '\u00a0';

/** The amount's digits in the language's marks, two decimals, no currency: `1 234,50` / `1,234.50`. */
export function formatAmount(value: Decimal.Value, lang: Lang): string {
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
export function formatMoney(value: Decimal.Value, lang: Lang, currency: string | null = null): string {
  const amount = formatAmount(value, lang);
  if (currency === null) return amount;
  if (lang === 'ru') return `${amount}${NBSP}${currencyMark(currency, lang)}`;
  return amount.startsWith('-') ? `-${currency}${NBSP}${amount.slice(1)}` : `${currency}${NBSP}${amount}`;
}

/** How the language writes a currency next to an amount: ru its sign (`₽`), en its code (`RUB`). */
export function currencyMark(currency: string, lang: Lang): string {
  return lang === 'ru' ? SIGNS[currency] ?? currency : currency;
}

/** A CSV cell: plain decimal, two places, the language's decimal mark (`1234,50` / `1234.50`). */
export function csvAmount(value: Decimal.Value, lang: Lang): string {
  const s = new Decimal(value).toDecimalPlaces(2, Decimal.ROUND_DOWN).toFixed(2);
  return lang === 'ru' ? s.replace('.', ',') : s;
}
