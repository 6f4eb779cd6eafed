import type { Queryable } from '../../db/client.js';
import { statement } from '../../db/statement.js';
import type { PayoutStatus } from '../../generated/prisma/enums.js';
import { transfersSql } from '../ledger/fragments.js';
import type { MerchantFeeColumns } from '../merchant/fees.js';
import type { Claimed, Deferred } from '../operations/lifecycle.js';
import type { CardTokenProvider, ProviderData } from '../providers/connector.js';
import { routedConnectorsSql, type ConnectorSnapshot, type Routing } from '../providers/registry.js';
import { FINAL_PAYOUT_STATUSES, IllegalPayoutTransition, payoutSourcesOf } from './payout.states.js';
import { PAYOUT_COLUMNS, type PayoutRow } from './payout.view.js';

/**
 * The payouts' SQL (hot, money statements: plain SQL with named or positional parameters), each
 * taking the Queryable it runs on: the caller's transaction, or the pool outside one.
 */

export interface LockedMerchant extends MerchantFeeColumns {
  status: 'ACTIVE' | 'BANNED';
  verified: boolean;
  dailyLimit: string | null;
  monthlyLimit: string | null;
  moderationThreshold: string | null;
  maxCard: string;
  maxSbp: string;
  accountId: string | null;
  accountType: 'CARD' | 'SBP' | null;
  accountStatus: string | null;
  accountEnc: string | null;
  /** A tokenized card account's provider (docs/adr/0070): its card is named by that provider's token. */
  accountTokenProvider: CardTokenProvider | null;
  accountMasked: string | null;
  accountHolder: string | null;
  accountBank: string | null;
  /** Whether the SBP bank asked for (or the account's bank) is an active member; null: unknown bank. */
  bankActive: boolean | null;
  /** The request already made with this order_id, if any (replay or 422). */
  priorRequestId: string | null;
  priorRequestHash: string | null;
  /** The merchant's stored routing, its mode, and the rows of the connectors it names (the direction's check, same round trip). */
  routing: Partial<Routing> | null;
  live: boolean;
  connectorRows: ConnectorSnapshot[];
}

// FOR NO KEY UPDATE OF m: serialises this merchant's payout requests (limits, order_id) without
// blocking inserts elsewhere whose foreign keys only take KEY SHARE on the merchant row. The
// stored payout account ($2) and the SBP bank ($3, else the account's) come in the same round trip.
const LOCK_MERCHANT_SQL = `
SELECT m.status, m.verified, m.payout_daily_limit::text AS "dailyLimit", m.payout_monthly_limit::text AS "monthlyLimit",
       m.moderation_threshold::text AS "moderationThreshold", m.payout_max_card::text AS "maxCard",
       m.payout_max_sbp::text AS "maxSbp",
       m.payment_card_percent::text AS "paymentCardPercent", m.payment_card_fixed::text AS "paymentCardFixed",
       m.payment_sbp_percent::text AS "paymentSbpPercent", m.payment_sbp_fixed::text AS "paymentSbpFixed",
       m.payout_card_percent::text AS "payoutCardPercent", m.payout_card_fixed::text AS "payoutCardFixed",
       m.payout_sbp_percent::text AS "payoutSbpPercent", m.payout_sbp_fixed::text AS "payoutSbpFixed",
       a.id AS "accountId", a.type AS "accountType", a.status AS "accountStatus", a.identifier_enc AS "accountEnc",
       a.token_provider AS "accountTokenProvider", a.identifier_masked AS "accountMasked", a.card_holder AS "accountHolder",
       a.bank_member_id::text AS "accountBank",
       b.active AS "bankActive", pr.id AS "priorRequestId", pr.request_hash AS "priorRequestHash",
       m.routing, (m.live_merchant_id IS NULL) AS live, ${routedConnectorsSql('m.routing')} AS "connectorRows"
  FROM merchants m
  LEFT JOIN payout_accounts a ON a.id = $2::text AND a.merchant_id = m.id
  LEFT JOIN sbp_banks b ON b.member_id = coalesce($3::bigint, a.bank_member_id)
  LEFT JOIN payout_requests pr ON pr.merchant_id = m.id AND pr.order_id = $4::text
 WHERE m.id = $1 FOR NO KEY UPDATE OF m`;

