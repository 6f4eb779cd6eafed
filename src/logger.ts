import type { LoggerOptions } from 'pino';
import { luhnValid } from './lib/card.js';

/** Paths pino blanks out: secrets and card data never reach the logs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.api_token', '*.apiToken', '*.token', '*.password', '*.card_number', '*.cardNumber', '*.card_cvc',
  '*.account_identifier', '*.identifier', '*.SignatureValue',
  'body.card_number', 'body.card_cvc', 'body.card_expiry', 'body.password', 'body.api_token',
];

const CENSOR = '[redacted]';

// Keys whose values are secret wherever they appear, at any depth (compared lower-case, without
// `-` and `_`): credentials, cookies, card data, signatures, the configured keys.
const SECRET_KEYS = new Set([
  'authorization', 'proxyauthorization', 'cookie', 'setcookie', 'xapikey', 'password', 'passwd', 'newpassword', 'passwordhash',
  'apitoken', 'token', 'accesstoken', 'refreshtoken', 'admintoken', 'adminapitoken', 'tokenencryptionkey', 'apitokenenc',
  'secret', 'csrf', 'csrftoken', 'card', 'cardnumber', 'cardcvc', 'cardexpiry', 'cvc', 'cvv', 'pan', 'number',
  'accountidentifier', 'identifier', 'identifierenc', 'accountenc', 'signaturevalue', 'signature',
]);

// A card number (13-19 digits passing the Luhn check, spaces or dashes allowed) anywhere in a
// string; a bearer token.
const PAN = /\b(?:\d[ -]?){12,18}\d\b/g;
const maskPan = (m: string): string => (luhnValid(m.replace(/[ -]/g, '')) ? CENSOR : m);
const BEARER = /(Bearer\s+)[^\s"',;]+/gi;

/**
 * Deep scrub of everything a log line carries, whoever logged it (Fastify, plugins such as
 * @fastify/multipart at trace level, our code): secret keys at any depth, card numbers and
 * bearer tokens inside any string, and the configured secrets verbatim. Bounded in depth and
 * size so a large object cannot make logging expensive.
 */
export function scrub(value: unknown, known: readonly string[] = [], depth = 0): unknown {
  if (typeof value === 'string') {
    let s = value.replace(BEARER, `$1${CENSOR}`).replace(PAN, maskPan);
    for (const k of known) if (k && s.includes(k)) s = s.split(k).join(CENSOR);
    return s;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= 8) return '[too deep]';
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => scrub(v, known, depth + 1));
  if (value instanceof Error) {
    return { type: value.name, message: scrub(value.message, known, depth + 1), stack: scrub(value.stack, known, depth + 1),
      ...(scrub({ ...value }, known, depth + 1) as object) };
  }
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const [k, v] of Object.entries(value)) {
    if (n++ >= 200) { out['…'] = '[truncated]'; break; }
    out[k] = SECRET_KEYS.has(k.toLowerCase().replace(/[-_]/g, '')) && v !== null && v !== undefined && v !== '' ? CENSOR : scrub(v, known, depth + 1);
  }
  return out;
}

/** `secrets`: values never to log verbatim (the admin token, the encryption key). */
export function loggerOptions(level: string, secrets: readonly string[] = []): LoggerOptions {
  const known = secrets.filter((s) => s.length >= 8);
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    formatters: {
      // req and res are left to their serializers (which keep only safe fields).
      log: (obj) => {
        const { req, res, ...rest } = obj;
        return { ...(scrub(rest, known) as Record<string, unknown>), ...(req === undefined ? {} : { req }), ...(res === undefined ? {} : { res }) };
      },
    },
    hooks: {
      // The message string too (e.g. an error message quoting input).
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? scrub(a, known) : a)) as Parameters<typeof method>);
      },
    },
    serializers: {
      // Never log query strings: GET endpoints may carry identifiers.
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.split('?')[0], id: req.id }),
    },
  };
}
