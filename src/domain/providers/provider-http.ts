import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Decimal } from 'decimal.js';
import { assertSafeUrl, checkUrlShape, guardedLookup, isPrivateLiteralHost, UNSAFE_ADDRESS, UnsafeUrlError } from '../../outbox/url-guard.js';
import { ConnectorRefusedError, type CreateRefund } from './connector.js';

/**
 * A provider's HTTP answer: status, raw text, the body parsed as JSON (null when it is not JSON),
 * and the Retry-After header when one came.
 */
export interface ProviderAnswer { status: number; text: string; body: unknown; retryAfter?: string | null }

/**
 * Where a connector may call (ALLOW_PRIVATE_PROVIDER_URLS): `allowPrivate` lets emulators and
 * tests use loopback and plain http; without it only public https addresses are reached.
 */
export interface ProviderNet { allowPrivate: boolean }

/** How long a connection to a provider may take to open (fetch's connect timeout, under CONNECTOR_TIMEOUT_MS). */
const CONNECT_TIMEOUT_MS = 10_000;

/** Kept-alive connections to providers (a connection reused was checked when it was made). */
const providerAgent = new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 60_000 });

/**
 * One https request whose every DNS answer is checked at connect time (`lookup`, guardedLookup
 * unless a test says otherwise): a public name that resolves to a private address is refused,
 * with no window between the check and the connect. A redirect is an answer, never followed.
 * Errors carry the socket's error as `cause`, as fetch's do, so they are classified alike.
 */
export function publicHttpsRequest(
  u: URL, init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }, signal: AbortSignal,
  o: { lookup?: LookupFunction; ca?: string } = {},
): Promise<{ status: number; text: string; retryAfter: string | null }> {
  return new Promise((resolve, reject) => {
    const failed = (e: Error) => reject(Object.assign(new Error('request failed'), { cause: e }));
    const req = https.request(u, {
      method: init.method, headers: init.headers, signal, lookup: o.lookup ?? guardedLookup,
      ...(o.ca ? { ca: o.ca, agent: false } : { agent: providerAgent }),
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: typeof h === 'string' ? h : null });
      });
      res.on('error', failed);
      res.on('aborted', () => failed(new Error('the answer was cut')));
    });
    // As fetch's own connect timeout (NEVER_SENT below): an address that drops the attempt is down, not unknown.
    req.on('socket', (sock) => {
      if (!sock.connecting) return;
      const t = setTimeout(() => req.destroy(Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' })), CONNECT_TIMEOUT_MS);
      sock.once('connect', () => clearTimeout(t));
      sock.once('close', () => clearTimeout(t));
    });
    req.on('error', failed);
    req.end(init.body);
  });
}

/**
 * A provider address an operator typed, checked when a connector is saved: without
 * `allowPrivate`, https only, and the host (resolved) a public address. Answers why not, or null.
 */
export async function providerUrlProblem(raw: string, net: ProviderNet): Promise<string | null> {
  try {
    const u = checkUrlShape(raw);
    if (net.allowPrivate) return null;
    if (u.protocol !== 'https:') return 'Must be an https URL (ALLOW_PRIVATE_PROVIDER_URLS is off).';
    await assertSafeUrl(raw, false);
    return null;
  } catch (e) {
    if (e instanceof UnsafeUrlError) return `Must be a public https address: ${e.message} (ALLOW_PRIVATE_PROVIDER_URLS is off).`;
    throw e;
  }
}

/**
 * One HTTP call to a provider, aborted by the call wrapper's signal. What reaches the caller:
 * an answer (any status; a redirect is an answer, never followed); a ConnectorRefusedError when
 * the request never left (connection refused, unknown host, an address `net` does not allow),
 * so no money can have moved; any other error (cut connection, a reset after sending, a
 * timeout) as a plain Error, which the wrapper records as an unknown outcome.
 */