// Request, its payouts and their PAYOUT_LOCK ledger transfers with the balance move, in one
// round trip (the ledger's transfersSql, the transfers built by postings.payoutCreated). ON
// CONFLICT DO NOTHING: when the same order_id committed first, nothing is inserted and the
// caller answers with the winner's payouts. The balances CHECK refuses an overdraft (the whole
// statement fails: balance_not_enough); `bal` is 0 only when the merchant has no RUB balance
// row, which the caller turns into a rollback. One transfer per payout, applied once.
export const INSERT_PAYOUTS = statement('payout_insert', `
WITH r AS (
  INSERT INTO payout_requests (id, merchant_id, order_id, request_hash) VALUES (:request_id, :merchant_id, :order_id, :request_hash)
  ON CONFLICT (merchant_id, order_id) DO NOTHING RETURNING id
), p AS (
  INSERT INTO payouts (id, merchant_id, request_id, order_id, kind, status, account_type, payout_account_id,
                       account_masked, account_enc, card_holder, bank_member_id, amount, commission, currency, process_after)
  SELECT u.id, :merchant_id, r.id, :order_id, :kind::"PayoutKind", :status::"PayoutStatus", :account_type::"PayoutAccountType",
         :payout_account_id, :account_masked, :account_enc, :card_holder, :bank_member_id::bigint,
         u.amount::numeric, u.commission::numeric, 'RUB', now() + :delay_ms::int * interval '1 millisecond'
    FROM r, unnest(:ids::text[], :amounts::text[], :commissions::text[]) AS u(id, amount, commission)
  RETURNING id, created_at, amount, commission
), ${transfersSql('p', 'update')}, usage AS (
  INSERT INTO payout_usage AS pu (merchant_id, period, period_start, amount)
  SELECT :merchant_id, x.period, x.start, t.total
    FROM (SELECT sum(amount) AS total FROM p HAVING count(*) > 0) t,
         (VALUES ('D', (now() AT TIME ZONE :tz::text)::date),
                 ('M', date_trunc('month', now() AT TIME ZONE :tz::text)::date)) AS x(period, start)
  ON CONFLICT (merchant_id, period, period_start) DO UPDATE SET amount = pu.amount + EXCLUDED.amount
  RETURNING 1
)
SELECT p.id, p.created_at, (SELECT count(*) FROM lb)::int AS bal FROM p`);

/**
 * What counts against the limits today and this month in the service time zone (payouts not
 * FAIL/ERROR/DECLINED), from the running totals: two rows whatever the merchant's volume. Read
 * in its own statement AFTER the merchant lock, so its snapshot sees every payout committed by
 * the requests that held the lock before (a subquery of the locking statement would not).
 */
export async function payoutUsage(c: Queryable, merchantId: string, tz: string): Promise<{ day: string; month: string }> {
  const r = await c.query<{ day: string; month: string }>({
    name: 'payout_usage_read',
    text: `SELECT coalesce(sum(amount) FILTER (WHERE period = 'D'), 0)::text AS day,
                  coalesce(sum(amount) FILTER (WHERE period = 'M'), 0)::text AS month
             FROM payout_usage
            WHERE merchant_id = $1
              AND ((period = 'D' AND period_start = (now() AT TIME ZONE $2::text)::date)
                OR (period = 'M' AND period_start = date_trunc('month', now() AT TIME ZONE $2::text)::date))`,
    values: [merchantId, tz],
  });
  return r.rows[0]!;
}

/** Locks the merchant of a payout request (see LOCK_MERCHANT_SQL) with what the request's checks read. */
export async function lockRequestingMerchant(
  c: Queryable, merchantId: string, accountId: string | null, bankMemberId: string | null, orderId: string | null,
): Promise<LockedMerchant | undefined> {
  return (await c.query<LockedMerchant>({ name: 'payout_lock_merchant', text: LOCK_MERCHANT_SQL, values: [merchantId, accountId, bankMemberId, orderId] })).rows[0];
}

/** The request stored under this order_id, if any. */
export async function requestOfOrder(c: Queryable, merchantId: string, orderId: string): Promise<{ id: string; request_hash: string } | undefined> {
  const r = await c.query<{ id: string; request_hash: string }>(
    { name: 'payout_replay', text: 'SELECT id, request_hash FROM payout_requests WHERE merchant_id = $1 AND order_id = $2', values: [merchantId, orderId] },
  );
  return r.rows[0];
}

