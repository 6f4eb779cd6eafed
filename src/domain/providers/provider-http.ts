import { BlockList, isIP } from 'node:net';
import type { Decimal } from 'decimal.js';
import { ConnectorRefusedError, type CreateRefund } from './connector.js';

/**
 * A provider's HTTP answer: status, raw text, the body parsed as JSON (null when it is not JSON),
 * and the Retry-After header when one came.
 */
export interface ProviderAnswer { status: number; text: string; body: unknown; retryAfter?: string | null }

/**
 * One HTTP call to a provider, aborted by the call wrapper's signal. What reaches the caller:
 * an answer (any status); a ConnectorRefusedError when the request never left (connection
 * refused, unknown host), so no money can have moved; any other error (cut connection, a reset
 * after sending, a timeout) as a plain Error, which the wrapper records as an unknown outcome.
 */
export async function providerFetch(
  who: string, url: string, init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }, signal: AbortSignal,
): Promise<ProviderAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal, redirect: 'manual' });
  } catch (e) {
    if (!signal.aborted && neverSent(e)) throw new ConnectorRefusedError('connection_refused', `${who}: ${inWords(causeCode(e))}, so the request was not sent (${causeCode(e)})`);
    throw new Error(`${who}: no answer: ${inWords(causeCode(e))} (${causeCode(e)})`);
  }
  const text = await res.text();
  let body: unknown = null;
  try { body = JSON.parse(text); } catch { /* an HTML error page from a proxy */ }
  return { status: res.status, text, body, retryAfter: res.headers.get('retry-after') };
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
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'bad port']);

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
