import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import type { Db, InTx, Queryable } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import type { PaymentStatus } from '../../generated/prisma/enums.js';
import { Lifecycle, type LifecycleObserver } from '../operations/lifecycle.js';
import type { ConflictLog } from '../providers/conflict.js';
import type { PaymentOutcome, ProviderData } from '../providers/connector.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import type { PayInput } from './pay-input.js';
import type { PayOutcome } from './payment-finish.js';
import { PaymentHolds, type HoldRequest, type HoldSettled } from './payment-hold.js';
import { PaymentOpening, type ChargeOf, type OpenedPayment, type PayInputOf } from './payment-open.js';
import { PaymentOperation, type DueCheck, type PaymentSend } from './payment.operation.js';
import * as repo from './payment.repository.js';
import type { PaymentRow } from './payment.repository.js';

export type { PayableBill, Quote } from './payable-bill.js';
export type { PayOutcome, RedirectFields } from './payment-finish.js';
export type { HoldRequest, HoldSettled } from './payment-hold.js';
export { FormAlreadyUsedError, type ChargeOf, type OpenedPayment, type PayInputOf } from './payment-open.js';
export type { DueCheck } from './payment.operation.js';

/** What applying a provider's answer did: `applied` only when this call made the payment final. */
export interface ApplyResult { applied: boolean; status: PaymentStatus; conflict?: boolean }

/**
 * The payer's and the merchant's commands on payments: paying a bill, a saved card's charge, a
 * hold's capture or cancellation, a provider's answer applied, and the reads the faces use.
 * Every call to a provider goes through the payment's lifecycle (`PaymentOperation`, a kind
 * of src/domain/operations/lifecycle.ts); the SQL is payment.repository.ts's.
 */
export class PaymentService {
  /** The payment's part in the provider-operation lifecycle. */
  readonly lifecycle: Lifecycle<PaymentStatus, PaymentRow, PaymentOutcome, PaymentSend, PayOutcome>;
  private readonly operation: PaymentOperation;
  private readonly opening: PaymentOpening;
  private readonly holds: PaymentHolds;

  constructor(
    config: Config,
    private readonly db: Db,
    readonly connectors: ConnectorRegistry,
    observer?: LifecycleObserver,
    log?: ConflictLog,
  ) {
    this.operation = new PaymentOperation(config, db.pool, connectors);
    this.lifecycle = new Lifecycle<PaymentStatus, PaymentRow, PaymentOutcome, PaymentSend, PayOutcome>(this.operation, { pool: db.pool, giveUpMs: config.reconcileGiveUpMs, observer, log });
    this.opening = new PaymentOpening(config, connectors);
    this.holds = new PaymentHolds(db.pool, this.lifecycle, this.operation);
  }

  /**
   * Pays a bill; the payer's request opens the payment and sends it: `pay_open` locks the bill,
   * checks it and opens the payment (payment PROCESS, NORMAL bill -> PROCESS, the first
   * connector on record); the lifecycle's send phase calls the connector outside any
   * transaction and a final answer is finished in ONE statement (`pay_finish`, atomic on its
   * own: no BEGIN/COMMIT round trips on the hot path); anything else keeps it PROCESS for the
   * payer's page, notifications and reconciliation. A NORMAL bill thus has at most one running
   * payment and at most one that receives money.
   */
  async pay(billId: string, input: PayInput | PayInputOf, ctx: { ip?: string; formNonce?: string } = {}): Promise<PayOutcome> {
    return this.sendOpened(await this.opening.open(this.db.pool, billId, input, ctx.ip ?? null, ctx.formNonce ?? null));
  }

  /**
   * Opens the payment of a saved card's charge in the caller's transaction (the one that wrote its
   * bill; docs/adr/0074-saved-cards-and-recurring-charges.md): the method's connector only, no payer.
   * `sendOpened` then sends it, after the commit.
   */
  openCharge(c: Queryable, billId: string, charge: ChargeOf): Promise<OpenedPayment> {
    return this.opening.open(c, billId, { method: 'BANK_CARD', payer: { email: charge.payer.email, phone: charge.payer.phone, name: null, comment: null } }, null, null, charge);
  }

  /** An opened payment sent through the lifecycle: a final answer applied once, anything else kept PROCESS. */
  async sendOpened(opened: OpenedPayment): Promise<PayOutcome> {
    const { paymentId, bill, quote } = opened;
    const sent = await this.lifecycle.send({ id: paymentId, connector: opened.candidates[0]?.name ?? null, ref: null, sentAt: null, checkAttempts: 0, opened });
    if (sent.finished) return sent.finished;
    if (sent.applied === null) {
      // No final answer (an action the payer must take, a pending operation, a timeout): the
      // payment stays PROCESS with the connector that has it and its reference; nothing is
      // guessed. The payer's page polls it; notifications and reconciliation finish it.
      const action = sent.outcome.status === 'action' ? sent.outcome.action : null;
      return { bill, paymentId, billId: bill.id, status: 'PROCESS', amountRub: quote.dueRub, amountReceivedRub: new Decimal(0), redirect: null, action };
    }
    // Final before this answer came: the answer was heard as a read; the payer gets the payment as it is.
    await this.operation.savedLate_(this.db.pool, paymentId, sent.outcome, sent.applied);
    const now = (await repo.readPayment(this.db.pool, paymentId))!;
    return {
      bill, paymentId, billId: bill.id, status: now.status, amountRub: quote.dueRub,
      amountReceivedRub: new Decimal(now.amount_received), redirect: null, action: null, method: opened.input.method,
      failureReason: now.status === 'FAIL' ? now.failure_reason : null,
    };
  }

