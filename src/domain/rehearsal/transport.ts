import { isIP, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect, type DetailedPeerCertificate } from 'node:tls';
import type { RehearsalStep } from './rehearsal.step.js';

const CONNECT_TIMEOUT_MS = 10_000;

/** Loopback and private networks: where an emulator or a test double lives, never a provider's API. */
export function isLocalHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) !== 4) return false;
  const [a, b] = h.split('.').map(Number) as [number, number];
  return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}

/**
 * The transport to the provider's API: for https, the TLS chain the host presents and its root
 * (checked against this system's store, as every call will be); for plain http, passed only
 * towards loopback or a private network (an emulator) where ALLOW_PRIVATE_PROVIDER_URLS lets the
 * connector call there, failed towards a public host (the credentials would travel in clear). An address that cannot be reached fails with why.
 */
export async function checkTransport(baseUrl: string, allowPrivate: boolean): Promise<RehearsalStep> {
  let url: URL;
  try { url = new URL(baseUrl); } catch { return { name: 'transport', status: 'failed', detail: `the base URL ${baseUrl} is not a URL`, raw: null }; }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const https = url.protocol === 'https:';
  const port = Number(url.port || (https ? 443 : 80));
  const where = `${host}:${port}`;
  if (!https) {
    const reached = await tcp(host, port);
    if (reached !== true) return { name: 'transport', status: 'failed', detail: `cannot reach ${where}: ${reached}`, raw: { url: baseUrl, error: reached } };
    if (!allowPrivate) return { name: 'transport', status: 'failed', detail: `plain http to ${where}: the connector calls https addresses only (ALLOW_PRIVATE_PROVIDER_URLS is off)`, raw: { url: baseUrl, tls: false } };
    return isLocalHost(host)
      ? { name: 'transport', status: 'passed', detail: `plain http: emulator/loopback at ${where} (no TLS chain to check)`, raw: { url: baseUrl, tls: false } }
      : { name: 'transport', status: 'failed', detail: `plain http to the public host ${where}: the credentials would travel in clear`, raw: { url: baseUrl, tls: false } };
  }
  return new Promise((resolve) => {
    // The handshake is only looked at, nothing is sent: an untrusted chain is read and reported
    // (the calls themselves keep Node's verification).
    const s = tlsConnect({ host, port, servername: isIP(host) ? undefined : host, timeout: CONNECT_TIMEOUT_MS, rejectUnauthorized: false });
    const done = (step: RehearsalStep) => { s.destroy(); resolve(step); };
    s.once('secureConnect', () => {
      const chain = chainOf(s.getPeerCertificate(true));
      const raw = { url: baseUrl, protocol: s.getProtocol(), authorized: s.authorized, error: s.authorizationError ?? null, chain };
      const names = chain.map((c) => c.subject).join(' <- ');
      done(s.authorized
        ? { name: 'transport', status: 'passed', detail: `TLS ${s.getProtocol() ?? ''}: ${names}; root ${chain.at(-1)?.subject ?? '?'} trusted by this system`, raw }
        : { name: 'transport', status: 'failed', detail: `TLS chain not trusted (${String(s.authorizationError)}): ${names}`, raw });
    });
    s.once('timeout', () => done({ name: 'transport', status: 'failed', detail: `cannot reach ${where}: no TLS handshake within ${CONNECT_TIMEOUT_MS / 1000} s`, raw: { url: baseUrl } }));
    s.once('error', (e: NodeJS.ErrnoException) => done({ name: 'transport', status: 'failed', detail: `cannot reach ${where}: ${e.code ?? e.message}`, raw: { url: baseUrl, error: e.code ?? e.message } }));
  });
}

function chainOf(cert: DetailedPeerCertificate): { subject: string; issuer: string; validTo: string; fingerprint256: string }[] {
  const out: { subject: string; issuer: string; validTo: string; fingerprint256: string }[] = [];
  let c: DetailedPeerCertificate | undefined = cert;
  const seen = new Set<string>();
  while (c && c.fingerprint256 && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256);
    out.push({ subject: String(c.subject?.CN ?? c.subject?.O ?? '?'), issuer: String(c.issuer?.CN ?? c.issuer?.O ?? '?'), validTo: c.valid_to, fingerprint256: c.fingerprint256 });
    c = c.issuerCertificate;
  }
  return out;
}

function tcp(host: string, port: number): Promise<true | string> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host, port, timeout: CONNECT_TIMEOUT_MS });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('timeout', () => { s.destroy(); resolve(`no connection within ${CONNECT_TIMEOUT_MS / 1000} s`); });
    s.once('error', (e: NodeJS.ErrnoException) => { s.destroy(); resolve(e.code ?? e.message); });
  });
}
