import type { Queryable } from '../../db/client.js';
import type { AuthMerchant } from './merchant-guard.js';

/**
 * Authentication and a read in one round trip, for the hot read endpoints (bill/status,
 * merchant/balance): the merchant whose API token hashes to $1, and the rows `read` gives for it.
 * `read` names the merchant as `m.id`; its own parameters start at $2; `orderBy` names the column
 * of the read the rows come in the order of (a subquery's own ORDER BY is not kept). The auth hook's checks
 * (IP allow-list, ban, subscription) run on the merchant afterwards, before anything read is
 * used, exactly as on any other route (src/http/merchant-auth.ts acceptMerchant).
 */
export async function readWithToken<T extends object>(
  c: Queryable, q: { name: string; read: string; values: unknown[]; orderBy?: string }, tokenHash: string,
): Promise<{ merchant: AuthMerchant; rows: T[] } | null> {
  const r = await c.query<AuthColumns & { auth_row: boolean | null } & T>({
    // Named: prepared once per pooled connection, like the hook's own `merchant_auth`.
    name: q.name,
    text: `SELECT m.id AS auth_id, m.name AS auth_name, m.status AS auth_status, m.verified AS auth_verified,
                  m.subscription AS auth_subscription, m.grant_refunds AS auth_grant_refunds,
                  m.grant_regular_payouts AS auth_grant_regular_payouts, m.api_ip_allowlist AS auth_api_ip_allowlist, r.*
             FROM merchants m
             LEFT JOIN LATERAL (SELECT true AS auth_row, x.* FROM (${q.read}) x) r ON true
            WHERE m.api_token_hash = $1${q.orderBy ? ` ORDER BY r.${q.orderBy}` : ''}`,
    values: [tokenHash, ...q.values],
  });
  const first = r.rows[0];
  if (!first) return null;
  const merchant: AuthMerchant = {
    id: first.auth_id, name: first.auth_name, status: first.auth_status, verified: first.auth_verified,
    subscription: first.auth_subscription, grantRefunds: first.auth_grant_refunds,
    grantRegularPayouts: first.auth_grant_regular_payouts, apiIpAllowlist: first.auth_api_ip_allowlist,
  };
  const rows: T[] = [];
  for (const row of r.rows) {
    if (!row.auth_row) continue;
    const { auth_id, auth_name, auth_status, auth_verified, auth_subscription, auth_grant_refunds, auth_grant_regular_payouts, auth_api_ip_allowlist, auth_row, ...rest } = row;
    rows.push(rest as unknown as T);
  }
  return { merchant, rows };
}

interface AuthColumns {
  auth_id: string; auth_name: string; auth_status: AuthMerchant['status']; auth_verified: boolean;
  auth_subscription: AuthMerchant['subscription']; auth_grant_refunds: boolean; auth_grant_regular_payouts: boolean;
  auth_api_ip_allowlist: string[] | null;
}
