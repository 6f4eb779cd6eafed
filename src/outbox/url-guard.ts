import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export class UnsafeUrlError extends Error {}

/** Loopback, private, link-local, CGNAT, multicast, unspecified and similar ranges. */
export function isPrivateAddress(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19)) || a >= 224;
  }
  if (v === 6) {
    const s = ip.toLowerCase();
    if (s === '::' || s === '::1') return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(s);
    if (mapped) return isPrivateAddress(mapped[1]!);
    return /^(fc|fd|fe8|fe9|fea|feb|ff)/.test(s);
  }
  return true;
}

/** http(s) only, with a host; no credentials in the URL. Throws UnsafeUrlError. */
export function checkUrlShape(raw: string): URL {
  let u: URL;
  try { u = new URL(raw); } catch { throw new UnsafeUrlError('must be a valid URL'); }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UnsafeUrlError('must be an http or https URL');
  if (!u.hostname) throw new UnsafeUrlError('must have a host');
  if (u.username || u.password) throw new UnsafeUrlError('must not carry credentials');
  if (raw.length > 2048) throw new UnsafeUrlError('is too long');
  return u;
}

/**
 * The outbound URL guard: http(s) only; the host resolved and private, loopback and
 * link-local addresses refused unless allowPrivate. Run when a URL is saved and again at send
 * time (DNS can change). Returns the resolved addresses.
 */
export async function assertSafeUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const u = checkUrlShape(raw);
  if (allowPrivate) return u;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) throw new UnsafeUrlError('must not point to a private or loopback address');
  const addrs = isIP(host) ? [{ address: host }] : await lookup(host, { all: true }).catch(() => { throw new UnsafeUrlError('host does not resolve'); });
  if (addrs.length === 0 || addrs.some((a) => isPrivateAddress(a.address))) {
    throw new UnsafeUrlError('must not point to a private or loopback address');
  }
  return u;
}
