import ipaddr from 'ipaddr.js';
import { DomainError } from '../../errors.js';

/** Most entries a merchant's API allow-list may hold. */
export const MAX_ALLOWLIST = 100;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * One allow-list entry, normalised: an address (`203.0.113.7`, `2001:db8::1`) or a CIDR
 * (`198.51.100.0/24`, `2001:db8::/32`); null when it is neither. An IPv4-mapped IPv6 address
 * is kept as IPv4.
 */
export function normaliseEntry(raw: string): string | null {
  const s = raw.trim();
  try {
    if (s.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(s);
      const a = addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96
        ? [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96] as const : [addr, bits] as const;
      // The network address of the range, so "198.51.100.7/24" is stored as "198.51.100.0/24".
      const net = a[0].kind() === 'ipv4'
        ? ipaddr.IPv4.networkAddressFromCIDR(`${a[0].toString()}/${a[1]}`)
        : ipaddr.IPv6.networkAddressFromCIDR(`${a[0].toString()}/${a[1]}`);
      return `${net.toString()}/${a[1]}`;
    }
    if (!ipaddr.isValid(s)) return null;
    return ipaddr.process(s).toString();
  } catch {
    return null;
  }
}

function rangeOf(entry: string): Range | null {
  try {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    const a = ipaddr.process(entry);
    return [a, a.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

/** True when `ip` is in one of `list`'s addresses or ranges; an empty or absent list allows any. */
export function ipAllowed(list: readonly string[] | null | undefined, ip: string): boolean {
  if (!list || list.length === 0) return true;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  return list.some((entry) => {
    const r = rangeOf(entry);
    return r !== null && r[0].kind() === addr.kind() && addr.match(r);
  });
}

/** 403 api:error.ip_access_denied unless the client address is on the merchant's allow-list. */
export function assertIpAllowed(m: { apiIpAllowlist: readonly string[] | null }, ip: string): void {
  if (!ipAllowed(m.apiIpAllowlist, ip)) throw new DomainError('ip_access_denied');
}
