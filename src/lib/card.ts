/** Card and phone helpers shared by the payment page, payouts and payout accounts. */

export function luhnValid(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) { d *= 2; if (d > 9) d -= 9; }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Digits only ("4242 4242-4242 4242" -> "4242424242424242"). */
export const cardDigits = (raw: string): string => raw.replace(/[\s-]/g, '');

/** First 6, stars, last 4: 4242424242424242 -> 424242******4242. */
export function maskCard(digits: string): string {
  return `${digits.slice(0, 6)}${'*'.repeat(Math.max(0, digits.length - 10))}${digits.slice(-4)}`;
}

/**
 * A Russian mobile number as +7 and 10 digits, from +7XXXXXXXXXX, 7XXXXXXXXXX, 8XXXXXXXXXX or
 * XXXXXXXXXX with any spaces, dashes and brackets; null when it is not one.
 */
export function normalizePhone(raw: string): string | null {
  const d = raw.replace(/[\s()+-]/g, '');
  if (!/^\d+$/.test(d)) return null;
  if (d.length === 10 && d.startsWith('9')) return `+7${d}`;
  if (d.length === 11 && (d.startsWith('7') || d.startsWith('8')) && d[1] === '9') return `+7${d.slice(1)}`;
  return null;
}

/** Phones are shown masked in lists: +7 912 *** ** 34 style -> +7912*****34. */
export function maskPhone(phone: string): string {
  return phone.length > 6 ? `${phone.slice(0, 5)}${'*'.repeat(phone.length - 7)}${phone.slice(-2)}` : phone;
}
