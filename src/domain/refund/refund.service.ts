import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import { isMoneyReceived } from '../statuses.js';
import { UnauthorizedActionError, ValidationError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { isValidAmount, money2 } from '../../lib/money.js';
import { post } from '../ledger/ledger.js';
import { refundCreated, refundReturned, refundSucceeded } from '../ledger/postings.js';
import { enqueueEvent } from '../../outbox/events.js';
import type { AuthMerchant } from '../merchant/merchant-guard.js';
import type { OperationOutcome } from '../providers/connector.js';
import { ConnectorRegistry } from '../providers/registry.js';
import {
  addRefunded, claimDueRefunds, paymentShopOf, findRefund, finishRefund, insertRefund, latestRefundOfPayment, lockPayment, lockRefund,
  refundsOfPayment, type ClaimedRefund, type RefundRecord,
} from './refund.repository.js';
import { assertTransition } from './refund.states.js';

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
      const refund = await insertRefund(c, {
        id: newId(), merchantId: m.id, paymentId, amount, currency: p.accountCurrency, delayMs: this.config.sandboxProcessingDelayMs,
      });
      await addRefunded(c, paymentId, amount);
      // Overdraft: the ledger throws balance_not_enough and withPgTx rolls everything back.
      await post(c, refundCreated({ refundId: refund.id, paymentId, merchantId: m.id, currency: p.accountCurrency, amount }));
      await inTx?.(c, refund);
      return refund;
    });
  }

  /**
   * One worker pass: claims due refunds (NEW -> PROCESS), asks the connector that took the
   * payment outside any transaction, then finishes each final answer in its own transaction.
   * No final answer (a refusal, a timeout, still running, the connector disabled) leaves the
   * refund PROCESS: its lease expires and it is asked again with the same refund id (the
   * provider's idempotency key). Returns how many were claimed.
   */
  async processDue(limit = 20): Promise<number> {
    const claimed = await claimDueRefunds(this.db.pool, limit, this.config.workerLeaseMs);
    const errors: unknown[] = [];
    for (const r of claimed) {
      // A refund that fails to finish here keeps its lease and is taken again when it expires;
      // the others of the batch still finish.
      try {
        const outcome = await this.askConnector(r);
        if (outcome.status === 'succeeded' || outcome.status === 'failed') await this.finish(r.id, outcome);
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, `${errors.length} refund(s) could not be finished`);
    return claimed.length;
  }

  private async askConnector(r: ClaimedRefund): Promise<OperationOutcome> {
    const c = await this.connectors.get(r.connector);
    if (!c) return { status: 'refused', code: 'connector_unavailable', message: `connector ${r.connector} is disabled or not available` };
    return this.connectors.call(c, 'refund', (ctx) => c.refund({
      refundId: r.id, paymentId: r.paymentId, paymentRef: r.paymentRef, amount: r.amount, currency: r.currency, fromCard: r.fromCard,
    }, ctx));
  }

  /** PROCESS -> SUCCESS (debit locked) or FAIL (locked back to available, room back on the payment). */
  private async finish(id: string, outcome: Extract<OperationOutcome, { status: 'succeeded' | 'failed' }>): Promise<void> {
    await withPgTx(this.db.pool, async (c) => {
      const r = await lockRefund(c, id);
      // Another worker finished it after our lease expired: nothing left to do.
      if (!r || r.status !== 'PROCESS') return;
      const ok = outcome.status === 'succeeded';
      const to = ok ? 'SUCCESS' : 'FAIL';
      assertTransition(r.status, to);
      await finishRefund(c, id, to, outcome.status === 'failed' ? outcome.message : null, outcome.ref);
      const money = { refundId: id, paymentId: r.paymentId, merchantId: r.merchantId, currency: r.currency, amount: r.amount };
      if (ok) {
        await post(c, refundSucceeded(money));
      } else {
        await post(c, refundReturned(money));
        await addRefunded(c, r.paymentId, r.amount.neg());
      }
      // The refund postback commits with the final status (transactional outbox).
      const shop = await paymentShopOf(c, r.paymentId);
      await enqueueEvent(c, {
        merchantId: r.merchantId, kind: 'REFUND_POSTBACK', aggregateId: id, url: shop.resultUrl,
        fields: {
          Id: id, PaymentId: r.paymentId, BillId: shop.billId, InvId: shop.orderId ?? '', Amount: money2(r.amount),
          Currency: r.currency, Status: to,
        },
      });
    });
  }
}

/** Refunds are granted per merchant by the operator (spec part 5.4): else 403. */
export function assertGrant(m: RefundActor): void {
  if (!m.grantRefunds) throw new UnauthorizedActionError();
}