/** A request's payouts in split order. */
export async function payoutsOfRequest(c: Queryable, requestId: string): Promise<PayoutRow[]> {
  return (await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE request_id = $1 ORDER BY id COLLATE "C"`, [requestId])).rows;
}

/** The merchant's payout by id, or the first of the request with this order_id. */
export async function findPayout(c: Queryable, merchantId: string, p: { id: string } | { orderId: string }): Promise<PayoutRow | undefined> {
  const r = 'id' in p
    ? await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1 AND merchant_id = $2`, [p.id, merchantId])
    : await c.query<PayoutRow>(
      `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE merchant_id = $1 AND order_id = $2 ORDER BY id COLLATE "C" LIMIT 1`,
      [merchantId, p.orderId],
    );
  return r.rows[0];
}

/** The operator's list, newest first, optionally by status, merchant and live or test merchants. */
export async function listPayouts(
  c: Queryable, filter: { status?: string; merchantId?: string; limit?: number; merchantKind?: 'live' | 'test' },
): Promise<PayoutRow[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (filter.merchantKind) {
    where.push(`EXISTS (SELECT 1 FROM merchants m WHERE m.id = payouts.merchant_id AND m.live_merchant_id IS ${filter.merchantKind === 'test' ? 'NOT ' : ''}NULL)`);
  }
  if (filter.status) { values.push(filter.status); where.push(`status = $${values.length}::"PayoutStatus"`); }
  if (filter.merchantId) { values.push(filter.merchantId); where.push(`merchant_id = $${values.length}`); }
  values.push(filter.limit ?? 100);
  const r = await c.query<PayoutRow>(
    `SELECT ${PAYOUT_COLUMNS} FROM payouts ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY created_at DESC, id DESC LIMIT $${values.length}`, values,
  );
  return r.rows;
}

/** A payout locked (FOR UPDATE) by our id, or by its connector and reference; null when there is none. */
export async function lockPayout(c: Queryable, target: { id: string } | { connector: string; ref: string }): Promise<PayoutRow | null> {
  return ('id' in target
    ? await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1 FOR UPDATE`, [target.id])
    : await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE connector = $1 AND provider_ref = $2 FOR UPDATE`, [target.connector, target.ref])).rows[0] ?? null;
}

