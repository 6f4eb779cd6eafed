import { createHmac } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { DomainError, NotFoundError, UnauthorizedActionError, ValidationError } from '../../errors.js';
import { keysetPage, type KeysetPage, type KeysetParams } from '../../db/keyset.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { isValidAmount } from '../../lib/money.js';
import { enqueueEvent } from '../../outbox/events.js';
import { ledgerParams, transfersSql } from '../ledger/fragments.js';
import { statement } from '../../db/statement.js';
import { ledgerError, post } from '../ledger/ledger.js';
import { payoutCreated, payoutNotPaidAfterAll, payoutPaidAfterAll, payoutReturned, payoutSucceeded } from '../ledger/postings.js';
import { recordConflict, type ProviderWord } from '../providers/conflict.js';
import { Lifecycle, type Applied, type Claimed, type LifecycleObserver, type OperationKind, type Target as OperationTarget } from '../operations/lifecycle.js';
import { commissionFor, type MerchantFeeColumns } from '../merchant/fees.js';

/** payout/personal/create, parsed: to a stored payout account of the merchant. */
export interface PersonalPayoutInput { amount: Decimal; payoutAccountId: string; orderId?: string }

/** payout/regular/create, parsed: the identifier normalised (card digits or +7XXXXXXXXXX). */
export interface RegularPayoutInput {
  amount: Decimal;
  accountType: 'CARD' | 'SBP';
  identifier: string;
  masked: string;
  cardHolder: string | null;
  bankMemberId: string | null;
  orderId: string | undefined;
}

/** Regular payouts are granted per merchant: 403 before anything else is looked at. */
export function assertRegularGrant(merchant: PayoutMerchant): void {
  if (merchant.grantRegularPayouts !== true) throw new UnauthorizedActionError();
}
import { assertTransition, FINAL_PAYOUT_STATUSES, IllegalPayoutTransition, payoutSourcesOf } from './payout.states.js';
import type { PayoutStatus } from '../../generated/prisma/enums.js';
import { adminPayoutView, PAYOUT_COLUMNS, payoutView, payoutWebhookFields, type PayoutRow, type PayoutView } from './payout.view.js';
import { takesCard, type CardTokenProvider, type OperationOutcome } from '../providers/connector.js';
import { ConnectorRegistry, routedConnectorsSql, type ConnectorSnapshot, type Routing } from '../providers/registry.js';
import { isFinal, isNotFound, reconcileDelayMs, type AttentionRow } from '../operations/reconcile.js';

/** The merchant a payout is made for (the API's AuthMerchant, or the cabinet's merchant). */
export interface PayoutMerchant {
  id: string;
  verified?: boolean;
  grantRegularPayouts?: boolean;
}

/** Most payouts one request may be split into; a larger split is refused as invalid_amount. */
export const MAX_SPLIT = 1000;

