import http from 'node:http';
import https from 'node:https';
import { checkUrlShape, guardedLookup, isPrivateLiteralHost, UNSAFE_ADDRESS, UnsafeUrlError } from './url-guard.js';
import { classifyStatus, type AttemptOutcome } from '../lib/delivery-retry.js';

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Bytes of the reply read at most; a longer reply is cut (and its connection closed). */
  maxReplyBytes?: number;
}

export interface SendResult {
  outcome: AttemptOutcome;
  httpStatus: number | null;
  /** First bytes of the reply (text), or null when none came. */
  responseHead: string | null;
  /** Why the attempt failed (network error, timeout, refused URL); null on any HTTP answer. */
  error: string | null;
  latencyMs: number;
}

const RESPONSE_HEAD_CHARS = 256;

// Keep-alive agents: delivering thousands of events to one receiver reuses its connections.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 128, maxFreeSockets: 32, timeout: 30_000 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 128, maxFreeSockets: 32, timeout: 30_000 }),
};

const clean = (s: string): string => s.replace(/\u0000/g, '').slice(0, RESPONSE_HEAD_CHARS);

/**
 * POSTs one urlencoded body. Never throws: every way it can end is a SendResult. No redirect
 * is followed (a 3xx is an answer like any other); the attempt is cut after `timeoutMs`.
 */
export function sendForm(rawUrl: string, body: string, opts: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const latency = () => Math.max(0, Math.round(performance.now() - started));
  let url: URL;
  try {
    url = checkUrlShape(rawUrl);
  } catch (e) {
    const reason = `unsafe URL: ${(e as Error).message}`;
    return Promise.resolve({ outcome: { kind: 'permanent', reason }, httpStatus: null, responseHead: null, error: reason, latencyMs: 0 });
  }
  if (!opts.allowPrivate && isPrivateLiteralHost(url)) {
    const reason = 'unsafe URL: must not point to a private or loopback address';
    return Promise.resolve({ outcome: { kind: 'refused', reason }, httpStatus: null, responseHead: null, error: reason, latencyMs: 0 });
  }
  const cap = opts.maxReplyBytes ?? 1024;
  const isHttps = url.protocol === 'https:';
  return new Promise<SendResult>((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (r: Omit<SendResult, 'latencyMs'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...r, latencyMs: latency() });
    };
    const fail = (err: NodeJS.ErrnoException) => {
      if (err.code === UNSAFE_ADDRESS) {
        const reason = `unsafe URL: ${err.message}`;
        return finish({ outcome: { kind: 'refused', reason }, httpStatus: null, responseHead: null, error: reason });
      }
      const reason = err.code ? `${err.code}: ${err.message}` : err.message;
      finish({ outcome: { kind: 'retryable', reason }, httpStatus: null, responseHead: null, error: clean(reason) });
    };
    let req: http.ClientRequest;
    try {
      req = (isHttps ? https : http).request(url, {
        method: 'POST',
        agent: agents[isHttps ? 'https:' : 'http:'],
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'payment-service-events/1.0',
          accept: '*/*',
        },
        ...(opts.allowPrivate ? {} : { lookup: guardedLookup }),
      }, (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        const answer = () => {
          const head = Buffer.concat(chunks).subarray(0, cap).toString('utf8');
          const outcome = classifyStatus(status);
          finish({ outcome, httpStatus: status, responseHead: clean(head), error: null });
        };
        res.on('data', (c: Buffer) => {
          if (size < cap) chunks.push(c);
          size += c.length;
          if (size > cap) {
            // Enough read: the rest is not waited for; the connection is not reused.
            answer();
            res.destroy();
            req.destroy();
          }
        });
        res.on('end', answer);
        res.on('error', () => answer());
        res.on('aborted', () => answer());
      });
    } catch (e) {
      const reason = `cannot send: ${(e as Error).message}`;
      return finish({ outcome: { kind: 'permanent', reason }, httpStatus: null, responseHead: null, error: clean(reason) });
    }
    timer = setTimeout(() => {
      finish({ outcome: { kind: 'retryable', reason: 'timeout' }, httpStatus: null, responseHead: null, error: `timeout after ${opts.timeoutMs} ms` });
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', fail);
    req.end(body);
  });
}

/** Guard error for callers that check a URL themselves (e.g. before a test postback). */
export { UnsafeUrlError };
