import type { Queryable } from '../../db/client.js';

/** A cabinet account: the merchant's own login (`userId` null, the owner) or a team member. */
export interface CabinetAccount { merchantId: string; userId: string | null }

/**
 * Ends every cabinet session of one account, in the caller's transaction: after its password
 * changed or its two-factor sign-in was reset, a session opened before is not that person any
 * more. Returns how many ended.
 */
export async function endAccountSessions(c: Queryable, a: CabinetAccount): Promise<number> {
  const r = a.userId === null
    ? await c.query('DELETE FROM cabinet_sessions WHERE merchant_id = $1 AND user_id IS NULL', [a.merchantId])
    : await c.query('DELETE FROM cabinet_sessions WHERE user_id = $1', [a.userId]);
  return r.rowCount ?? 0;
}
