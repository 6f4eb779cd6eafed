import type { ApiScope } from '../domain/api-key/api-key.scopes.js';

/**
 * Which restricted-key scopes each /api/v1 endpoint accepts (any one of them). The
 * merchant's live token is not limited by this table. One table, as the cabinet's role table:
 * an endpoint not listed here accepts no restricted key (fail closed), and
 * test/api/restricted-keys.test.ts fails on a merchant-API route missing from it.
 * `any`: every valid key (the SBP bank dictionary is public knowledge).
 *
 * A write scope also reads what it writes (as Stripe's): a bills:write integration polls the
 * bills it creates, a payouts:write one its payouts. Refunds have no read scope of their own:
 * their reads (status, search) are payments:read, or refunds:write for the integration that
 * makes them.
 */
export const ENDPOINT_SCOPES: Readonly<Record<string, readonly ApiScope[] | 'any'>> = {
  '/api/v1/bill/create': ['bills:write'],
  '/api/v1/bill/toggle_activity': ['bills:write'],
  '/api/v1/bill/status': ['bills:read', 'bills:write'],
  '/api/v1/bill/search': ['bills:read', 'bills:write'],
  '/api/v1/bill/payments': ['bills:read', 'bills:write'],
  '/api/v1/payment/status': ['payments:read'],
  '/api/v1/payment/search': ['payments:read'],
  // Saved cards (docs/adr/0074): the list is a read; charging and revoking are the merchant's own token's only.
  '/api/v1/payment/methods': ['payments:read'],
  '/api/v1/payment/charge': [],
  '/api/v1/payment/methods/revoke': [],
  '/api/v1/refund/full/create': ['refunds:write'],
  '/api/v1/refund/partial/create': ['refunds:write'],
  '/api/v1/refund/status': ['payments:read', 'refunds:write'],
  '/api/v1/refund/search': ['payments:read', 'refunds:write'],
  '/api/v1/payout/personal/create': ['payouts:write'],
  '/api/v1/payout/regular/create': ['payouts:write'],
  '/api/v1/payout/status': ['payouts:read', 'payouts:write'],
  '/api/v1/payout/search': ['payouts:read', 'payouts:write'],
  '/api/v1/merchant/balance': ['balance:read'],
  '/api/v1/payout/dictionaries/sbp_banks': 'any',
};

/** True when a key holding `scopes` may call the endpoint registered at `url`. */
export function scopeAllows(url: string, scopes: readonly string[]): boolean {
  const needed = ENDPOINT_SCOPES[url.replace(/\/+$/, '')];
  if (needed === undefined) return false;
  if (needed === 'any') return true;
  return needed.some((s) => scopes.includes(s));
}