export async function providerFetch(
  who: string, url: string, init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }, signal: AbortSignal,
  net: ProviderNet,
): Promise<ProviderAnswer> {
  if (!net.allowPrivate) {
    let u: URL;
    try { u = checkUrlShape(url); } catch (e) { throw new ConnectorRefusedError('unsafe_url', `${who}: the address ${(e as Error).message} (the request was not sent)`); }
    if (u.protocol !== 'https:') throw new ConnectorRefusedError('unsafe_url', `${who}: not an https address (the request was not sent)`);
    if (isPrivateLiteralHost(u)) throw new ConnectorRefusedError('unsafe_url', `${who}: a private or loopback address (the request was not sent)`);
  }
  let answer: { status: number; text: string; retryAfter: string | null };
  try {
    if (net.allowPrivate) {
      const res = await fetch(url, { ...init, signal, redirect: 'manual' });
      answer = { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
    } else {
      answer = await publicHttpsRequest(new URL(url), init, signal);
    }
  } catch (e) {
    if (causeCode(e) === UNSAFE_ADDRESS) throw new ConnectorRefusedError('unsafe_url', `${who}: the host resolves to a private or loopback address (the request was not sent)`);
    if (!signal.aborted && neverSent(e)) throw new ConnectorRefusedError('connection_refused', `${who}: ${inWords(causeCode(e))}, so the request was not sent (${causeCode(e)})`);
    throw new Error(`${who}: no answer: ${inWords(causeCode(e))} (${causeCode(e)})`);
  }
  let body: unknown = null;
  try { body = JSON.parse(answer.text); } catch { /* an HTML error page from a proxy */ }
  return { status: answer.status, text: answer.text, body, retryAfter: answer.retryAfter };
}

/**
 * How a call the provider asked to repeat is repeated inside one connector call: at most
 * `repeats` more times with the same request (the same idempotency key), waiting what the
 * provider asked for (capped at `maxDelayMs`) or else `firstDelayMs` doubled per repeat. What
 * is still not done after them goes back to the lifecycle as `unknown` (reconciled later),
 * never as a refusal. The whole stays under the call's own timeout (CONNECTOR_TIMEOUT_MS).
 */
export interface RepeatPolicy { repeats: number; firstDelayMs: number; maxDelayMs: number }
export const PROVIDER_REPEATS: RepeatPolicy = { repeats: 3, firstDelayMs: 250, maxDelayMs: 5_000 };

/**
 * Sends, and sends again while `again(answer)` says so: a number is the provider's own wait in
 * ms, null the default back-off, false means the answer is final for this call. Returns the
 * last answer and how many repeats were made. An abort while waiting is a plain Error (unknown).
 */
export async function sendRepeating(
  send: () => Promise<ProviderAnswer>, again: (a: ProviderAnswer) => number | null | false, signal: AbortSignal,
  policy: RepeatPolicy = PROVIDER_REPEATS,
): Promise<{ answer: ProviderAnswer; repeats: number }> {
  let answer = await send();
  for (let i = 0; i < policy.repeats; i += 1) {
    const wait = again(answer);
    if (wait === false) return { answer, repeats: i };
    const ms = Math.min(wait ?? policy.firstDelayMs * 2 ** i, policy.maxDelayMs);
    await abortableSleep(Math.max(0, ms), signal);
    answer = await send();
  }
  return { answer, repeats: policy.repeats };
}

/** The Retry-After header (RFC 9110: delay-seconds or an HTTP date) in ms; null when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) { reject(new Error('aborted while waiting to repeat')); return; }
    const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    function onAbort() { clearTimeout(t); reject(new Error('aborted while waiting to repeat')); }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Errors before a connection to the provider existed: nothing of the request left, so no money
 * can have moved. UND_ERR_CONNECT_TIMEOUT is fetch's own connect timeout (10 s, under
 * CONNECTOR_TIMEOUT_MS's 15 s): an address that drops the connection attempt is as down as one
 * that refuses it. A connection made and then not answered is never here: that is unknown.
 */
const NEVER_SENT = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'bad port',
  // The provider's certificate refused during the TLS handshake (an unknown root such as the
  // Russian Trusted Root CA missing from the trust store, an expired or misnamed certificate):
  // the handshake ends before a byte of the request is written, so the call was never sent.
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_REVOKED', 'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function causeCode(e: unknown): string {
  const c = (e as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
  // fetch refuses a port of the Fetch standard's bad-port list (a setting's typo) with no code.
  return c?.code ?? c?.errors?.[0]?.code ?? (c?.message === 'bad port' ? 'bad port' : e instanceof Error ? e.name : 'error');
}

function neverSent(e: unknown): boolean { return NEVER_SENT.has(causeCode(e)); }

/** What an operator reads for a connection error code (the code itself follows in brackets). */
const CODE_WORDS: Record<string, string> = {
  ECONNREFUSED: 'the provider\'s address refused the connection',
  ENOTFOUND: 'the provider\'s host name was not found (check the base URL or DNS)',
  EAI_AGAIN: 'the provider\'s host name could not be looked up just now (DNS did not answer)',
  EHOSTUNREACH: 'the provider\'s host cannot be reached from this server',
  ENETUNREACH: 'the provider\'s network cannot be reached from this server',
  UND_ERR_CONNECT_TIMEOUT: 'no connection to the provider could be made in time',
  'bad port': 'the base URL names a port that may not be used',
  ECONNRESET: 'the provider closed the connection before answering',
  UND_ERR_SOCKET: 'the connection to the provider broke before its answer',
  TimeoutError: 'the provider did not answer in time',
  AbortError: 'the call was stopped before the provider answered',
};

export function inWords(code: string): string { return CODE_WORDS[code] ?? 'the connection failed'; }
/** Loopback, added to a connector's default notification sources in the `sandbox` profile only (a local emulator, tests). */
export const LOOPBACK_SOURCES = '127.0.0.0/8, ::1';

/**
 * A source-IP allow-list from a setting: addresses and CIDR networks (IPv4 or IPv6), separated
 * by commas or spaces. Throws with the offending entry when one is not an address or network.
 */
export function parseAllowList(setting: string): BlockList {
  const list = new BlockList();
  for (const entry of setting.split(/[\s,]+/).filter((x) => x !== '')) {
    const [addr, bits, extra] = entry.split('/');
    const family = isIP(addr ?? '');
    const max = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max))) {
      throw new Error(`not an IP address or network: ${entry}`);
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr!, type); else list.addSubnet(addr!, Number(bits), type);
  }
  return list;
}

/** Is `ip` (as the HTTP server saw it; an IPv4-mapped IPv6 address counts as IPv4) in the list? */
export function ipAllowed(list: BlockList, ip: string): boolean {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  const addr = v4 ?? ip;
  const family = isIP(addr);
  return family !== 0 && list.check(addr, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The roubles a provider gives back for a refund: the payer paid it in RUB, whatever the bill's
 * currency. Null when a refund in another currency carries no RUB amount (admitted before one was kept).
 */
export function rubOfRefund(req: Pick<CreateRefund, 'amount' | 'amountRub' | 'currency'>): Decimal | null {
  if (req.amountRub !== null) return req.amountRub;
  return req.currency === 'RUB' ? req.amount : null;
}
