import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import { sha256Hex } from './crypto.js';

/**
 * The pieces the merchant cabinet and the operator console share for their server-side
 * sessions (docs/adr/0033-web-sessions-cabinet-and-console.md): a cookie of 32
 * random bytes of which only the SHA-256 is stored, a per-session CSRF token, and the
 * same-site path check for the page to return to after sign-in.
 */

// Compared against when the account is unknown or has no password, so every path costs one
// bcrypt round (cost 10, as passwords are hashed).
const DUMMY_HASH = '$2b$10$nt/TIRtjht75GB/QggmbV.ZV0LK3TpsMrFYO6y0VHaqdmiIfWwEra';

/** Absolute session lifetime of the cabinet and the console (docs/adr/0033). */
export const SESSION_HOURS = 12;

/**
 * bcrypt in the libuv thread pool (the native `bcrypt` package): sign-ins never stall the
 * event loop. A missing hash is checked against a dummy one and is never a match.
 */
export async function passwordMatches(password: string, hash: string | null): Promise<boolean> {
  const ok = await bcrypt.compare(password, hash ?? DUMMY_HASH).catch(() => false);
  return ok && hash !== null;
}

/** A new session cookie value and the id stored for it (its SHA-256). */
export function newSessionCookie(): { cookie: string; id: string } {
  const cookie = randomBytes(32).toString('base64url');
  return { cookie, id: sha256Hex(cookie) };
}

/** The stored id of a cookie value; null for none or for anything longer than a real one. */
export function sessionIdOf(cookie: string | undefined): string | null {
  if (!cookie || cookie.length > 100) return null;
  return sha256Hex(cookie);
}

/** A CSRF or form token: 32 random bytes, base64url. */
export const newFormSecret = (): string => randomBytes(32).toString('base64url');

const ORIGIN = 'http://site.invalid';

/**
 * Only paths under `base` are followed after sign-in (no open redirect). The path is resolved
 * as a browser would (dot segments, `%2e%2e`, backslashes read as slashes) and must still be
 * under `base`, with nothing a browser or proxy could read differently: no backslash, no
 * encoded dot, slash or backslash, no empty segment, no control character.
 */
export function safeNext(next: string | undefined, base: string): string {
  const esc = base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  if (!next || next.length > 1000 || !new RegExp(`^${esc}(?:[/?]|$)`).test(next)) return base;
  if (/[\\\u0000-\u001f\u007f]|\/\/|%(?:2e|2f|5c)/i.test(next)) return base;
  let u: URL;
  try { u = new URL(next, ORIGIN); } catch { return base; }
  if (u.origin !== ORIGIN || !(u.pathname === base || u.pathname.startsWith(`${base}/`))) return base;
  const out = u.pathname + u.search;
  // Anything the resolution changed (a dot segment) is refused rather than followed.
  return out === next ? out : base;
}

/** The pages' CSP (cabinet and console): nothing inline, scripts and styles from self; QR codes and charts as data: images. */
export const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * PAGE_CSP opened to one more origin for a page that embeds a provider's widget (the YooKassa
 * payout widget: its script, the iframe it shows, what it loads and styles). Nothing inline still.
 */
export function pageCspWith(origin: string): string {
  const o = new URL(origin).origin;
  return `default-src 'none'; script-src 'self' ${o}; style-src 'self' ${o}; img-src 'self' data: ${o}; connect-src 'self' ${o}; ` +
    `frame-src ${o}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

/**
 * The security headers of server-rendered pages on a scope; pages (not their CSS and JS) are
 * `no-store`. A route that set its own CSP (pageCspWith) keeps it.
 */
export function installPageHeaders(app: import('fastify').FastifyInstance): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', PAGE_CSP);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('text/css') && !type.startsWith('text/javascript')) reply.header('cache-control', 'no-store');
    return payload;
  });
}