interface LockedMerchant extends MerchantFeeColumns {
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
const INSERT = statement('payout_insert', `
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
async function usage(c: Queryable, merchantId: string, tz: string): Promise<{ day: string; month: string }> {
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

/** Daily and monthly limits: what is used plus this request. */
function checkLimits(m: LockedMerchant, amount: Decimal, used: { day: string; month: string }): void {
  if (m.dailyLimit !== null && amount.add(used.day).gt(m.dailyLimit)) throw new DomainError('daily_payout_limit_exceeded');
  if (m.monthlyLimit !== null && amount.add(used.month).gt(m.monthlyLimit)) throw new DomainError('monthly_payout_limit_exceeded');
}

/** Where a payout goes, resolved and checked. */
interface Target {
  kind: 'PERSONAL' | 'REGULAR';
  accountType: 'CARD' | 'SBP';
  payoutAccountId: string | null;
  masked: string;
  enc: string;
  cardHolder: string | null;
  bankMemberId: string | null;
  /** A card's naming: its number, or a provider's token (a tokenized account). */
  cardBy?: 'number' | CardTokenProvider;
}

interface CreateRequest {
  kind: 'PERSONAL' | 'REGULAR';
  amount: Decimal;
  orderId: string | undefined;
  /** Normalised parameters: the same order_id with other parameters is refused. */
  hashParts: Record<string, string | null>;
  /** The stored payout account and the SBP bank to read with the merchant lock. */
  accountId: string | null;
  bankMemberId: string | null;
  /** Checks the destination (after the order_id replay) from what the lock query read. */
  resolve(m: LockedMerchant): Target;
  /** Runs in the transaction with the answer, before the commit (the Idempotency-Key record). */
  inTx?: InTx<PayoutView[]>;
}

/** Personal and regular payouts, their moderation and their processing by the provider. */
export class PayoutService {
  /** The payout's part in the provider-operation lifecycle. */
  readonly lifecycle: Lifecycle<PayoutStatus, PayoutRow, PayoutOutcome, WorkRow>;

  constructor(
    private readonly config: Config,
    private readonly db: Db,
    readonly connectors: ConnectorRegistry = new ConnectorRegistry(config, db),
    observer?: LifecycleObserver,
  ) {
    this.lifecycle = new Lifecycle(this.operation(), { pool: db.pool, giveUpMs: config.reconcileGiveUpMs, observer });
  }

  /** payout/personal/create: to a stored payout account of this merchant. */
  async createPersonal(merchant: PayoutMerchant, p: PersonalPayoutInput, inTx?: InTx<PayoutView[]>): Promise<PayoutView[]> {
    const accountId = p.payoutAccountId;
    return this.create(merchant, {
      kind: 'PERSONAL',
      amount: p.amount,
      orderId: p.orderId,
      hashParts: { kind: 'personal', amount: p.amount.toFixed(), account: accountId },
      accountId,
      bankMemberId: null,
      inTx,
      resolve: (a) => {
        if (a.accountId === null) throw new DomainError('payout_account_not_found');
        if (a.accountStatus !== 'ACTIVE') throw new DomainError('payout_account_banned');
        let enc = a.accountEnc;
        if (a.accountType === 'SBP') {
          // An SBP account is paid through its bank, which must be an active SBP member.
          if (a.accountBank === null || a.bankActive !== true) throw new DomainError('direction_not_available');
          enc ??= encrypt(this.config.tokenEncryptionKey, a.accountMasked!);
        }
        if (enc === null) throw new DomainError('direction_not_available');
        return {
          kind: 'PERSONAL', accountType: a.accountType!, payoutAccountId: accountId, masked: a.accountMasked!, enc,
          cardHolder: a.accountType === 'CARD' ? a.accountHolder : null, bankMemberId: a.accountType === 'SBP' ? a.accountBank : null,
          cardBy: a.accountType === 'CARD' ? (a.accountTokenProvider ?? 'number') : undefined,
        };
      },
    });
  }

  /** payout/regular/create: to a card or an SBP phone; needs the merchant's grant. */
  async createRegular(merchant: PayoutMerchant, p: RegularPayoutInput, inTx?: InTx<PayoutView[]>): Promise<PayoutView[]> {
    assertRegularGrant(merchant);
    return this.create(merchant, {
      kind: 'REGULAR',
      amount: p.amount,
      orderId: p.orderId,
      hashParts: {
        kind: 'regular', amount: p.amount.toFixed(), type: p.accountType, account: p.identifier,
        holder: p.cardHolder, bank: p.bankMemberId,
      },
      accountId: null,
      bankMemberId: p.bankMemberId,
      inTx,
      resolve: (m) => {
        if (p.accountType === 'SBP' && m.bankActive !== true) throw new DomainError('direction_not_available');
        return {
          kind: 'REGULAR', accountType: p.accountType, payoutAccountId: null, masked: p.masked,
          enc: encrypt(this.config.tokenEncryptionKey, p.identifier), cardHolder: p.cardHolder, bankMemberId: p.bankMemberId,
          cardBy: p.accountType === 'CARD' ? 'number' : undefined,
        };
      },
    });
  }

  /**
   * The money path, one transaction: lock the merchant (serialises limits and order_id), check,
   * insert the request and its payouts, lock amount + commission per payout in the ledger (the
   * database refuses an overdraft: balance_not_enough, and nothing of the request stays).
   */
  private async create(merchant: PayoutMerchant, req: CreateRequest): Promise<PayoutView[]> {
    if (merchant.verified === false) throw new DomainError('merchant_not_verified');
    if (!isValidAmount(req.amount)) throw new DomainError('invalid_amount');
    const hash = this.requestHash(req.hashParts);
    const tz = this.config.tz;
    return withPgTx(this.db.pool, async (c) => {
      const views = await this.createIn(c, merchant, req, hash, tz);
      await req.inTx?.(c, views);
      return views;
    });
  }

  private async createIn(c: Queryable, merchant: PayoutMerchant, req: CreateRequest, hash: string, tz: string): Promise<PayoutView[]> {
    const m = (await c.query<LockedMerchant>({
      name: 'payout_lock_merchant', text: LOCK_MERCHANT_SQL, values: [merchant.id, req.accountId, req.bankMemberId, req.orderId ?? null],
    })).rows[0];
    if (!m) throw new DomainError('merchant_not_found');
    if (m.status === 'BANNED') throw new DomainError('merchant_banned');
    if (!m.verified) throw new DomainError('merchant_not_verified');
    if (m.priorRequestId) return this.replayOf(c, m.priorRequestId, m.priorRequestHash!, hash);
    const target = req.resolve(m);
    await this.assertDirection(m, target);
    const max = new Decimal(target.accountType === 'CARD' ? m.maxCard : m.maxSbp);
    const parts = splitAmount(req.amount, max);
    if (parts === null) throw new DomainError('invalid_amount');
    if (m.dailyLimit !== null || m.monthlyLimit !== null) checkLimits(m, req.amount, await usage(c, merchant.id, tz));

    // Moderation looks at the whole request, so splitting cannot slip under the threshold.
    const moderate = m.moderationThreshold !== null && req.amount.gt(m.moderationThreshold);
    const status = moderate ? 'MODERATING' : 'PROCESS';
    assertTransition('NEW', status);
    const feeKind = target.accountType === 'CARD' ? 'payout_card' : 'payout_sbp';
    const commissions = parts.map((a) => commissionFor(this.config, m, feeKind, a));
    // Ids sorted, so that ordering by id gives the split order back (replays, status by order_id).
    const ids = parts.map(() => newId()).sort();
    const locks = ids.map((id, i) => payoutCreated({ payoutId: id, merchantId: merchant.id, currency: 'RUB', amount: parts[i]!, commission: commissions[i]! }));
    const ins = await c.query<{ id: string; created_at: Date; bal: number }>(INSERT.bind({
      merchant_id: merchant.id, request_id: newId(), order_id: req.orderId ?? null, request_hash: hash, kind: target.kind, status,
      account_type: target.accountType, payout_account_id: target.payoutAccountId, account_masked: target.masked, account_enc: target.enc,
      card_holder: target.cardHolder, bank_member_id: target.bankMemberId, delay_ms: moderate ? null : this.config.sandboxProcessingDelayMs,
      ids, amounts: parts.map((a) => a.toFixed()), commissions: commissions.map((x) => x.toFixed()), tz,
      ...ledgerParams(merchant.id, 'RUB', locks, 'update'),
    })).catch((e) => { throw ledgerError(e, 'payout request'); });
    if (ins.rowCount === 0) {
      // The same order_id won meanwhile (only reachable without the merchant lock, kept as the last word).
      const replay = await this.replay(c, merchant.id, req.orderId!, hash);
      if (replay) return replay;
      throw new Error('payout request vanished after an order_id conflict');
    }
    if (ins.rows[0]!.bal !== 1) throw new Error(`merchant ${merchant.id} has no RUB balance row`);
    const createdAt = new Map(ins.rows.map((r) => [r.id, r.created_at]));
    return ids.map((id, i) => payoutView({
      id, status, amount: parts[i]!.toFixed(), commission: commissions[i]!.toFixed(), account_masked: target.masked,
      currency: 'RUB', created_at: createdAt.get(id)!,
    }, tz));
  }

  /**
   * Production: a payout goes out only through an enabled connector allowed to move its money
   * (a live merchant's: live-mode only, never the sandbox). With none on the route it is
   * refused before anything is locked (direction_not_available), never left to fail at send.
   * Every profile: a card named by its number goes to a connector that takes numbers (a YooKassa
   * gateway only with payout_pci_dss), a tokenized card to one that takes that provider's tokens
   * (docs/adr/0070); when the route has connectors and none of them can, the payout is refused
   * here, before any money is locked and before any provider hears of it. An empty route outside
   * production is left to the worker, as before.
   */
  private async assertDirection(m: LockedMerchant, target: Target): Promise<void> {
    const production = this.config.profile === 'production';
    if (!production && target.cardBy === undefined) return;
    const route = target.accountType === 'CARD' ? 'payout_card' : 'payout_sbp';
    // Read with the merchant's lock (no round trip of its own): fresh, so a disabled connector counts as gone.
    const routing = this.connectors.routingFor(m.routing, m.live);
    const list = await this.connectors.candidates(routing[route], route, { live: m.live }, m.connectorRows);
    if (list.length === 0) {
      if (production) throw new DomainError('direction_not_available');
      return;
    }
    const by = target.cardBy;
    if (by !== undefined && !list.some((c) => takesCard(c.capabilities, by))) throw new DomainError('direction_not_available');
  }

  /** The same order_id: same parameters -> the stored payouts; other parameters -> 422. */
  private async replay(c: Queryable, merchantId: string, orderId: string, hash: string): Promise<PayoutView[] | null> {
    const r = await c.query<{ id: string; request_hash: string }>(
      { name: 'payout_replay', text: 'SELECT id, request_hash FROM payout_requests WHERE merchant_id = $1 AND order_id = $2', values: [merchantId, orderId] },
    );
    const existing = r.rows[0];
    return existing ? this.replayOf(c, existing.id, existing.request_hash, hash) : null;
  }

  private async replayOf(c: Queryable, requestId: string, storedHash: string, hash: string): Promise<PayoutView[]> {
    if (storedHash !== hash) {
      throw ValidationError.field('order_id', 'The order id has already been used with other parameters.');
    }
    const rows = await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE request_id = $1 ORDER BY id COLLATE "C"`, [requestId]);
    return rows.rows.map((x) => payoutView(x, this.config.tz));
  }

  /** HMAC, not a bare hash: the parameters include full card numbers. */
  private requestHash(parts: Record<string, string | null>): string {
    return createHmac('sha256', this.config.tokenEncryptionKey).update(JSON.stringify(parts)).digest('hex');
  }

  /** payout/status by id, or by order_id (a split request answers its first payout). */
  async status(merchantId: string, p: { id: string } | { orderId: string }): Promise<PayoutView> {
    const r = 'id' in p
      ? await this.db.pool.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1 AND merchant_id = $2`, [p.id, merchantId])
      : await this.db.pool.query<PayoutRow>(
        `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE merchant_id = $1 AND order_id = $2 ORDER BY id COLLATE "C" LIMIT 1`,
        [merchantId, p.orderId],
      );
    const row = r.rows[0];
    if (!row) throw new DomainError('payout_not_found');
    return payoutView(row, this.config.tz);
  }

  /** payout/search: newest first, one keyset page. */
  async search(merchantId: string, params: KeysetParams): Promise<KeysetPage<PayoutView>> {
    // Payouts belong to the merchant, not to a shop: a shop_id filter does not apply.
    const page = await keysetPage<PayoutRow>(this.db.pool, {
      table: 'payouts',
      columns: 'id, status, amount::text AS amount, commission::text AS commission, account_masked, currency, created_at, failure_reason',
      merchantId,
      params: { ...params, shopId: undefined },
    });
    return { ...page, rows: page.rows.map((r) => payoutView(r, this.config.tz)) };
  }

  /** Operator: MODERATING -> PROCESS (the provider picks it up after the sandbox delay). */
  async approve(id: string, inTx?: InTx<{ from: string; to: string; payout: PayoutRow }>) {
    return withPgTx(this.db.pool, async (c) => {
      const row = await this.lockPayout(c, id);
      assertTransition(row.status, 'PROCESS');
      await transitionPayout(c, id, row.status, 'PROCESS', { processAfterMs: this.config.sandboxProcessingDelayMs });
      if (inTx) await inTx(c, { from: row.status, to: 'PROCESS', payout: row });
      return adminPayoutView({ ...row, status: 'PROCESS' }, this.config.tz);
    });
  }

  /** Operator: MODERATING -> DECLINED, the money back to available, the webhook enqueued. */
  async decline(id: string, reason?: string, inTx?: InTx<{ from: string; to: string; payout: PayoutRow }>) {
    return withPgTx(this.db.pool, async (c) => {
      const row = await this.lockPayout(c, id);
      await this.finalize(c, row, 'DECLINED', reason ?? 'declined by the operator');
      if (inTx) await inTx(c, { from: row.status, to: 'DECLINED', payout: row });
      return adminPayoutView({ ...row, status: 'DECLINED' }, this.config.tz);
    });
  }

  /** Operator list, newest first, optionally by status and merchant. */
  /** `merchantKind`: only live merchants' payouts, or only test twins' (test mode's). */
  async list(filter: { status?: string; merchantId?: string; limit?: number; merchantKind?: 'live' | 'test' }) {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.merchantKind) {
      where.push(`EXISTS (SELECT 1 FROM merchants m WHERE m.id = payouts.merchant_id AND m.live_merchant_id IS ${filter.merchantKind === 'test' ? 'NOT ' : ''}NULL)`);
    }
    if (filter.status) { values.push(filter.status); where.push(`status = $${values.length}::"PayoutStatus"`); }
    if (filter.merchantId) { values.push(filter.merchantId); where.push(`merchant_id = $${values.length}`); }
    values.push(filter.limit ?? 100);
    const r = await this.db.pool.query<PayoutRow>(
      `SELECT ${PAYOUT_COLUMNS} FROM payouts ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY created_at DESC, id DESC LIMIT $${values.length}`, values,
    );
    return r.rows.map((x) => adminPayoutView(x, this.config.tz));
  }

  private async lockPayout(c: Queryable, id: string): Promise<PayoutRow> {
    const r = await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1 FOR UPDATE`, [id]);
    if (!r.rows[0]) throw new NotFoundError('Payout not found.');
    return r.rows[0];
  }

  /**
   * A final status, in the caller's transaction with the payout row locked: SUCCESS debits the
   * locked amount and the held commission; FAIL, ERROR, DECLINED return both to available. The
   * payout webhook is enqueued in the same transaction. `ref`: the provider's reference, kept.
   */
  private async finalize(
    c: Queryable, row: PayoutRow, to: 'SUCCESS' | 'FAIL' | 'ERROR' | 'DECLINED', reason: string | null, ref: string | null = null,
  ): Promise<void> {
    assertTransition(row.status, to);
    await transitionPayout(c, row.id, row.status, to, { failureReason: reason, providerRef: ref });
    const amount = new Decimal(row.amount);
    const money = { payoutId: row.id, merchantId: row.merchant_id, currency: row.currency as 'RUB', amount, commission: new Decimal(row.commission) };
    if (to === 'SUCCESS') {
      await post(c, payoutSucceeded({ ...money, connector: row.connector ?? 'sandbox' }));
    } else {
      await post(c, payoutReturned(money));
      // No longer counts against the limits of the day and month it was made in.
      await c.query({
        name: 'payout_usage_release',
        text: `UPDATE payout_usage u SET amount = greatest(u.amount - $2::numeric, 0)
                 FROM payouts p
                WHERE p.id = $1 AND u.merchant_id = p.merchant_id
                  AND ((u.period = 'D' AND u.period_start = (p.created_at AT TIME ZONE $3::text)::date)
                    OR (u.period = 'M' AND u.period_start = date_trunc('month', p.created_at AT TIME ZONE $3::text)::date))`,
        values: [row.id, amount.toFixed(), this.config.tz],
      });
    }
    await this.webhook(c, row, to, row.id);
  }

  /** The merchant's payout webhook (`aggregateId`: the payout's, or its conflict's). */
  private async webhook(c: Queryable, row: PayoutRow, status: 'SUCCESS' | 'FAIL' | 'ERROR' | 'DECLINED', aggregateId: string): Promise<void> {
    const m = await c.query<{ payout_webhook_url: string | null }>('SELECT payout_webhook_url FROM merchants WHERE id = $1', [row.merchant_id]);
    await enqueueEvent(c, {
      merchantId: row.merchant_id, kind: 'PAYOUT_WEBHOOK', aggregateId, url: m.rows[0]?.payout_webhook_url ?? null, fields: payoutWebhookFields(row, status),
    });
  }

  /**
   * One pass of the payout worker: claim due PROCESS payouts (SKIP LOCKED + a lease, so any
   * number of workers share the work) and run each through the lifecycle. A payout never handed
   * to a connector is sent through the merchant's routing; one handed to a connector before
   * (`sent_at`: a timeout, a process killed during the call or before its commit) is
   * reconciled: that connector is asked, never another. A final answer is applied once (only if
   * still PROCESS); no final answer leaves it PROCESS, asked again with backoff, and on the
   * attention list past RECONCILE_GIVE_UP_MS. Returns how many were finalised.
   */
  async processDue(batch = 50): Promise<number> {
    let done = 0;
    for (const row of await this.claimDue(batch)) if (await this.processClaimed(row)) done += 1;
    return done;
  }

  /**
   * Claims up to `batch` due PROCESS payouts under a lease (the worker's poll; see processDue).
   * The due moment is payouts_due_idx's expression (a partial index of PROCESS payouts): an idle
   * poll reads one index page; the conditions after it are the exact rule.
   */
  async claimDue(batch: number): Promise<WorkRow[]> {
    const claimed = await this.db.pool.query<PayoutRow & { sent_at: Date | null; check_attempts: number }>(
      `UPDATE payouts SET lease_until = now() + $2::int * interval '1 second', updated_at = now()
        WHERE id IN (SELECT id FROM payouts
                      WHERE status = 'PROCESS' AND greatest(process_after, next_check_at, lease_until) <= now()
                        AND process_after <= now() AND (lease_until IS NULL OR lease_until < now())
                        AND (next_check_at IS NULL OR next_check_at <= now())
                      ORDER BY greatest(process_after, next_check_at, lease_until) LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING ${PAYOUT_COLUMNS}, sent_at, check_attempts`,
      [batch, Math.ceil(this.config.workerLeaseMs / 1000)],
    );
    return claimed.rows.map(({ sent_at, check_attempts, ...row }) => ({ ...row, sentAt: sent_at, checkAttempts: check_attempts }));
  }

  /** Sends or reconciles one claimed payout (the lifecycle's run); true when it was finalised. */
  async processClaimed(row: WorkRow): Promise<boolean> {
    return (await this.lifecycle.run(row))?.applied === true;
  }

  /** Gives back the leases of payouts claimed but never worked on (a worker stopping). */
  async releaseClaims(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.pool.query(`UPDATE payouts SET lease_until = NULL WHERE id = ANY($1::text[]) AND status = 'PROCESS'`, [ids]);
  }

  /**
   * A provider's answer about a payout (its notification, or any other word of it), by our id
   * or by the connector and its reference, applied once through the lifecycle (the state table
   * and the ledger): only a final answer of the connector that has the payout changes anything.
   * About a payout final already: a read of the provider (`via` reconciliation, resolve,
   * notification+read) that contradicts it is a conflict; a notification changes nothing here.
   */
  applyProviderOutcome(target: OperationTarget, outcome: OperationOutcome, tx?: Queryable, via = 'notification'): Promise<Applied<PayoutStatus>> {
    return this.lifecycle.applyAnswer(target, outcome, { tx, via });
  }

  /** The operator's decision on a payout reconciliation gave up on (the lifecycle's resolveAttention). */
  resolveAttention(id: string, outcome: unknown, note: string | null, actor: string): Promise<AttentionRow> {
    return this.lifecycle.resolveAttention(id, outcome, note, actor);
  }

  /** The payout's part in the lifecycle (src/domain/operations/lifecycle.ts). */
  private operation(): OperationKind<PayoutStatus, PayoutRow, PayoutOutcome, WorkRow> {
    return {
      type: 'payout',
      lock_: async (c, target) => ('id' in target
        ? await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1 FOR UPDATE`, [target.id])
        : await c.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE connector = $1 AND provider_ref = $2 FOR UPDATE`, [target.connector, target.ref])).rows[0] ?? null,
      finalOf: (o) => (o.status === 'error' ? 'ERROR' : !isFinal(o) ? null : o.status === 'succeeded' ? 'SUCCESS' : 'FAIL'),
      wordOf: (o) => (o.status === 'succeeded' ? { status: 'succeeded', ref: o.ref }
        : o.status === 'failed' ? { status: 'failed', ref: o.ref, code: o.code, message: o.message } : null),
      finish_: async (c, row, o) => {
        const to = o.status === 'succeeded' ? 'SUCCESS' : o.status === 'error' ? 'ERROR' : 'FAIL';
        const reason = o.status === 'error' ? o.reason : o.status === 'failed' ? o.message : null;
        await this.finalize(c, row, to, reason, 'ref' in o ? o.ref : null);
        return to;
      },
      conflict_: (c, row, _o, word) => this.conflict_(c, row, word),
      decided: (_row, to, note) => (to === 'SUCCESS'
        ? { status: 'succeeded', ref: null }
        : { status: 'failed', code: 'operator', message: `operator: ${note ?? 'resolved as FAIL'}`, ref: null }),
      illegal: (from, to) => new IllegalPayoutTransition(from, to),
      sendFromProvider_: (row) => this.createPayoutFromProvider_(row),
      reconcileFromProvider_: (row) => this.reconcileFromProvider_(row),
      readFromProvider_: (id, ref) => this.readFromProvider_(id, ref),
      defer_: async (c, row, o) => {
        const d = await c.query<{ sent_at: Date | null; merchant_id: string; connector: string | null; provider_ref: string | null }>(
          `UPDATE payouts SET provider_ref = coalesce($2, provider_ref), lease_until = NULL,
                  next_check_at = now() + $3::int * interval '1 millisecond', check_attempts = check_attempts + 1, updated_at = now()
            WHERE id = $1 AND status = 'PROCESS' RETURNING sent_at, merchant_id, connector, provider_ref`,
          [row.id, 'ref' in o ? o.ref : null, reconcileDelayMs(row.checkAttempts)]);
        const x = d.rows[0];
        return x ? { merchantId: x.merchant_id, connector: x.connector, ref: x.provider_ref, sentAt: x.sent_at } : null;
      },
    };
  }

  /**
   * First send through the merchant's routing, outside any transaction; each connector is on
   * record before it is called. A destination that cannot be read, or every connector refusing
   * before money could move, is final: ERROR, the money goes back.
   */
  private async createPayoutFromProvider_(row: WorkRow): Promise<PayoutOutcome> {
    const account = this.accountOf(row);
    if (account === null) return { status: 'error', reason: 'account identifier unreadable' };
    const route = row.account_type === 'CARD' ? 'payout_card' : 'payout_sbp';
    const { routing, live } = await this.connectors.routingOf(row.merchant_id);
    const routed = await this.connectors.route<OperationOutcome>(routing[route], route, { live }, 'create_payout', (c, ctx) => c.createPayout(this.request(row, account), ctx),
      async (c) => { await this.db.pool.query('UPDATE payouts SET connector = $2, sent_at = now() WHERE id = $1', [row.id, c.name]); });
    return routed.outcome.status === 'refused' ? { status: 'error', reason: routed.outcome.message } : routed.outcome;
  }

  /**
   * Asks the connector that has the payout for its status. Where the provider shows nothing
   * under what we know (no reference of ours yet), the creation is repeated with the same payout
   * id, its idempotency key: the provider answers the first result or, if it never got it, makes
   * it now. Nothing but a final answer of that connector finishes the payout.
   */
  private async reconcileFromProvider_(row: WorkRow): Promise<OperationOutcome> {
    const name = row.connector!;
    const c = await this.connectors.get(name);
    if (!c) return { status: 'unknown', ref: null, reason: `connector ${name} is disabled or not available` };
    const o = await this.connectors.call(c, 'get_payout', (ctx) => c.getPayout({ payoutId: row.id, ref: row.provider_ref ?? null }, ctx));
    if (isNotFound(o) && !row.provider_ref) {
      const account = this.accountOf(row);
      // The repeat says when the key was first used (CreatePayout.firstSentAt: a key past its life is never sent again).
      if (account !== null) return this.connectors.call(c, 'create_payout', (ctx) => c.createPayout({ ...this.request(row, account), firstSentAt: row.sentAt }, ctx));
    }
    return o;
  }

  /**
   * The provider's answer about a payout now (its connector's get_payout), outside any
   * transaction; null when no connector has it. By `ref` when given (the object a notification
   * names), else by the reference we stored.
   */
  private async readFromProvider_(id: string, ref?: string | null): Promise<OperationOutcome | null> {
    const r = await this.db.pool.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1`, [id]);
    const row = r.rows[0];
    if (!row?.connector) return null;
    const c = await this.connectors.get(row.connector);
    if (!c) return null;
    return this.connectors.call(c, 'get_payout', (ctx) => c.getPayout({ payoutId: row.id, ref: ref ?? row.provider_ref ?? null }, ctx));
  }

  /**
   * A provider's final answer about a payout final already that contradicts it (a payout we
   * returned that the provider paid, one we made SUCCESS that it failed), in the lifecycle's
   * transaction with the row locked: the money follows the provider (PAYOUT_CONFLICT_DEBIT,
   * which may take available below zero, or PAYOUT_CONFLICT_CREDIT) and the merchant gets a
   * second payout webhook with the provider's status. Once per payout; true when recorded now.
   */
  private async conflict_(c: Queryable, row: PayoutRow, word: ProviderWord): Promise<boolean> {
    if (!row.connector) return false;
    const money = {
      payoutId: row.id, merchantId: row.merchant_id, currency: row.currency as 'RUB', amount: new Decimal(row.amount),
      commission: new Decimal(row.commission), connector: row.connector,
    };
    const paid = word.status === 'succeeded';
    const recorded = await recordConflict(c, {
      objectType: 'payout', objectId: row.id, merchantId: row.merchant_id, connector: row.connector, providerRef: row.provider_ref ?? word.ref,
      ours: row.status, provider: word, transfer: paid ? payoutPaidAfterAll(money) : payoutNotPaidAfterAll(money),
    });
    // The merchant learns what the provider did: a webhook of its own (the first one's
    // (kind, aggregate) is taken), TrsId the payout, Status the provider's.
    if (recorded) await this.webhook(c, row, paid ? 'SUCCESS' : 'FAIL', `${row.id}:conflict`);
    return recorded;
  }

  /** The destination in clear for the call; null when it cannot be read (the payout is ERROR). */
  private accountOf(row: PayoutRow): string | null {
    try {
      return decrypt(this.config.tokenEncryptionKey, row.account_enc ?? '');
    } catch {
      return null;
    }
  }

  private request(row: PayoutRow, account: string) {
    return {
      payoutId: row.id, accountType: row.account_type, account, cardHolder: row.card_holder,
      bankMemberId: row.bank_member_id, amount: new Decimal(row.amount), currency: row.currency,
    };
  }
}

/** A claimed payout with its reconciliation state. */
export type WorkRow = PayoutRow & Claimed;

/** A payout's answer: the connector's, or `error` when it could not be sent at all (final: ERROR, the money back). */
type PayoutOutcome = OperationOutcome | { status: 'error'; reason: string };

/**
 * The one statement that changes a payout's status: conditional on the from-states of the
 * transition table, row count checked. A payout not in one of them (whatever the caller read
 * before) is an IllegalPayoutTransition (409) naming its current status, and nothing changes.
 * A final status also sets finished_at and drops the lease; PROCESS sets when it is due; the
 * provider's reference, when given, is kept.
 */
export async function transitionPayout(
  c: Queryable, id: string, expected: PayoutStatus, to: PayoutStatus,
  o: { failureReason?: string | null; processAfterMs?: number; providerRef?: string | null } = {},
): Promise<void> {
  const final = FINAL_PAYOUT_STATUSES.includes(to);
  const r = await c.query(
    `UPDATE payouts SET status = $2::"PayoutStatus", failure_reason = coalesce($4, failure_reason), provider_ref = coalesce($7, provider_ref),
            finished_at = CASE WHEN $5 THEN now() ELSE finished_at END,
            lease_until = CASE WHEN $5 THEN NULL ELSE lease_until END,
            process_after = CASE WHEN $6::int IS NULL THEN process_after ELSE now() + $6::int * interval '1 millisecond' END,
            updated_at = now()
      WHERE id = $1 AND status = ANY($3::"PayoutStatus"[])`,
    [id, to, payoutSourcesOf(to), o.failureReason ?? null, final, o.processAfterMs ?? null, o.providerRef ?? null],
  );
  if (r.rowCount === 1) return;
  const cur = await c.query<{ status: PayoutStatus }>(`SELECT status::text FROM payouts WHERE id = $1`, [id]);
  throw new IllegalPayoutTransition(cur.rows[0]?.status ?? expected, to);
}

/** Splits `amount` into payouts of at most `max` (the remainder last); null past MAX_SPLIT. */
export function splitAmount(amount: Decimal, max: Decimal): Decimal[] | null {
  if (amount.div(max).ceil().gt(MAX_SPLIT)) return null;
  const out: Decimal[] = [];
  let rest = amount;
  while (rest.gt(max)) { out.push(max); rest = rest.sub(max); }
  out.push(rest);
  return out;
}
