import type pg from 'pg';
import type { Queryable } from '../../db/client.js';
import { money2 } from '../../lib/money.js';
import { enqueueEvent } from '../../outbox/events.js';
import type { RefundStatus } from '../../generated/prisma/enums.js';
import { post } from '../ledger/ledger.js';
import { refundMadeAfterAll, refundNotMadeAfterAll, refundReturned, refundSucceeded } from '../ledger/postings.js';
import type { Deferred, OperationKind, Target } from '../operations/lifecycle.js';
import { isFinal, isNotFound, reconcileDelayMs, type FinalOutcome } from '../operations/reconcile.js';
import { recordConflict, type ConflictLog, type ProviderWord } from '../providers/conflict.js';
import type { OperationOutcome } from '../providers/connector.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import { receiptFromJson } from '../receipt/receipt-json.js';
import {
  addRefunded, claimDueRefunds, deferRefund, finishRefund, keepRefundHeard, lockRefund, markRefundSent, paymentShopOf, refundConnectorOf,
  refundSiblingsRub, releaseRefundClaims, type ClaimedRefund, type LockedRefund,
} from './refund.repository.js';
import { assertTransition, IllegalRefundTransitionError } from './refund.states.js';

/**
 * The refund as an operation kind of the lifecycle (src/domain/operations/lifecycle.ts): its
 * rows (refund.repository.ts), its connector calls (the connector that took the payment), its
 * state table and its ledger transfers. The lifecycle drives the phases; a `_` method runs in
 * the transaction it is given, a `...FromProvider_` one talks to the provider outside any.
 */
export class RefundOperation implements OperationKind<RefundStatus, LockedRefund, OperationOutcome, ClaimedRefund> {
  readonly type = 'refund' as const;

  constructor(
    /** For what runs outside any transaction: the claim, the record before a call, a read. */
    private readonly pool: pg.Pool,
    private readonly connectors: ConnectorRegistry,
    private readonly leaseMs: number,
  ) {}

  /**
   * Claims up to `limit` due refunds under a lease: NEW -> PROCESS, and PROCESS ones due for a
   * check or left by a dead worker.
   */
  claim(limit: number): Promise<ClaimedRefund[]> {
    return claimDueRefunds(this.pool, limit, this.leaseMs);
  }

  /** Gives back the leases of refunds claimed but never worked on (a worker stopping). */
  release(ids: string[]): Promise<void> {
    return releaseRefundClaims(this.pool, ids);
  }

  lock_(c: Queryable, target: Target): Promise<LockedRefund | null> {
    return lockRefund(c, target);
  }

  finalOf(o: OperationOutcome): RefundStatus | null {
    return isFinal(o) ? (o.status === 'succeeded' ? 'SUCCESS' : 'FAIL') : null;
  }

  wordOf(o: OperationOutcome): Omit<ProviderWord, 'via'> | null {
    return o.status === 'succeeded' ? { status: 'succeeded', ref: o.ref }
      : o.status === 'failed' ? { status: 'failed', ref: o.ref, code: o.code, message: o.message } : null;
  }

  decided(_r: LockedRefund, to: 'SUCCESS' | 'FAIL', note: string | null): OperationOutcome {
    return to === 'SUCCESS'
      ? { status: 'succeeded', ref: null }
      : { status: 'failed', code: 'operator', message: `operator: ${note ?? 'resolved as FAIL'}`, ref: null };
  }

  illegal(from: RefundStatus, to: RefundStatus): Error {
    return new IllegalRefundTransitionError(from, to);
  }

  /**
   * PROCESS -> SUCCESS (debit locked) or FAIL (locked back to available, room back on the
   * payment), with its postback, in the lifecycle's transaction with the refund locked.
   */
  async finish_(c: Queryable, r: LockedRefund, o: OperationOutcome): Promise<'SUCCESS' | 'FAIL'> {
    const outcome = o as FinalOutcome;
    const ok = outcome.status === 'succeeded';
    const to = ok ? 'SUCCESS' : 'FAIL';
    assertTransition(r.status, to);
    await finishRefund(c, r.id, to, outcome.status === 'failed' ? outcome.message : null, outcome.ref, o.data ?? null);
    const money = { refundId: r.id, paymentId: r.paymentId, merchantId: r.merchantId, currency: r.currency, amount: r.amount };
    if (ok) {
      await post(c, refundSucceeded(money));
    } else {
      await post(c, refundReturned(money));
      await addRefunded(c, r.paymentId, r.amount.neg());
    }
    // The refund postback commits with the final status (transactional outbox).
    await this.postback_(c, r, to, r.id);
    return to;
  }

