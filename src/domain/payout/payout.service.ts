import { createHmac } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { DomainError, NotFoundError, UnauthorizedActionError, ValidationError } from '../../errors.js';
import { keysetPage, type KeysetPage, type KeysetParams } from '../../db/keyset.js';
import { encrypt } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { isValidAmount } from '../../lib/money.js';
import { ledgerParams } from '../ledger/fragments.js';
import { ledgerError } from '../ledger/ledger.js';
import { payoutCreated } from '../ledger/postings.js';
import { Lifecycle, type LifecycleObserver } from '../operations/lifecycle.js';
import type { ConflictLog } from '../providers/conflict.js';
import { runDue } from '../operations/kinds.js';
import { commissionFor } from '../merchant/fees.js';
import type { PayoutStatus } from '../../generated/prisma/enums.js';
import { takesCard, type CardTokenProvider } from '../providers/connector.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import { assertTransition } from './payout.states.js';
import { adminPayoutView, payoutView, type PayoutRow, type PayoutView } from './payout.view.js';
import {
  findPayout, INSERT_PAYOUTS, listPayouts, lockPayout, lockRequestingMerchant, payoutsOfRequest, payoutUsage, requestOfOrder,
  transitionPayout, type LockedMerchant, type WorkRow,
} from './payout.repository.js';
import { PayoutOperation, type PayoutOutcome } from './payout.operation.js';

export type { WorkRow } from './payout.repository.js';

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

/** The merchant a payout is made for (the API's AuthMerchant, or the cabinet's merchant). */
export interface PayoutMerchant {
  id: string;
  verified?: boolean;
  grantRegularPayouts?: boolean;
}

/** Most payouts one request may be split into; a larger split is refused as invalid_amount. */
export const MAX_SPLIT = 1000;

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
  /** The payout as an operation kind (payout.operation.ts) and its lifecycle. */
  readonly operation: PayoutOperation;
  readonly lifecycle: Lifecycle<PayoutStatus, PayoutRow, PayoutOutcome, WorkRow>;

  constructor(
    private readonly config: Config,
    private readonly db: Db,
    readonly connectors: ConnectorRegistry,
    observer?: LifecycleObserver,
    log?: ConflictLog,
  ) {
    this.operation = new PayoutOperation(config, db.pool, connectors);
    this.lifecycle = new Lifecycle(this.operation, { pool: db.pool, giveUpMs: config.reconcileGiveUpMs, observer, log });
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
    const m = await lockRequestingMerchant(c, merchant.id, req.accountId, req.bankMemberId, req.orderId ?? null);
    if (!m) throw new DomainError('merchant_not_found');
    if (m.status === 'BANNED') throw new DomainError('merchant_banned');
    if (!m.verified) throw new DomainError('merchant_not_verified');
    if (m.priorRequestId) return this.replayOf(c, m.priorRequestId, m.priorRequestHash!, hash);
    const target = req.resolve(m);
    await this.assertDirection(m, target);
    const max = new Decimal(target.accountType === 'CARD' ? m.maxCard : m.maxSbp);
    const parts = splitAmount(req.amount, max);
    if (parts === null) throw new DomainError('invalid_amount');
    if (m.dailyLimit !== null || m.monthlyLimit !== null) checkLimits(m, req.amount, await payoutUsage(c, merchant.id, tz));

    // Moderation looks at the whole request, so splitting cannot slip under the threshold.
    const moderate = m.moderationThreshold !== null && req.amount.gt(m.moderationThreshold);
    const status = moderate ? 'MODERATING' : 'PROCESS';
    assertTransition('NEW', status);
    const feeKind = target.accountType === 'CARD' ? 'payout_card' : 'payout_sbp';
    const commissions = parts.map((a) => commissionFor(this.config, m, feeKind, a));
    // Ids sorted, so that ordering by id gives the split order back (replays, status by order_id).
    const ids = parts.map(() => newId()).sort();
    const locks = ids.map((id, i) => payoutCreated({ payoutId: id, merchantId: merchant.id, currency: 'RUB', amount: parts[i]!, commission: commissions[i]! }));
    const ins = await c.query<{ id: string; created_at: Date; bal: number }>(INSERT_PAYOUTS.bind({
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
    const existing = await requestOfOrder(c, merchantId, orderId);
    return existing ? this.replayOf(c, existing.id, existing.request_hash, hash) : null;
  }

  private async replayOf(c: Queryable, requestId: string, storedHash: string, hash: string): Promise<PayoutView[]> {
    if (storedHash !== hash) {
      throw ValidationError.field('order_id', 'The order id has already been used with other parameters.');
    }
    return (await payoutsOfRequest(c, requestId)).map((x) => payoutView(x, this.config.tz));
  }

  /** HMAC, not a bare hash: the parameters include full card numbers. */
  private requestHash(parts: Record<string, string | null>): string {
    return createHmac('sha256', this.config.tokenEncryptionKey).update(JSON.stringify(parts)).digest('hex');
  }

  /** payout/status by id, or by order_id (a split request answers its first payout). */
  async status(merchantId: string, p: { id: string } | { orderId: string }): Promise<PayoutView> {
    const row = await findPayout(this.db.pool, merchantId, p);
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
      await this.operation.finalize_(c, row, 'DECLINED', reason ?? 'declined by the operator');
      if (inTx) await inTx(c, { from: row.status, to: 'DECLINED', payout: row });
      return adminPayoutView({ ...row, status: 'DECLINED' }, this.config.tz);
    });
  }

  /** Operator list, newest first, optionally by status and merchant. */
  /** `merchantKind`: only live merchants' payouts, or only test twins' (test mode's). */
  async list(filter: { status?: string; merchantId?: string; limit?: number; merchantKind?: 'live' | 'test' }) {
    return (await listPayouts(this.db.pool, filter)).map((x) => adminPayoutView(x, this.config.tz));
  }

  /** One worker pass (tests drive it in place of the loop, src/domain/operations/kinds.ts): how many were finalised. */
  async processDue(batch = 50): Promise<number> {
    return (await runDue({ lifecycle: this.lifecycle, claim: (n) => this.operation.claim(n) }, batch)).finalised;
  }

  private async lockPayout(c: Queryable, id: string): Promise<PayoutRow> {
    const row = await lockPayout(c, { id });
    if (!row) throw new NotFoundError('Payout not found.');
    return row;
  }
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
