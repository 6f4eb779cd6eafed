import { DomainError } from '../../errors.js';

/** The merchant a request acts for, as the auth hook loads it. */
export interface AuthMerchant {
  id: string;
  name: string;
  status: 'ACTIVE' | 'BANNED';
  verified: boolean;
  subscription: 'ACTIVE' | 'INACTIVE' | 'NONE';
  grantRefunds: boolean;
  grantRegularPayouts: boolean;
  /** Addresses/CIDRs the API accepts this merchant from; null: any. */
  apiIpAllowlist: string[] | null;
}

export const AUTH_MERCHANT_COLUMNS = `id, name, status, verified, subscription,
  grant_refunds AS "grantRefunds", grant_regular_payouts AS "grantRegularPayouts", api_ip_allowlist AS "apiIpAllowlist"`;

/**
 * The merchant state checks every endpoint runs, in the spec's order of severity.
 * `subscription: false` for endpoints whose spec lists only merchant_banned.
 */
export function assertMerchantUsable(m: Pick<AuthMerchant, 'status' | 'subscription'>, opts: { subscription: boolean }): void {
  if (m.status === 'BANNED') throw new DomainError('merchant_banned');
  if (!opts.subscription) return;
  if (m.subscription === 'NONE') throw new DomainError('merchant_subscription_not_found');
  if (m.subscription === 'INACTIVE') throw new DomainError('merchant_subscription_inactive');
}
