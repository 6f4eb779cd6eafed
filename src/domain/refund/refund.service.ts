import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { isMoneyReceived } from '../../kernel/statuses.js';
import { DomainError, UnauthorizedActionError, ValidationError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { keysetPage, type KeysetPage, type KeysetParams } from '../../db/keyset.js';
import { isValidAmount, money2 } from '../../lib/money.js';
import { post } from '../ledger/ledger.js';
import { refundCreated, refundMadeAfterAll, refundNotMadeAfterAll, refundReturned, refundSucceeded } from '../ledger/postings.js';
import { recordConflict, type ProviderWord } from '../providers/conflict.js';
import { Lifecycle, type Applied, type LifecycleObserver, type OperationKind, type Target } from '../operations/lifecycle.js';
import { enqueueEvent } from '../../outbox/events.js';
import type { AuthMerchant } from '../merchant/merchant-guard.js';
import type { ConnectorMode, OperationOutcome } from '../providers/connector.js';
import { ConnectorRegistry, connectorServes } from '../providers/registry.js';
import {
  addRefunded, claimDueRefunds, paymentShopOf, findRefund, finishRefund, insertRefund, latestRefundOfPayment, lockPayment, lockRefund,
  refundsOfPayment, REFUND_COLUMNS, toRecord, type ClaimedRefund, type LockedRefund, type RefundRecord, type RefundRow,
  refundSiblingsRub,
} from './refund.repository.js';
import { assertTransition, IllegalRefundTransitionError } from './refund.states.js';
import { refundRub } from './refund-rub.js';
import { refundReceiptOf } from '../receipt/receipt.repository.js';
import { receiptFromJson, receiptToJson } from '../receipt/receipt-json.js';
import { rubOfRefund } from '../providers/provider-http.js';
import type { RefundStatus } from '../../generated/prisma/enums.js';
import { isFinal, isNotFound, reconcileDelayMs, type AttentionRow, type FinalOutcome } from '../operations/reconcile.js';

export type { RefundRecord } from './refund.repository.js';

/** Who asks for a refund: the API's or the cabinet's merchant. */
export type RefundActor = Pick<AuthMerchant, 'id' | 'grantRefunds'>;


export const REFUND_MESSAGES = {
  paymentUnknown: 'The selected payment id is invalid.',
  paymentNotPaid: 'The payment has received no money and cannot be refunded.',
  fullyRefunded: 'The payment has already been fully refunded.',
  amountInvalid: 'The amount must be greater than 0, with at most 2 decimals, and at most 99999999.99.',
  amountTooLarge: (left: Decimal) => `The amount may not be greater than ${money2(left)} (what is left to refund).`,
  statusRequired: 'The payment id field is required when id is not present.',
  refundUnknown: 'The selected id is invalid.',
  noRefund: 'The payment has no refund.',
};

/**
 * Refunds of payments (DESIGN.md "Balance"): a refund is in the payment's account currency (the
 * bill's currency, the balance the payment credited) and the refunds of a payment never exceed
 * what it received before commission (account_amount + commission): like a card refund, the
 * customer gets back what they paid, and the commission is not returned to the merchant. Creating one moves its amount from
 * available to locked; SUCCESS debits locked, FAIL returns it to available and gives the room
 * back on the payment.
 */
export class RefundService {
  /** The refund's part in the provider-operation lifecycle. */
  readonly lifecycle: Lifecycle<RefundStatus, LockedRefund, OperationOutcome, ClaimedRefund>;

  constructor(
    private readonly config: Config,
    private readonly db: Db,
    readonly connectors: ConnectorRegistry = new ConnectorRegistry(config, db),
    observer?: LifecycleObserver,
  ) {
    this.lifecycle = new Lifecycle(this.operation(), { pool: db.pool, giveUpMs: config.reconcileGiveUpMs, observer });
  }

  /** Refunds what is left of the payment. */
  createFull(m: RefundActor, paymentId: string, inTx?: InTx<RefundRecord>): Promise<RefundRecord> {
    return this.create(m, paymentId, null, inTx);
  }

  createPartial(m: RefundActor, paymentId: string, amount: Decimal, inTx?: InTx<RefundRecord>): Promise<RefundRecord> {
    return this.create(m, paymentId, amount, inTx);
  }

  /** By `id`, that refund; by `paymentId`, the payment's latest refund (DESIGN.md). */
  async status(m: RefundActor, q: { paymentId?: string; id?: string }): Promise<RefundRecord> {
    assertGrant(m);
    if (q.id !== undefined) {
      const r = await findRefund(this.db.pool, m.id, q.id);
      if (r && (q.paymentId === undefined || r.paymentId === q.paymentId)) return r;
      // Some clients send the payment's id as `id`: ids never collide, so answer its latest refund.
      const byPayment = !r && q.paymentId === undefined ? await latestRefundOfPayment(this.db.pool, m.id, q.id) : null;
      if (byPayment) return byPayment;
      throw ValidationError.field('id', REFUND_MESSAGES.refundUnknown);
    }
    if (q.paymentId === undefined) throw ValidationError.field('payment_id', REFUND_MESSAGES.statusRequired);
    const r = await latestRefundOfPayment(this.db.pool, m.id, q.paymentId);
    if (!r) throw ValidationError.field('payment_id', REFUND_MESSAGES.noRefund);
    return r;
  }

  /** Every refund of one of the merchant's payments, newest first (for the cabinet). */
  listForPayment(merchantId: string, paymentId: string): Promise<RefundRecord[]> {
    return refundsOfPayment(this.db.pool, merchantId, paymentId);
  }

  /** refund/search: newest first; refunds have no shop column, so a shop filter joins their payment. */
  async search(m: RefundActor, params: KeysetParams, paymentId: string | undefined): Promise<KeysetPage<RefundRecord>> {
    assertGrant(m);
    const table = params.shopId === undefined ? 'refunds'
      : '(SELECT r.*, p.shop_id FROM refunds r JOIN payments p ON p.id = r.payment_id) AS refunds';
    const page = await keysetPage<RefundRow>(this.db.pool, {
      table, columns: REFUND_COLUMNS, merchantId: m.id, params, filters: { payment_id: paymentId },
    });
    return { ...page, rows: page.rows.map(toRecord) };
  }

  /**
   * A refund goes back through the connector that took the payment; it must still be one
   * allowed to move this merchant's money (production: a live merchant's money only through a
   * live-mode connector; a payment the sandbox took before the switch cannot be refunded as
   * live money). Refused before anything moves: direction_not_available.
   */
  private async assertDirection(c: Queryable, merchantId: string, connector: string | null): Promise<void> {
    if (this.config.profile !== 'production') return;
    const r = await c.query<{ live: boolean; kind: string | null; mode: ConnectorMode | null }>(
      `SELECT (m.live_merchant_id IS NULL) AS live, k.kind, k.mode FROM merchants m LEFT JOIN connectors k ON k.name = $2 WHERE m.id = $1`,
      [merchantId, connector ?? 'sandbox']);
    const row = r.rows[0];
    if (!row || row.kind === null || row.mode === null || !connectorServes({ kind: row.kind, mode: row.mode }, { live: row.live }, 'production')) {
      throw new DomainError('direction_not_available');
    }
  }

  private async create(m: RefundActor, paymentId: string, requested: Decimal | null, inTx?: InTx<RefundRecord>): Promise<RefundRecord> {
    assertGrant(m);
    if (requested !== null && !isValidAmount(requested)) throw ValidationError.field('amount', REFUND_MESSAGES.amountInvalid);
    // Lock, then check, then change: the payment row lock serialises every refund of it, so two
    // refunds racing for the last rouble cannot both see it left.
    return withPgTx(this.db.pool, async (c) => {
      const p = await lockPayment(c, m.id, paymentId);
      if (!p) throw ValidationError.field('payment_id', REFUND_MESSAGES.paymentUnknown);
      if (!isMoneyReceived(p.status) || p.received === null || p.received.lte(0)) {
        throw ValidationError.field('payment_id', REFUND_MESSAGES.paymentNotPaid);
      }
      // Refunds are in kopecks/cents; a sub-cent remainder of a converted credit stays with the merchant.
      // What chargebacks took back is not refundable again.
      const left = p.received.minus(p.refundedAmount).minus(p.chargebackAmount).toDecimalPlaces(2, Decimal.ROUND_DOWN);
      let amount: Decimal;
      if (requested === null) {
        if (left.lte(0)) throw ValidationError.field('payment_id', REFUND_MESSAGES.fullyRefunded);
        amount = left;
      } else {
        if (left.lte(0)) throw ValidationError.field('amount', REFUND_MESSAGES.fullyRefunded);
        if (requested.gt(left)) throw ValidationError.field('amount', REFUND_MESSAGES.amountTooLarge(left));
        amount = requested;
      }
      await this.assertDirection(c, m.id, p.connector);
      const amountRub = refundRub(p, amount, amount.eq(left));
      // The refund's receipt, built now from the payment and its shop's settings and kept with the
      // refund, so every send of it carries this one (docs/adr/0087). `whole`: everything the
      // payment took comes back and nothing did before (T-Bank: a full Cancel carries no receipt).
      const receipt = await refundReceiptOf(c, paymentId, amountRub);
      const whole = amount.eq(left) && p.refundedAmount.isZero() && p.chargebackAmount.isZero();
      const refund = await insertRefund(c, {
        id: newId(), merchantId: m.id, paymentId, amount, amountRub, currency: p.accountCurrency,
        delayMs: this.config.sandboxProcessingDelayMs, connector: p.connector, receipt: receipt ? receiptToJson(receipt, whole) : null,
      });
      await addRefunded(c, paymentId, amount);
      // Overdraft: the ledger throws balance_not_enough and withPgTx rolls everything back.
      await post(c, refundCreated({ refundId: refund.id, paymentId, merchantId: m.id, currency: p.accountCurrency, amount }));
      await inTx?.(c, refund);
      return refund;
    });
  }

  /**
   * One worker pass: claims due refunds (NEW -> PROCESS, and PROCESS ones due for a check or
   * left by a dead worker) and runs each through the lifecycle: a refund never handed to its
   * connector (the one that took the payment) is sent; one handed to it before (`sent_at`: a
   * timeout, a refusal, a worker killed during the call or before its commit) is reconciled:
   * that connector is asked for it. A final answer finishes it once in its own transaction;
   * anything else leaves it PROCESS, asked again with backoff, and on the attention list past
   * RECONCILE_GIVE_UP_MS. Returns how many were claimed.
   */
  async processDue(limit = 20): Promise<number> {
    const claimed = await this.claimDue(limit);
    const errors: unknown[] = [];
    for (const r of claimed) {
      // A refund that fails to finish here keeps its lease and is taken again when it expires;
      // the others of the batch still finish.
      try {
        await this.processClaimed(r);
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, `${errors.length} refund(s) could not be finished`);
    return claimed.length;
  }

  /** Claims up to `limit` due refunds under a lease (the worker's poll; see processDue). */
  claimDue(limit: number): Promise<ClaimedRefund[]> {
    return claimDueRefunds(this.db.pool, limit, this.config.workerLeaseMs);
  }

  /** Sends or reconciles one claimed refund (the lifecycle's run). */
  async processClaimed(r: ClaimedRefund): Promise<void> {
    await this.lifecycle.run(r);
  }

  /** Gives back the leases of refunds claimed but never worked on (a worker stopping). */
  async releaseClaims(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.pool.query(`UPDATE refunds SET lease_until = NULL WHERE id = ANY($1::text[]) AND status = 'PROCESS'`, [ids]);
  }

  /**
   * A provider's answer about a refund (its notification, a read), by our id or by the
   * connector and its reference: applied once through the lifecycle (the state table and the
   * ledger). Only a final answer about a PROCESS refund of that connector changes anything.
   */
  applyProviderOutcome(target: Target, outcome: OperationOutcome, tx?: Queryable, via = 'notification'): Promise<Applied<RefundStatus>> {
    return this.lifecycle.applyAnswer(target, outcome, { tx, via });
  }

  /** The operator's decision on a refund reconciliation gave up on (the lifecycle's resolveAttention). */
  resolveAttention(id: string, outcome: unknown, note: string | null, actor: string): Promise<AttentionRow> {
    return this.lifecycle.resolveAttention(id, outcome, note, actor);
  }

  /** The refund's part in the lifecycle (src/domain/operations/lifecycle.ts). */
  private operation(): OperationKind<RefundStatus, LockedRefund, OperationOutcome, ClaimedRefund> {
    return {
      type: 'refund',
      lock_: (c, target) => lockRefund(c, target),
      finalOf: (o) => (isFinal(o) ? (o.status === 'succeeded' ? 'SUCCESS' : 'FAIL') : null),
      wordOf: (o) => (o.status === 'succeeded' ? { status: 'succeeded', ref: o.ref }
        : o.status === 'failed' ? { status: 'failed', ref: o.ref, code: o.code, message: o.message } : null),
      finish_: (c, r, o) => this.finish_(c, r, o as FinalOutcome),
      conflict_: (c, r, _o, word) => this.conflict_(c, r, word),
      decided: (_r, to, note) => (to === 'SUCCESS'
        ? { status: 'succeeded', ref: null }
        : { status: 'failed', code: 'operator', message: `operator: ${note ?? 'resolved as FAIL'}`, ref: null }),
      illegal: (from, to) => new IllegalRefundTransitionError(from, to),
      sendFromProvider_: (r) => this.refundFromProvider_(r),
      reconcileFromProvider_: (r) => this.reconcileFromProvider_(r),
      readFromProvider_: (id, ref) => this.readFromProvider_(id, ref),
      defer_: async (c, r, o) => {
        const d = await c.query<{ sent_at: Date | null; merchant_id: string; connector: string; provider_ref: string | null }>(
          `UPDATE refunds SET provider_ref = coalesce($2, provider_ref), lease_until = NULL,
                  next_check_at = now() + $3::int * interval '1 millisecond', check_attempts = check_attempts + 1, updated_at = now()
            WHERE id = $1 AND status = 'PROCESS' RETURNING sent_at, merchant_id, coalesce(connector, 'sandbox') AS connector, provider_ref`,
          [r.id, 'ref' in o ? o.ref : null, reconcileDelayMs(r.checkAttempts)]);
        const x = d.rows[0];
        return x ? { merchantId: x.merchant_id, connector: x.connector, ref: x.provider_ref, sentAt: x.sent_at } : null;
      },
    };
  }

  /** The first send, outside any transaction; the refund is on record as handed to its connector before the call. */
  private async refundFromProvider_(r: ClaimedRefund): Promise<OperationOutcome> {
    const c = await this.connectors.get(r.connector);
    if (!c) return { status: 'refused', code: 'connector_unavailable', message: `connector ${r.connector} is disabled or not available` };
    const req = await this.request(r);
    await this.db.pool.query('UPDATE refunds SET sent_at = now() WHERE id = $1', [r.id]);
    return this.connectors.call(c, 'refund', (ctx) => c.refund(req, ctx));
  }

  /**
   * Asks the connector for the refund; where it shows nothing under what we know (no reference
   * yet), the refund is repeated under the same refund id, its idempotency key: the provider
   * answers the first result or, if it never got it, makes it now.
   */
  private async reconcileFromProvider_(r: ClaimedRefund): Promise<OperationOutcome> {
    const c = await this.connectors.get(r.connector);
    if (!c) return { status: 'unknown', ref: null, reason: `connector ${r.connector} is disabled or not available` };
    const o = await this.connectors.call(c, 'get_refund', (ctx) => c.getRefund({ refundId: r.id, ref: r.ref }, ctx));
    if (isNotFound(o) && r.ref === null) {
      const req = await this.request(r);
      return this.connectors.call(c, 'refund', (ctx) => c.refund(req, ctx));
    }
    return o;
  }

  /** The provider's answer about a refund now (its connector's get_refund), outside any transaction; null when it cannot be asked. */
  private async readFromProvider_(id: string, ref?: string | null): Promise<OperationOutcome | null> {
    const r = await this.db.pool.query<{ connector: string; provider_ref: string | null }>(
      `SELECT coalesce(connector, 'sandbox') AS connector, provider_ref FROM refunds WHERE id = $1`, [id]);
    const row = r.rows[0];
    if (!row) return null;
    const c = await this.connectors.get(row.connector);
    if (!c) return null;
    return this.connectors.call(c, 'get_refund', (ctx) => c.getRefund({ refundId: id, ref: ref ?? row.provider_ref }, ctx));
  }

  /** The connector's request; every send carries the receipt kept with the refund (docs/adr/0087), so a repeat is the same request. */
  private async request(r: ClaimedRefund) {
    const stored = receiptFromJson(r.receipt);
    return {
      refundId: r.id, paymentId: r.paymentId, paymentRef: r.paymentRef, amount: r.amount, amountRub: r.amountRub, currency: r.currency, fromCard: r.fromCard,
      ...(stored ? { receipt: stored.receipt, ...(stored.whole ? { whole: true } : {}) } : {}),
      // A repeat carries when it was first sent and the payment's other refunds (CreateRefund.firstSentAt, .siblings).
      ...(r.sentAt !== null ? { firstSentAt: r.sentAt, siblings: await refundSiblingsRub(this.db.pool, r.paymentId, r.id) } : {}),
    };
  }

  /**
   * A provider's final answer about a refund final already that contradicts it (a refund we
   * failed that the provider made, one we made SUCCESS that it failed), in the lifecycle's
   * transaction with the refund locked: the money follows the provider (REFUND_CONFLICT_DEBIT,
   * which may take available below zero, or REFUND_CONFLICT_CREDIT), the payment's refunded
   * total with it, and a second refund postback carries the provider's status. Once per refund;
   * true when recorded now.
   */
  private async conflict_(c: Queryable, r: LockedRefund, word: ProviderWord): Promise<boolean> {
    const made = word.status === 'succeeded';
    const money = { refundId: r.id, paymentId: r.paymentId, merchantId: r.merchantId, currency: r.currency, amount: r.amount };
    const recorded = await recordConflict(c, {
      objectType: 'refund', objectId: r.id, merchantId: r.merchantId, connector: r.connector, providerRef: r.ref ?? word.ref,
      ours: r.status, provider: word,
      transfer: made ? refundMadeAfterAll(money) : refundNotMadeAfterAll(money),
    });
    if (!recorded) return false;
    // What is left to refund on the payment follows the money. Where the merchant refunded that
    // room again meanwhile, the payment's bound refuses it: the conflict item says so, and the
    // conflict (item and money) still commits.
    await c.query('SAVEPOINT refund_conflict_room');
    try {
      await addRefunded(c, r.paymentId, made ? r.amount : r.amount.neg());
      await c.query('RELEASE SAVEPOINT refund_conflict_room');
    } catch {
      await c.query('ROLLBACK TO SAVEPOINT refund_conflict_room');
      await c.query(`UPDATE attention_items SET last_heard = last_heard || '{"refunded_total":"not adjusted: the payment has no room left"}'::jsonb
                      WHERE object_type = 'refund' AND object_id = $1 AND kind = 'conflict'`, [r.id]);
    }
    await this.postback(c, r, made ? 'SUCCESS' : 'FAIL', `${r.id}:conflict`);
    return true;
  }

  /**
   * PROCESS -> SUCCESS (debit locked) or FAIL (locked back to available, room back on the
   * payment), with its postback, in the lifecycle's transaction with the refund locked.
   */
  private async finish_(c: Queryable, r: LockedRefund, outcome: FinalOutcome): Promise<'SUCCESS' | 'FAIL'> {
    const ok = outcome.status === 'succeeded';
    const to = ok ? 'SUCCESS' : 'FAIL';
    assertTransition(r.status, to);
    await finishRefund(c, r.id, to, outcome.status === 'failed' ? outcome.message : null, outcome.ref);
    const money = { refundId: r.id, paymentId: r.paymentId, merchantId: r.merchantId, currency: r.currency, amount: r.amount };
    if (ok) {
      await post(c, refundSucceeded(money));
    } else {
      await post(c, refundReturned(money));
      await addRefunded(c, r.paymentId, r.amount.neg());
    }
    // The refund postback commits with the final status (transactional outbox).
    await this.postback(c, r, to, r.id);
    return to;
  }

  /** The merchant's refund postback (`aggregateId`: the refund's, or its conflict's). */
  private async postback(c: Queryable, r: LockedRefund, status: 'SUCCESS' | 'FAIL', aggregateId: string): Promise<void> {
    const shop = await paymentShopOf(c, r.paymentId);
    await enqueueEvent(c, {
      merchantId: r.merchantId, kind: 'REFUND_POSTBACK', aggregateId, url: shop.resultUrl,
      fields: {
        Id: r.id, PaymentId: r.paymentId, BillId: shop.billId, InvId: shop.orderId ?? '', Amount: money2(r.amount),
        Currency: r.currency, Status: status,
      },
    });
  }
}

/** Refunds are granted per merchant by the operator (spec part 5.4): else 403. */
export function assertGrant(m: RefundActor): void {
  if (!m.grantRefunds) throw new UnauthorizedActionError();
}
