import { createHmac } from 'node:crypto';
import { safeEqual } from '../lib/crypto.js';

/** How long a rendered payment form stays valid. */
export const CSRF_TTL_MS = 2 * 60 * 60 * 1000;

/**
 * Stateless CSRF token of the payment form: `<issued ms>.<HMAC(bill id, issued)>`, the key
 * derived from TOKEN_ENCRYPTION_KEY, so any API process can check a form another one rendered.
 */
export class PayCsrf {
  private readonly key: Buffer;
  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('pay-page-csrf/v1').digest();
  }

  private mac(billId: string, issued: string): string {
    return createHmac('sha256', this.key).update(`${billId}:${issued}`).digest('base64url');
  }

  issue(billId: string, now = Date.now()): string {
    const issued = String(now);
    return `${issued}.${this.mac(billId, issued)}`;
  }

  verify(billId: string, token: unknown, now = Date.now()): boolean {
    if (typeof token !== 'string' || token.length > 200) return false;
    const m = /^(\d{10,16})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return false;
    const issued = Number(m[1]);
    if (issued > now + 60_000 || now - issued > CSRF_TTL_MS) return false;
    return safeEqual(m[2]!, this.mac(billId, m[1]!));
  }
}
