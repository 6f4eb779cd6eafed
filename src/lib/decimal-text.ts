import { Decimal } from 'decimal.js';

/**
 * Longest number text and largest exponent accepted from outside. The widest real value is
 * `-999999999999.99999999` (22 characters); anything near these bounds is already refused by
 * the range rules (`1e309` keeps its endpoint's invalid_amount), and formatting a number of a
 * thousand digits costs microseconds, so they only cut off texts whose arithmetic or formatting
 * would cost seconds or the whole heap (`1e600000000`, thousands of digits).
 */
export const MAX_NUMBER_CHARS = 100;
export const MAX_NUMBER_EXPONENT = 1000;

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+))?$/;

/**
 * A decimal from text, or null when it is not a plain number or is too long or its exponent
 * too large. Checked on the text, before decimal.js sees it. Surrounding whitespace is
 * allowed (a form field's stray space), as the callers trim it.
 */
export function boundedDecimal(text: string): Decimal | null {
  if (text.length > MAX_NUMBER_CHARS) return null;
  const m = NUMERIC.exec(text);
  if (!m) return null;
  if (m[2] !== undefined && Math.abs(Number(m[2])) > MAX_NUMBER_EXPONENT) return null;
  const d = new Decimal(text);
  return d.isFinite() ? d : null;
}
