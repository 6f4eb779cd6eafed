import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Config } from './config.js';
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

/** Values never to log verbatim, whatever field they turn up in: the admin token, the encryption key. */
export const configSecrets = (config: Pick<Config, 'adminApiToken' | 'tokenEncryptionKey'>): string[] =>
  [config.adminApiToken, config.tokenEncryptionKey.toString('base64')];

/**
 * pino options: every line scrubbed (`secrets` never verbatim); with `stream` (Fastify passes it
 * on to pino) when the lines are pretty.
 */
export function loggerOptions(
  level: string, opts: { format?: Config['logFormat']; secrets?: readonly string[] } = {},
): LoggerOptions & { stream?: DestinationStream } {
  const known = (opts.secrets ?? []).filter((s) => s.length >= 8);
  const format = opts.format ?? 'json';
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
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
      // Nor the token of a one-time link in a path (a cabinet invitation: /cabinet/team/invite/<token>).
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.split('?')[0]!.replace(/\/invite\/[^/]+/, `/invite/${CENSOR}`), id: req.id }),
    },
    ...(pretty ? { stream: prettyStream(process.stdout) } : {}),
  };
}

/** A pino logger outside Fastify (workers, the cluster primary), same options. */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat' | 'adminApiToken' | 'tokenEncryptionKey'>): Logger {
  const { stream, ...opts } = loggerOptions(config.logLevel, { format: config.logFormat, secrets: configSecrets(config) });
  return stream ? pino(opts, stream) : pino(opts);
}

const LEVELS: Record<number, [string, string]> = {
  10: ['TRACE', '90'], 20: ['DEBUG', '36'], 30: ['INFO ', '32'], 40: ['WARN ', '33'], 50: ['ERROR', '31'], 60: ['FATAL', '35'],
};
const SHOWN_APART = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'req', 'res', 'responseTime', 'err']);

/**
 * Development logs as lines a person reads: `12:00:01.234 INFO  POST /api/v1/bill/create 200 4.1 ms`.
 * Fastify's "incoming request" line is held back and folded into its "request completed" line.
 * Synchronous and in-process (no transport thread): redaction has already happened in pino.
 */
export function prettyStream(out: NodeJS.WritableStream & { isTTY?: boolean }): DestinationStream {
  const color = out.isTTY === true;
  const paint = (code: string, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const started = new Map<string, string>();
  return {
    write(line: string) {
      let o: Record<string, any>;
      try { o = JSON.parse(line); } catch { out.write(line); return; }
      if (o.msg === 'incoming request' && o.req) {
        if (started.size > 10_000) started.clear();
        started.set(String(o.reqId), `${o.req.method} ${o.req.url}`);
        return;
      }
      let text = String(o.msg ?? '');
      if (o.msg === 'request completed' && o.res) {
        text = `${started.get(String(o.reqId)) ?? '?'} ${o.res.statusCode} ${Number(o.responseTime ?? 0).toFixed(1)} ms`;
        started.delete(String(o.reqId));
      }
      const extra = Object.entries(o)
        .filter(([k]) => !SHOWN_APART.has(k))
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      const [name, code] = LEVELS[o.level as number] ?? [String(o.level), '0'];
      const t = new Date(o.time as number);
      const time = `${String(t.getHours()).padStart(2, '0')}:${String(t.getMinutes()).padStart(2, '0')}:${String(t.getSeconds()).padStart(2, '0')}.${String(t.getMilliseconds()).padStart(3, '0')}`;
      const err = o.err ? `\n    ${String(o.err.stack ?? o.err.message).split('\n').join('\n    ')}` : '';
      out.write(`${paint('2', time)} ${paint(code, name)} ${text}${extra ? ` ${paint('2', extra)}` : ''}${err}\n`);
    },
  };
}