/** A payout as it is now, unlocked. */
export async function readPayout(c: Queryable, id: string): Promise<PayoutRow | null> {
  return (await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS}, provider_data FROM payouts WHERE id = $1`, [id])).rows[0] ?? null;
}

/** A claimed payout with its reconciliation state. */
export type WorkRow = PayoutRow & Claimed;

/**
 * Claims up to `batch` due PROCESS payouts under a lease of `leaseMs` (SKIP LOCKED: any number
 * of workers share the work). The due moment is payouts_due_idx's expression (a partial index of
 * PROCESS payouts): an idle poll reads one index page; the conditions after it are the exact rule.
 */
export async function claimDuePayouts(c: Queryable, batch: number, leaseMs: number): Promise<WorkRow[]> {
  const claimed = await c.query<PayoutRow & { sent_at: Date | null; check_attempts: number }>(
    `UPDATE payouts SET lease_until = now() + $2::int * interval '1 second', updated_at = now()
      WHERE id IN (SELECT id FROM payouts
                    WHERE status = 'PROCESS' AND greatest(process_after, next_check_at, lease_until) <= now()
                      AND process_after <= now() AND (lease_until IS NULL OR lease_until < now())
                      AND (next_check_at IS NULL OR next_check_at <= now())
                    ORDER BY greatest(process_after, next_check_at, lease_until) LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING ${PAYOUT_COLUMNS}, provider_data, sent_at, check_attempts`,
    [batch, Math.ceil(leaseMs / 1000)],
  );
  return claimed.rows.map(({ sent_at, check_attempts, ...row }) => ({ ...row, sentAt: sent_at, checkAttempts: check_attempts }));
}

/** Gives back the leases of payouts claimed but never worked on (a worker stopping). */
export async function releasePayoutClaims(c: Queryable, ids: string[]): Promise<void> {
  if (ids.length > 0) await c.query(`UPDATE payouts SET lease_until = NULL WHERE id = ANY($1::text[]) AND status = 'PROCESS'`, [ids]);
}

/** On record with the connector about to be called, before the call. */
export async function markPayoutSent(c: Queryable, id: string, connector: string): Promise<void> {
  await c.query('UPDATE payouts SET connector = $2, sent_at = now() WHERE id = $1', [id, connector]);
}

/**
 * No final answer: a PROCESS payout keeps what was heard and is due again after `delayMs`; the
 * lease goes. Null when it is no longer PROCESS.
 */
export async function deferPayout(c: Queryable, id: string, ref: string | null, delayMs: number, data: ProviderData | null = null): Promise<Deferred | null> {
  const d = await c.query<{ sent_at: Date | null; merchant_id: string; connector: string | null; provider_ref: string | null }>(
    `UPDATE payouts SET provider_ref = coalesce($2, provider_ref), provider_data = coalesce($4::jsonb, provider_data), lease_until = NULL,
            next_check_at = now() + $3::int * interval '1 millisecond', check_attempts = check_attempts + 1, updated_at = now()
      WHERE id = $1 AND status = 'PROCESS' RETURNING sent_at, merchant_id, connector, provider_ref`,
    [id, ref, delayMs, data === null ? null : JSON.stringify(data)]);
  const x = d.rows[0];
  return x ? { merchantId: x.merchant_id, connector: x.connector, ref: x.provider_ref, sentAt: x.sent_at } : null;
}

/**
 * An answer that is not final heard outside the worker's question (a notification, a read for the
 * attention list): a PROCESS payout keeps the reference and the provider's state it carries; its
 * lease and next check stay as they are.
 */
export async function keepPayoutHeard(c: Queryable, id: string, ref: string | null, data: ProviderData | null): Promise<void> {
  if (ref === null && data === null) return;
  await c.query(`UPDATE payouts SET provider_ref = coalesce($2, provider_ref), provider_data = coalesce($3::jsonb, provider_data), updated_at = now()
                  WHERE id = $1 AND status = 'PROCESS'`, [id, ref, data === null ? null : JSON.stringify(data)]);
}

/** A payout that moved no money no longer counts against the limits of the day and month it was made in (`tz`: the service's). */
export async function releaseUsage(c: Queryable, id: string, amount: string, tz: string): Promise<void> {
  await c.query({
    name: 'payout_usage_release',
    text: `UPDATE payout_usage u SET amount = greatest(u.amount - $2::numeric, 0)
             FROM payouts p
            WHERE p.id = $1 AND u.merchant_id = p.merchant_id
              AND ((u.period = 'D' AND u.period_start = (p.created_at AT TIME ZONE $3::text)::date)
                OR (u.period = 'M' AND u.period_start = date_trunc('month', p.created_at AT TIME ZONE $3::text)::date))`,
    values: [id, amount, tz],
  });
}

/** Where the merchant's payout webhooks go (null: nowhere). */
export async function payoutWebhookUrl(c: Queryable, merchantId: string): Promise<string | null> {
  const m = await c.query<{ payout_webhook_url: string | null }>('SELECT payout_webhook_url FROM merchants WHERE id = $1', [merchantId]);
  return m.rows[0]?.payout_webhook_url ?? null;
}

/**
 * The one statement that changes a payout's status: conditional on the from-states of the
 * transition table, row count checked. A payout not in one of them (whatever the caller read
 * before) is an IllegalPayoutTransition (409) naming its current status, and nothing changes.
 * A final status also sets finished_at and drops the lease; PROCESS sets when it is due; the
 * provider's reference, when given, is kept.
 */
export async function transitionPayout(
  c: Queryable, id: string, expected: PayoutStatus, to: PayoutStatus,
  o: { failureReason?: string | null; processAfterMs?: number; providerRef?: string | null; data?: ProviderData | null } = {},
): Promise<void> {
  const final = FINAL_PAYOUT_STATUSES.includes(to);
  const r = await c.query(
    `UPDATE payouts SET status = $2::"PayoutStatus", failure_reason = coalesce($4, failure_reason), provider_ref = coalesce($7, provider_ref),
            provider_data = coalesce($8::jsonb, provider_data),
            finished_at = CASE WHEN $5 THEN now() ELSE finished_at END,
            lease_until = CASE WHEN $5 THEN NULL ELSE lease_until END,
            process_after = CASE WHEN $6::int IS NULL THEN process_after ELSE now() + $6::int * interval '1 millisecond' END,
            updated_at = now()
      WHERE id = $1 AND status = ANY($3::"PayoutStatus"[])`,
    [id, to, payoutSourcesOf(to), o.failureReason ?? null, final, o.processAfterMs ?? null, o.providerRef ?? null, o.data ? JSON.stringify(o.data) : null],
  );
  if (r.rowCount === 1) return;
  const cur = await c.query<{ status: PayoutStatus }>(`SELECT status::text FROM payouts WHERE id = $1`, [id]);
  throw new IllegalPayoutTransition(cur.rows[0]?.status ?? expected, to);
}

