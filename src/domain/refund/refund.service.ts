import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { inTxOr, withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { isMoneyReceived } from '../statuses.js';
import { DomainError, UnauthorizedActionError, ValidationError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { keysetPage, type KeysetPage, type KeysetParams } from '../../db/keyset.js';
import { isValidAmount, money2 } from '../../lib/money.js';
import { post } from '../ledger/ledger.js';
import { refundCreated, refundMadeAfterAll, refundNotMadeAfterAll, refundReturned, refundSucceeded } from '../ledger/postings.js';
import { contradicts, isProviderRead, recordConflict } from '../providers/conflict.js';
import { enqueueEvent } from '../../outbox/events.js';
import type { AuthMerchant } from '../merchant/merchant-guard.js';
import type { ConnectorMode, OperationOutcome } from '../providers/connector.js';
import { ConnectorRegistry, connectorServes } from '../providers/registry.js';
import {
  addRefunded, claimDueRefunds, paymentShopOf, findRefund, finishRefund, insertRefund, latestRefundOfPayment, lockPayment, lockRefund,
  refundsOfPayment, REFUND_COLUMNS, toRecord, type ClaimedRefund, type RefundRecord, type RefundRow,
  refundSiblingsRub,
} from './refund.repository.js';
import { assertTransition, IllegalRefundTransitionError } from './refund.states.js';
import { refundRub } from './refund-rub.js';
import { refundReceiptOf } from '../receipt/receipt.repository.js';
import { rubOfRefund } from '../providers/provider-http.js';
import type { RefundStatus } from '../../generated/prisma/enums.js';
import {
  closeAttention, deferProviderCheck, isFinal, resolveItem, isNotFound, lastHeard, lockOpenAttention, parseResolution,
  type AttentionRow, type FinalOutcome,
} from '../providers/operation-reconcile.js';

export type { RefundRecord } from './refund.repository.js';

/** Who asks for a refund: the API's or the cabinet's merchant. */
export type RefundActor = Pick<AuthMerchant, 'id' | 'grantRefunds'>;


/** How long a worker holds a claimed refund before another may take it again. */

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
  constructor(
    private readonly config: Config,
    private readonly db: Db,
    readonly connectors: ConnectorRegistry = new ConnectorRegistry(config, db),
  ) {}

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
      const refund = await insertRefund(c, {
        id: newId(), merchantId: m.id, paymentId, amount, amountRub: refundRub(p, amount, amount.eq(left)), currency: p.accountCurrency,
        delayMs: this.config.sandboxProcessingDelayMs, connector: p.connector,
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
   * left by a dead worker). A refund never handed to its connector (the one that took the
   * payment) is sent; one handed to it before (`sent_at`: a timeout, a refusal, a worker killed
   * during the call or before its commit) is reconciled: that connector is asked for it. A
   * final answer finishes it once in its own transaction; anything else leaves it PROCESS, asked
   * again with backoff, and on the attention list past RECONCILE_GIVE_UP_MS. Returns how many
   * were claimed.
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

  /** Sends or reconciles one claimed refund; a final answer finishes it, anything else defers its next check. */
  async processClaimed(r: ClaimedRefund): Promise<void> {
    const outcome = r.sentAt === null ? await this.send(r) : await this.reconcile(r);
    if (isFinal(outcome)) await this.finish(r.id, outcome, r.sentAt !== null ? 'reconciliation' : null);
    else {
      await deferProviderCheck(this.db.pool, this.config.reconcileGiveUpMs, {
        objectType: 'refund', id: r.id, checkAttempts: r.checkAttempts, taken: { connector: null, ref: 'ref' in outcome ? outcome.ref : null },
        heard: lastHeard(outcome), defaultConnector: 'sandbox',
      });
    }
  }

  /** Gives back the leases of refunds claimed but never worked on (a worker stopping). */
  async releaseClaims(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.pool.query(`UPDATE refunds SET lease_until = NULL WHERE id = ANY($1::text[]) AND status = 'PROCESS'`, [ids]);
  }

  /** The first send; the refund is on record as handed to its connector before the call. */
  private async send(r: ClaimedRefund): Promise<OperationOutcome> {
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
  private async reconcile(r: ClaimedRefund): Promise<OperationOutcome> {
    const c = await this.connectors.get(r.connector);
    if (!c) return { status: 'unknown', ref: null, reason: `connector ${r.connector} is disabled or not available` };
    const o = await this.connectors.call(c, 'get_refund', (ctx) => c.getRefund({ refundId: r.id, ref: r.ref }, ctx));
    if (isNotFound(o) && r.ref === null) {
      const req = await this.request(r);
      return this.connectors.call(c, 'refund', (ctx) => c.refund(req, ctx));
    }
    return o;
  }

  /** The connector's request; a repeat rebuilds the same receipt (the provider compares it under the same key). */
  private async request(r: ClaimedRefund) {
    const rub = rubOfRefund(r);
    return {
      refundId: r.id, paymentId: r.paymentId, paymentRef: r.paymentRef, amount: r.amount, amountRub: r.amountRub, currency: r.currency, fromCard: r.fromCard,
      receipt: (rub ? await refundReceiptOf(this.db.pool, r.paymentId, rub) : null) ?? undefined,
      // A repeat carries when it was first sent and the payment's other refunds (CreateRefund.firstSentAt, .siblings).
      ...(r.sentAt !== null ? { firstSentAt: r.sentAt, siblings: await refundSiblingsRub(this.db.pool, r.paymentId, r.id) } : {}),
    };
  }

  /**
   * A provider's answer about a refund (its notification), by our id or by the connector and its
   * reference: applied once through the state table and the ledger. Only a final answer about
   * a PROCESS refund of that connector changes anything.
   */
  async applyProviderOutcome(
    target: { id: string; connector?: string } | { connector: string; ref: string }, outcome: OperationOutcome, tx?: Queryable, via = 'notification',
  ): Promise<{ changed: boolean; status: RefundStatus | null; id?: string; conflict?: boolean }> {
    // In the caller's transaction when given (a notification's dedupe row commits with it).
    return inTxOr(this.db.pool, tx, async (c) => {
      const q = 'id' in target
        ? await c.query<{ id: string; connector: string }>(`SELECT id, coalesce(connector, 'sandbox') AS connector FROM refunds WHERE id = $1 FOR UPDATE`, [target.id])
        : await c.query<{ id: string; connector: string }>(
          `SELECT id, coalesce(connector, 'sandbox') AS connector FROM refunds WHERE connector = $1 AND provider_ref = $2 FOR UPDATE`, [target.connector, target.ref],
        );
      const hit = q.rows[0];
      if (!hit) return { changed: false, status: null };
      const r = (await lockRefund(c, hit.id))!;
      if (target.connector !== undefined && hit.connector !== target.connector) return { changed: false, status: r.status };
      if (!isFinal(outcome)) return { changed: false, status: r.status, id: r.id };
      if (r.status !== 'PROCESS') {
        // Against a final status only a read of the provider moves money (see PayoutService).
        const conflict = isProviderRead(via) && await this.providerAfterFinal(c, r, hit.connector, outcome, via);
        return conflict ? { changed: false, status: r.status, id: r.id, conflict } : { changed: false, status: r.status, id: r.id };
      }
      const to = await this.finishIn(c, r, outcome);
      await closeAttention(c, 'refund', r.id, { resolution: to, note: 'the provider answered', by: 'provider' });
      return { changed: true, status: to, id: r.id };
    });
  }

  /**
   * A provider's final answer about a refund final already, in the caller's transaction with the
   * refund locked: where it contradicts our status (a refund we failed that the provider made,
   * one we made SUCCESS that it failed) the conflict is recorded, the money follows the provider
   * (REFUND_CONFLICT_DEBIT, which may take available below zero, or REFUND_CONFLICT_CREDIT), the
   * payment's refunded total with it, and a second refund postback carries the provider's status.
   * Once per refund; true when recorded now.
   */
  private async providerAfterFinal(c: Queryable, r: RefundRecord, connector: string, o: FinalOutcome, via: string): Promise<boolean> {
    if (r.status === 'PROCESS' || !contradicts(r.status === 'SUCCESS', o.status)) return false;
    const made = o.status === 'succeeded';
    const money = { refundId: r.id, paymentId: r.paymentId, merchantId: r.merchantId, currency: r.currency, amount: r.amount };
    const ref = await c.query<{ provider_ref: string | null }>(`SELECT provider_ref FROM refunds WHERE id = $1`, [r.id]);
    const recorded = await recordConflict(c, {
      objectType: 'refund', objectId: r.id, merchantId: r.merchantId, connector, providerRef: ref.rows[0]?.provider_ref ?? o.ref,
      ours: r.status, provider: { status: o.status, ref: o.ref, ...(o.status === 'failed' ? { code: o.code, message: o.message } : {}), via },
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
    const shop = await paymentShopOf(c, r.paymentId);
    await enqueueEvent(c, {
      merchantId: r.merchantId, kind: 'REFUND_POSTBACK', aggregateId: `${r.id}:conflict`, url: shop.resultUrl,
      fields: {
        Id: r.id, PaymentId: r.paymentId, BillId: shop.billId, InvId: shop.orderId ?? '', Amount: money2(r.amount),
        Currency: r.currency, Status: made ? 'SUCCESS' : 'FAIL',
      },
    });
    return true;
  }

  /** The provider's answer about a refund now (its connector's get_refund), outside any transaction; null when it cannot be asked. */
  async askProvider(id: string): Promise<OperationOutcome | null> {
    const r = await this.db.pool.query<{ connector: string; provider_ref: string | null }>(
      `SELECT coalesce(connector, 'sandbox') AS connector, provider_ref FROM refunds WHERE id = $1`, [id]);
    const row = r.rows[0];
    if (!row) return null;
    const c = await this.connectors.get(row.connector);
    if (!c) return null;
    return this.connectors.call(c, 'get_refund', (ctx) => c.getRefund({ refundId: id, ref: row.provider_ref }, ctx));
  }

  /**
   * The operator's decision on a refund reconciliation gave up on: SUCCESS or FAIL through the
   * same state table and ledger, the item closed with the note and who decided, in one
   * transaction. 404 for no such refund item, 409 when resolved already or final otherwise.
   */
  async resolveAttention(id: string, outcome: unknown, note: string | null, actor: string): Promise<AttentionRow> {
    const to = parseResolution(outcome);
    return withPgTx(this.db.pool, async (c) => {
      const item = await lockOpenAttention(c, id, 'refund');
      await this.applyOperatorDecision(c, item.object_id, to, note);
      return resolveItem(c, id, { resolution: to, note, by: actor });
    });
  }

  /**
   * The operator's decision applied to the refund in the caller's transaction (the attention
   * item is the caller's to lock and close): PROCESS -> the decision; already there, nothing;
   * final otherwise, 409.
   */
  async applyOperatorDecision(c: Queryable, refundId: string, to: 'SUCCESS' | 'FAIL', note: string | null): Promise<void> {
    const r = (await lockRefund(c, refundId))!;
    if (r.status === 'PROCESS') {
      await this.finishIn(c, r, to === 'SUCCESS'
        ? { status: 'succeeded', ref: null }
        : { status: 'failed', code: 'operator', message: `operator: ${note ?? 'resolved as FAIL'}`, ref: null });
    } else if (r.status !== to) {
      throw new IllegalRefundTransitionError(r.status, to);
    }
  }

  /** PROCESS -> SUCCESS or FAIL in its own transaction (nothing when another worker finished it). */
  private async finish(id: string, outcome: FinalOutcome, closedBy: string | null): Promise<void> {
    await withPgTx(this.db.pool, async (c) => {
      const r = await lockRefund(c, id);
      if (!r) return;
      // Final meanwhile (another worker after our lease expired, an operator's decision): the
      // answer is still heard, and recorded as a conflict where it contradicts.
      if (r.status !== 'PROCESS') {
        const via = await c.query<{ connector: string }>(`SELECT coalesce(connector, 'sandbox') AS connector FROM refunds WHERE id = $1`, [id]);
        await this.providerAfterFinal(c, r, via.rows[0]!.connector, outcome, 'reconciliation');
        return;
      }
      const to = await this.finishIn(c, r, outcome);
      if (closedBy) await closeAttention(c, 'refund', id, { resolution: to, note: 'the provider answered', by: closedBy });
    });
  }

  /**
   * PROCESS -> SUCCESS (debit locked) or FAIL (locked back to available, room back on the
   * payment), with its postback, in the caller's transaction with the refund locked.
   */
  private async finishIn(c: Queryable, r: RefundRecord, outcome: FinalOutcome): Promise<'SUCCESS' | 'FAIL'> {
    const ok = outcome.status === 'succeeded';
    const to = ok ? 'SUCCESS' : 'FAIL';
    assertTransition(r.status, to);
    await finishRefund(c, r.id, to, outcome.status === 'failed' ? outcome.message : null, outcome.ref);
    const money = { refundId: r.id, paymentId: r.paymentId, merchantId: r.merchantId, currency: r.currency, amount: r.amount };
    if (ok) {
      const via = await c.query<{ connector: string; amount_rub: string | null }>(
        `SELECT coalesce(connector, 'sandbox') AS connector, amount_rub::text FROM refunds WHERE id = $1`, [r.id]);
      const v = via.rows[0]!;
      await post(c, refundSucceeded(money));
    } else {
      await post(c, refundReturned(money));
      await addRefunded(c, r.paymentId, r.amount.neg());
    }
    // The refund postback commits with the final status (transactional outbox).
    const shop = await paymentShopOf(c, r.paymentId);
    await enqueueEvent(c, {
      merchantId: r.merchantId, kind: 'REFUND_POSTBACK', aggregateId: r.id, url: shop.resultUrl,
      fields: {
        Id: r.id, PaymentId: r.paymentId, BillId: shop.billId, InvId: shop.orderId ?? '', Amount: money2(r.amount),
        Currency: r.currency, Status: to,
      },
    });
    return to;
  }
}

/** Refunds are granted per merchant by the operator (spec part 5.4): else 403. */
export function assertGrant(m: RefundActor): void {
  if (!m.grantRefunds) throw new UnauthorizedActionError();
}