  /**
   * Applies a provider's answer about a payment (the payer's return, a notification,
   * reconciliation) through the lifecycle: once, in one transaction (the caller's when `tx` is
   * given) with the payment locked; `finish_` is the one writer, guarded by the state table, so
   * the ledger is credited once. A payment already final, or a second answer, changes nothing
   * and is no error (a read that contradicts it is a conflict). `action` and `pending` keep it
   * PROCESS with the action and the reference stored; `refused` and `unknown` (the provider
   * could not be asked) change nothing. `attempts` (reconciliation) is how many times the
   * provider has been asked so far. `via`: how the answer reached us ('notification',
   * 'reconciliation', 'read', 'resolve', 'notification+read').
   */
  async applyOutcome(paymentId: string, outcome: PaymentOutcome, opts: { attempts?: number; tx?: Queryable; via?: string } = {}): Promise<ApplyResult> {
    const done = await this.lifecycle.applyAnswer({ id: paymentId }, outcome, { tx: opts.tx, via: opts.via ?? 'provider', attempts: opts.attempts });
    if (done.status === null) throw new DomainError('payment_not_found');
    await this.operation.savedLate_(opts.tx ?? this.db.pool, paymentId, outcome, done);
    return { applied: done.applied, status: done.status, ...(done.conflict ? { conflict: true } : {}) };
  }

  /**
   * Asks the connector that has a payment in PROCESS for its status (outside any transaction,
   * timed) and applies the answer once (the payer's page, the sandbox bank's return); `via` 'read'.
   * `data`: what its connector's answers kept, as the payment was read (docs/adr/0118).
   */
  async askProvider(p: { id: string; connector: string | null; ref: string | null; data: ProviderData | null }): Promise<{ outcome: PaymentOutcome; result: ApplyResult }> {
    const outcome = await this.operation.reconcileFromProvider_(p);
    return { outcome, result: await this.applyOutcome(p.id, outcome, { via: 'read' }) };
  }

  /** Our payment at `connector` by our id or the provider's reference (inbound notifications); null when unknown there. */
  findAtConnector(connector: string, ourId: string | null, ref: string, c: Queryable = this.db.pool): Promise<string | null> {
    return repo.findAtConnector(c, connector, ourId, ref);
  }

  /**
   * Two-stage (docs/adr/0073-two-stage-payments.md): captures a held payment, `amount` RUB (at
   * most what is held; null: all of it, or the capture asked for before), once whatever the
   * repeats; its answer applied through the lifecycle (PROCESS -> SUCCESS once: the ledger
   * credits what was captured, the postback says it). 404 no such payment, 409 not held (or
   * cancelled, or another amount asked for), 422 `amount` not in (0, held].
   */
  captureHold(paymentId: string, amount: Decimal | null, audit?: InTx<HoldRequest>, merchantId?: string): Promise<HoldSettled> {
    return this.holds.settle(paymentId, 'capture', amount, audit, merchantId);
  }

  /** Two-stage: releases a held payment (PROCESS -> FAIL, nothing credited, the FAIL postback); once, as captureHold. `merchantId`: only its own. */
  cancelHold(paymentId: string, audit?: InTx<HoldRequest>, merchantId?: string): Promise<HoldSettled> {
    return this.holds.settle(paymentId, 'cancel', null, audit, merchantId);
  }

  /** What a merchant's payment holds that may still be captured or cancelled (the cabinet's buttons); null when nothing. */
  async capturable(merchantId: string, paymentId: string): Promise<Decimal | null> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(paymentId)) return null;
    const held = await repo.capturableOf(this.db.pool, merchantId, paymentId);
    return held === null ? null : new Decimal(held);
  }

  /**
   * Claims payments in PROCESS that are due to be asked (reconciliation), oldest check first:
   * their next check moves `leaseMs` ahead, so another worker skips them while this one asks;
   * applying the answer or deferring it sets the real next one.
   */
  async claimDueChecks(limit: number, leaseMs: number): Promise<DueCheck[]> {
    return (await repo.claimDue(this.db.pool, limit, leaseMs))
      .map((x) => ({ id: x.id, connector: x.connector, ref: x.provider_ref, data: x.provider_data, checkAttempts: x.check_attempts, sentAt: x.created_at }));
  }

  /**
   * One claimed payment through the lifecycle: its connector asked, a final answer applied once,
   * anything else asked again with backoff and, past RECONCILE_GIVE_UP_MS, an attention item (a
   * late answer still settles it). `giveUpMs`: the worker's RECONCILE_GIVE_UP_MS.
   */
  async processClaimed(p: DueCheck, giveUpMs?: number): Promise<void> {
    await this.lifecycle.run(p, giveUpMs);
  }

  /** Gives back checks claimed but never asked (a worker stopping): due again at once. */
  releaseChecks(ids: string[]): Promise<void> {
    return repo.releaseDue(this.db.pool, ids);
  }
}