  /**
   * A provider's final answer about a refund final already that contradicts it (a refund we
   * failed that the provider made, one we made SUCCESS that it failed), in the lifecycle's
   * transaction with the refund locked: the money follows the provider (REFUND_CONFLICT_DEBIT,
   * which may take available below zero, or REFUND_CONFLICT_CREDIT), the payment's refunded
   * total with it, and a second refund postback carries the provider's status. Once per refund;
   * true when recorded now.
   */
  async conflict_(c: Queryable, r: LockedRefund, _o: OperationOutcome, word: ProviderWord, log: ConflictLog): Promise<boolean> {
    const made = word.status === 'succeeded';
    const money = { refundId: r.id, paymentId: r.paymentId, merchantId: r.merchantId, currency: r.currency, amount: r.amount };
    const recorded = await recordConflict(c, {
      objectType: 'refund', objectId: r.id, merchantId: r.merchantId, connector: r.connector, providerRef: r.ref ?? word.ref,
      ours: r.status, provider: word,
      transfer: made ? refundMadeAfterAll(money) : refundNotMadeAfterAll(money),
    }, log);
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
    await this.postback_(c, r, made ? 'SUCCESS' : 'FAIL', `${r.id}:conflict`);
    return true;
  }

  /** A non-final answer heard outside the worker's question: its reference and provider state kept. */
  hold_(c: Queryable, r: LockedRefund, o: OperationOutcome): Promise<void> {
    return keepRefundHeard(c, r.id, 'ref' in o ? o.ref ?? null : null, o.data ?? null);
  }

  defer_(c: Queryable, r: ClaimedRefund, o: OperationOutcome): Promise<Deferred | null> {
    return deferRefund(c, r.id, 'ref' in o ? o.ref : null, reconcileDelayMs(r.checkAttempts), o.data ?? null);
  }

  /** The first send, outside any transaction; the refund is on record as handed to its connector before the call. */
  async sendFromProvider_(r: ClaimedRefund): Promise<OperationOutcome> {
    const c = await this.connectors.get(r.connector);
    if (!c) return { status: 'refused', code: 'connector_unavailable', message: `connector ${r.connector} is disabled or not available` };
    const req = await this.request(r);
    await markRefundSent(this.pool, r.id);
    return this.connectors.call(c, 'refund', (ctx) => c.refund(req, ctx));
  }

  /**
   * Asks the connector for the refund; where it shows nothing under what we know (no reference
   * yet), the refund is repeated under the same refund id, its idempotency key: the provider
   * answers the first result or, if it never got it, makes it now.
   */
  async reconcileFromProvider_(r: ClaimedRefund): Promise<OperationOutcome> {
    const c = await this.connectors.get(r.connector);
    if (!c) return { status: 'unknown', ref: null, reason: `connector ${r.connector} is disabled or not available` };
    const o = await this.connectors.call(c, 'get_refund', (ctx) => c.getRefund({ refundId: r.id, ref: r.ref, data: r.data }, ctx));
    if (isNotFound(o) && r.ref === null) {
      const req = await this.request(r);
      return this.connectors.call(c, 'refund', (ctx) => c.refund(req, ctx));
    }
    return o;
  }

  /** The provider's answer about a refund now (its connector's get_refund), outside any transaction; null when it cannot be asked. */
  async readFromProvider_(id: string, ref?: string | null): Promise<OperationOutcome | null> {
    const row = await refundConnectorOf(this.pool, id);
    if (!row) return null;
    const c = await this.connectors.get(row.connector);
    if (!c) return null;
    return this.connectors.call(c, 'get_refund', (ctx) => c.getRefund({ refundId: id, ref: ref ?? row.ref, data: row.data }, ctx));
  }

  /** The connector's request; every send carries the receipt kept with the refund (docs/adr/0087), so a repeat is the same request. */
  private async request(r: ClaimedRefund) {
    const stored = receiptFromJson(r.receipt);
    return {
      refundId: r.id, paymentId: r.paymentId, paymentRef: r.paymentRef, amount: r.amount, amountRub: r.amountRub, currency: r.currency, fromCard: r.fromCard,
      ...(stored ? { receipt: stored.receipt, ...(stored.whole ? { whole: true } : {}) } : {}),
      // A repeat carries when it was first sent and the payment's other refunds (CreateRefund.firstSentAt, .siblings).
      ...(r.sentAt !== null ? { firstSentAt: r.sentAt, siblings: await refundSiblingsRub(this.pool, r.paymentId, r.id) } : {}),
    };
  }

  /** The merchant's refund postback (`aggregateId`: the refund's, or its conflict's). */
  private async postback_(c: Queryable, r: LockedRefund, status: 'SUCCESS' | 'FAIL', aggregateId: string): Promise<void> {
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
