/**
 * A CSV cell made safe to open in a spreadsheet (OWASP "CSV Injection"): a cell starting with
 * `=`, `+`, `-`, `@`, a tab or a carriage return would run as a formula (or DDE command), so
 * it gets a leading apostrophe, which spreadsheets show as text. A plain decimal number
 * (`-100.00`, `-1,5` with a decimal comma) is left as it is: digits and one decimal mark cannot
 * form a formula, and a debit must stay a number the spreadsheet can add up
 * (docs/adr/0050-security-hardening.md).
 */
export function csvCell(s: string): string {
  if (!/^[=+\-@\t\r]/.test(s)) return s;
  if (/^-\d+(?:[.,]\d+)?$/.test(s)) return s;
  return `'${s}`;
}
