import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { isMoneyReceived } from '../../kernel/statuses.js';
import { DomainError, UnauthorizedActionError, ValidationError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { keysetPage, type KeysetPage, type KeysetParams } from '../../db/keyset.js';
import { isValidAmount, money2 } from '../../lib/money.js';
import { post } from '../ledger/ledger.js';
import { refundCreated } from '../ledger/postings.js';
import { Lifecycle, type LifecycleObserver } from '../operations/lifecycle.js';
import type { ConflictLog } from '../providers/conflict.js';
import { runDue } from '../operations/kinds.js';
import type { AuthMerchant } from '../merchant/merchant-guard.js';
import type { ConnectorMode, OperationOutcome } from '../providers/connector.js';
import { connectorServes, type ConnectorRegistry } from '../providers/registry.js';
import {
  addRefunded, findRefund, insertRefund, latestRefundOfPayment, lockPayment, refundsOfPayment, REFUND_COLUMNS, toRecord,
  type ClaimedRefund, type LockedRefund, type RefundRecord, type RefundRow,
} from './refund.repository.js';
import { RefundOperation } from './refund.operation.js';
import { refundRub } from './refund-rub.js';
import { refundReceiptOf } from '../receipt/receipt.repository.js';
import { receiptToJson } from '../receipt/receipt-json.js';
import type { RefundStatus } from '../../generated/prisma/enums.js';

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
  /** The refund as an operation kind (refund.operation.ts) and its lifecycle. */
  readonly operation: RefundOperation;
  readonly lifecycle: Lifecycle<RefundStatus, LockedRefund, OperationOutcome, ClaimedRefund>;

  constructor(
    private readonly config: Config,
    private readonly db: Db,
    readonly connectors: ConnectorRegistry,
    observer?: LifecycleObserver,
    log?: ConflictLog,
  ) {
    this.operation = new RefundOperation(db.pool, connectors, config.workerLeaseMs);
    this.lifecycle = new Lifecycle(this.operation, { pool: db.pool, giveUpMs: config.reconcileGiveUpMs, observer, log });
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

  /** One worker pass (tests drive it in place of the loop, src/domain/operations/kinds.ts): how many were claimed. */
  async processDue(limit = 20): Promise<number> {
    return (await runDue({ lifecycle: this.lifecycle, claim: (n) => this.operation.claim(n) }, limit)).claimed;
  }
}

/** Refunds are granted per merchant by the operator (spec part 5.4): else 403. */
export function assertGrant(m: RefundActor): void {
  if (!m.grantRefunds) throw new UnauthorizedActionError();
}
