import { createHmac } from 'node:crypto';
import { safeEqual } from '../lib/crypto.js';
import { randomId } from '../lib/ids.js';

/** How long a rendered payment form stays valid. */
export const CSRF_TTL_MS = 2 * 60 * 60 * 1000;

/**
 * Stateless CSRF token of the payment form: `<issued ms>.<nonce>.<HMAC(bill id, issued, nonce)>`,
 * the key derived from TOKEN_ENCRYPTION_KEY, so any API process can check a form another one
 * rendered. Single use: the nonce is written on the payment the form opens (payments.form_nonce,
 * unique), so a reloaded or repeated POST of the same form finds that payment instead of opening
 * another one.
 */
export class PayCsrf {
  private readonly key: Buffer;
  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('pay-page-csrf/v2').digest();
  }

  private mac(billId: string, issued: string, nonce: string): string {
    return createHmac('sha256', this.key).update(`${billId}:${issued}:${nonce}`).digest('base64url');
  }

  issue(billId: string, now = Date.now()): string {
    const issued = String(now);
    const nonce = randomId(16);
    return `${issued}.${nonce}.${this.mac(billId, issued, nonce)}`;
  }

  /** The token's nonce when it is valid for `billId` and not expired; null otherwise. */
  check(billId: string, token: unknown, now = Date.now()): string | null {
    if (typeof token !== 'string' || token.length > 200) return null;
    const m = /^(\d{10,16})\.([A-Za-z0-9]{16})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return null;
    const issued = Number(m[1]);
    if (issued > now + 60_000 || now - issued > CSRF_TTL_MS) return null;
    return safeEqual(m[3]!, this.mac(billId, m[1]!, m[2]!)) ? m[2]! : null;
  }

  verify(billId: string, token: unknown, now = Date.now()): boolean {
    return this.check(billId, token, now) !== null;
  }
}
