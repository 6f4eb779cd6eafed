import type { Queryable } from '../../db/client.js';
import type { IssuedToken } from './merchant.service.js';

/**
 * Test mode (PROVIDERS.md "Test mode"; docs/adr/0029-test-mode-as-a-test-twin.md): a merchant's test token belongs to
 * its "test twin", a second merchants row with `live_merchant_id` set. Test bills, payments,
 * payouts, refunds, ledger accounts, balances and postbacks are the twin's, so they are apart
 * from the live ones wherever a query names its merchant. The database keeps the twin's
 * settings equal to the live merchant's (trigger merchants_sync_test_twin) and its routing on
 * the sandbox (CHECK merchants_test_twin_sandbox_only); the live merchant's shops serve both.
 */

/** Twins' emails: unique per row, in a reserved domain nobody can sign in with (no password). */
export const TEST_TWIN_EMAIL_DOMAIN = 'test-mode.invalid';

/** A twin's routing: the sandbox, always (CHECK merchants_test_twin_sandbox_only). */
export const TEST_TWIN_ROUTING = { payment_card: ['sandbox'], payment_sbp: ['sandbox'], payout_card: ['sandbox'], payout_sbp: ['sandbox'] };

/** The settings a twin copies from its live merchant when created (then kept by the trigger). */
const COPIED = `name, status, verified, subscription, grant_refunds, grant_regular_payouts, payout_daily_limit,
  payout_monthly_limit, moderation_threshold, payout_max_card, payout_max_sbp, payment_card_percent, payment_card_fixed,
  payment_sbp_percent, payment_sbp_fixed, payout_card_percent, payout_card_fixed, payout_sbp_percent, payout_sbp_fixed,
  api_ip_allowlist, payout_webhook_url`;

/**
 * Inserts the test twin of a live merchant with the given token, unless it has one (or is not
 * a live merchant). Returns true when inserted. Balances are the caller's (ensureBalances).
 */
export async function insertTestTwin(c: Queryable, liveMerchantId: string, twinId: string, token: Pick<IssuedToken, 'apiTokenHash' | 'apiTokenEnc'>): Promise<boolean> {
  const r = await c.query(
    `INSERT INTO merchants (id, live_merchant_id, email, api_token_hash, api_token_enc, routing, ${COPIED})
     SELECT $1, m.id, $2, $3, $4, '${JSON.stringify(TEST_TWIN_ROUTING)}'::jsonb, ${COPIED.split(',').map((x) => `m.${x.trim()}`).join(', ')}
       FROM merchants m WHERE m.id = $5 AND m.live_merchant_id IS NULL
     ON CONFLICT (live_merchant_id) DO NOTHING`,
    [twinId, `${twinId.toLowerCase()}.${liveMerchantId.toLowerCase()}@${TEST_TWIN_EMAIL_DOMAIN}`, token.apiTokenHash, token.apiTokenEnc, liveMerchantId],
  );
  return (r.rowCount ?? 0) > 0;
}
