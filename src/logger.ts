import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Config } from './config.js';

/** Paths pino blanks out: secrets and card data never reach the logs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.api_token', '*.apiToken', '*.token', '*.password', '*.card_number', '*.cardNumber', '*.card_cvc',
  '*.account_identifier', '*.identifier', '*.SignatureValue',
  'body.card_number', 'body.card_cvc', 'body.card_expiry', 'body.password', 'body.api_token',
];

/** pino options; with `stream` (Fastify passes it on to pino) when the lines are pretty. */
export function loggerOptions(level: string, format: Config['logFormat'] = 'json'): LoggerOptions & { stream?: DestinationStream } {
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      // Never log query strings: GET endpoints may carry identifiers.
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.split('?')[0], id: req.id }),
    },
    ...(pretty ? { stream: prettyStream(process.stdout) } : {}),
  };
}

/** A pino logger outside Fastify (workers, the cluster primary), same options. */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>): Logger {
  const { stream, ...opts } = loggerOptions(config.logLevel, config.logFormat);
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
