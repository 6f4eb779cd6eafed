import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export class UnsafeUrlError extends Error {}

// The IPv6 global unicast block (2000::/3); everything outside it (IPv4-compatible ::/96,
// ::ffff:0:0:0/96, site-local fec0::/10, unique-local, link-local...) is never a receiver.
const GLOBAL_V6 = ipaddr.IPv6.parse('2000::');

/**
 * True only for a global unicast address, as ipaddr.js classifies it (every special-purpose
 * range of IPv4 and IPv6). An IPv4-mapped IPv6 address is the IPv4 address it maps to (the
 * socket connects to that); NAT64, 6to4 and Teredo addresses embed an IPv4 address a gateway
 * would forward to, so they are refused whatever they embed. Anything unparsable is refused.
 */
export function isGlobalUnicast(ip: string): boolean {
  let a: ipaddr.IPv4 | ipaddr.IPv6;
  try { a = ipaddr.parse(ip); } catch { return false; }
  if (a.kind() === 'ipv6') {
    const v6 = a as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return isGlobalUnicast(v6.toIPv4Address().toString());
    return v6.range() === 'unicast' && v6.match(GLOBAL_V6, 3);
  }
  return a.range() === 'unicast';
}

/** Anything that is not a global unicast address (see isGlobalUnicast). */
export const isPrivateAddress = (ip: string): boolean => !isGlobalUnicast(ip);

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

/** The code of the error guardedLookup answers for a name that resolves to a private address. */
export const UNSAFE_ADDRESS = 'EUNSAFEADDR';

/**
 * DNS lookup for a socket that refuses private, loopback and link-local answers: the address
 * checked is the address connected to (no window for DNS rebinding between a check and the connect).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, options, (err, address: string | LookupAddress[], family?: number) => {
    if (err) return callback(err, address as string, family);
    const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
    if (list.length === 0 || list.some((a) => isPrivateAddress(a))) {
      const e = Object.assign(new Error(`${hostname} resolves to a private or loopback address`), { code: UNSAFE_ADDRESS });
      return callback(e as NodeJS.ErrnoException, address as string, family);
    }
    (callback as (e: null, a: string | LookupAddress[], f?: number) => void)(null, address, family);
  });
};

/**
 * A host a socket would reach without a DNS lookup that is private: `localhost` names and IP
 * literals outside global unicast (a connect to an IP literal never calls the lookup).
 */
export function isPrivateLiteralHost(u: URL): boolean {
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host));
}
