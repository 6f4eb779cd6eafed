/**
 * An address shown to someone who should learn where a message went, not the address itself
 * (an operator after a password reset): the first letter of the local part, then `***`, then the
 * domain: `owner@example.com` -> `o***@example.com`.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}
