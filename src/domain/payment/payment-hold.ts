import { Decimal } from 'decimal.js';
import type pg from 'pg';
import { withPgTx, type InTx } from '../../db/client.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { PaymentStatus } from '../../generated/prisma/enums.js';
import type { Lifecycle } from '../operations/lifecycle.js';
import type { PaymentOutcome } from '../providers/connector.js';
import type { Receipt } from '../receipt/receipt.js';
import { captureReceiptOf } from '../receipt/receipt.repository.js';
import { receiptFromJson, receiptToJson } from '../receipt/receipt-json.js';
import type { PayOutcome } from './payment-finish.js';
import type { PaymentOperation, PaymentSend } from './payment.operation.js';
import { captureReceiptJson, lockPayment, readPayment, recordHoldRequest, type PaymentRow } from './payment.repository.js';

/** A capture or cancellation of a held payment, as its audit entry records it (RUB). */
export interface HoldRequest { paymentId: string; merchantId: string; kind: 'capture' | 'cancel'; amount: Decimal; held: Decimal }

/** What a capture or cancellation did: the payment's status now (PROCESS: the provider's answer is still awaited). */
export interface HoldSettled { paymentId: string; status: PaymentStatus; amount: Decimal }

/**
 * Two-stage payments (docs/adr/0073-two-stage-payments.md): a held payment's capture or
 * cancellation, recorded once with the payment locked, then sent through the payment's
 * lifecycle (the provider called outside any transaction with our payment id as its
 * idempotency key, its answer heard as a read and applied once).
 */
export class PaymentHolds {
  constructor(
    private readonly pool: pg.Pool,
    private readonly lifecycle: Lifecycle<PaymentStatus, PaymentRow, PaymentOutcome, PaymentSend, PayOutcome>,
    private readonly operation: PaymentOperation,
  ) {}

  /**
   * Captures (`amount` RUB, at most what is held; null: all of it, or the capture asked for
   * before) or cancels a held payment; once whatever the repeats (a repeat must ask the same
   * amount). 404 no such payment (or not `merchantId`'s), 409 not held (or cancelled, or another
   * amount asked for, or the provider refused the request), 422 `amount` not in (0, held].
   */
  async settle(paymentId: string, kind: 'capture' | 'cancel', amount: Decimal | null, audit?: InTx<HoldRequest>, merchantId?: string): Promise<HoldSettled> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(paymentId)) throw new NotFoundError('Payment not found.');
    const { p, want, receipt } = await withPgTx(this.pool, async (c) => {
      const p = await lockPayment(c, paymentId);
      if (!p || (merchantId !== undefined && p.merchant_id !== merchantId)) throw new NotFoundError('Payment not found.');
      if (p.status !== 'PROCESS' || p.authorized_amount === null) {
        throw new ConflictError(p.status === 'PROCESS' ? 'The payment holds no money (yet): nothing to settle.' : `Payment is ${p.status}: it holds nothing any more.`);
      }
      const held = new Decimal(p.authorized_amount);
      let want = held;
      if (kind === 'capture') {
        if (p.cancel_requested) throw new ConflictError('The payment\'s cancellation was asked for already.');
        want = amount ?? (p.capture_amount !== null ? new Decimal(p.capture_amount) : held);
        if (!want.gt(0) || want.decimalPlaces() > 2) throw ValidationError.field('amount', 'A positive amount with at most 2 decimals.');
        if (want.gt(held)) throw ValidationError.field('amount', `At most the ${held.toFixed(2)} RUB held.`);
        if (p.capture_amount !== null && !new Decimal(p.capture_amount).eq(want)) {
          throw new ConflictError(`A capture of ${p.capture_amount} RUB was asked for already.`);
        }
      } else if (p.capture_amount !== null) {
        throw new ConflictError('A capture was asked for already.');
      }
      const first = kind === 'capture' ? p.capture_amount === null : !p.cancel_requested;
      // A fiscalized shop's capture carries the receipt of what is taken (docs/adr/0075), built
      // when the capture is asked for and kept with it: a repeated capture sends that one (docs/adr/0087).
      let receipt: Receipt | null = null;
      if (first) {
        receipt = kind === 'capture' ? await captureReceiptOf(c, paymentId, want) : null;
        const owner = await recordHoldRequest(c, paymentId, kind, want.toFixed(2), receipt ? receiptToJson(receipt) : null);
        await audit?.(c, { paymentId, merchantId: owner, kind, amount: want, held });
      } else if (kind === 'capture') {
        receipt = receiptFromJson(await captureReceiptJson(c, paymentId))?.receipt ?? null;
      }
      return { p, want, receipt };
    });
    const sent = await this.lifecycle.send({
      id: paymentId, connector: p.connector, ref: p.provider_ref, data: p.provider_data, sentAt: new Date(p.created_at), checkAttempts: 0,
      hold: { kind, amount: want, held: new Decimal(p.authorized_amount!), receipt },
    }, { via: 'read' });
    // The provider did not take it: no money moved, the request was withdrawn (it may be made again).
    if (sent.outcome.status === 'refused') throw new ConflictError(`${p.connector} refused the ${kind}: ${sent.outcome.code}: ${sent.outcome.message}`);
    if (sent.applied) await this.operation.savedLate_(this.pool, paymentId, sent.outcome, sent.applied);
    // No final answer (a timeout): it stays PROCESS with the request on record; reconciliation
    // asks the provider and applies what it did.
    const status = sent.applied?.status ?? (await readPayment(this.pool, paymentId))?.status ?? 'PROCESS';
    return { paymentId, status, amount: want };
  }
}
