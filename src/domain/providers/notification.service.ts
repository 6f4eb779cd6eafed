import { withPgTx, type Db } from '../../db/client.js';
import { heard } from '../attention/attention.service.js';
import type { PaymentService } from '../payment/payment.service.js';
import type { RefundService } from '../refund/refund.service.js';
import type { PayoutService } from '../payout/payout.service.js';
import type { OperationOutcome, ParsedNotification, PaymentOutcome } from './connector.js';
import { contradictsStatus, recordUnconfirmed, type ProviderWord } from './conflict.js';
import type { AnyLifecycle } from '../operations/lifecycle.js';
import { isFinal } from '../operations/reconcile.js';
import { recordReceiptFailure } from '../receipt/register-failures.js';

/** A verified, parsed notification (what `parseNotification` answers when `ok`). */
export type VerifiedNotification = Extract<ParsedNotification, { ok: true }>;
/** A notification about one of our operations (not a register's report on a receipt). */
type OperationNotification = Exclude<VerifiedNotification, { object: 'receipt' }>;

/**
 * `applied`: recorded and applied now; `duplicate`: recorded before, nothing changed;
 * `not_found`: no object of ours matches, nothing recorded (the provider's retry is applied later).
 */
export type NotificationResult = { result: 'applied' | 'duplicate' } | { result: 'not_found'; object: OperationNotification['object'] };

class NotOurs extends Error {}

/**
 * Inbound provider notifications (PROVIDERS.md "Inbound"): recorded once by (connector, event
 * key) and applied in the same transaction through the object's state table and the ledger (a
 * payment through PaymentService.applyOutcome, refunds and payouts through their services), so
 * a duplicate or an out-of-order one changes nothing.
 */
export class ProviderNotificationService {
  constructor(
    private readonly db: Db,
    private readonly services: { payments: PaymentService; refunds: RefundService; payouts: PayoutService },
  ) {}

  async apply(connector: string, n: VerifiedNotification): Promise<NotificationResult> {
    if (n.object === 'receipt') return this.applyReceipt(connector, n);
    const { payments, refunds, payouts } = this.services;
    // The object it was about and its status after the apply (for a contradiction's read).
    let seen: { id: string; status: string | null } | null = null;
    try {
      const applied = await withPgTx(this.db.pool, async (tx): Promise<'applied' | 'duplicate'> => {
        const ins = await tx.query(
          `INSERT INTO provider_notifications (connector, event_key, object_type, object_id, provider_ref, outcome)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb) ON CONFLICT (connector, event_key) DO NOTHING`,
          [connector, n.eventKey, n.object, n.ourId, n.ref, JSON.stringify(heard(n.outcome))]);
        if (ins.rowCount !== 1) return 'duplicate';
        switch (n.object) {
          case 'payment': {
            const id = await payments.findAtConnector(connector, n.ourId, n.ref, tx);
            if (!id) throw new NotOurs();
            seen = { id, status: (await payments.applyOutcome(id, n.outcome as PaymentOutcome, { tx, via: 'notification' })).status };
            return 'applied';
          }
          // Refunds and payouts: their services apply the answer in this transaction.
          case 'refund':
          case 'payout': {
            const target = n.ourId ? { id: n.ourId, connector } : { connector, ref: n.ref };
            const svc = n.object === 'refund' ? refunds : payouts;
            const done = await svc.applyProviderOutcome(target, n.outcome as OperationOutcome, tx);
            if (done.status === null) throw new NotOurs();
            if (n.ourId ?? done.id) seen = { id: (n.ourId ?? done.id)!, status: done.status };
            // Which of our objects it was about (found by the provider's reference): kept with the record.
            if (done.id && !n.ourId) {
              await tx.query(`UPDATE provider_notifications SET object_id = $3 WHERE connector = $1 AND event_key = $2`, [connector, n.eventKey, done.id]);
            }
            return 'applied';
          }
        }
      });
      if (applied === 'applied' && seen) await this.confirmContradiction(connector, n, seen);
      return { result: applied };
    } catch (e) {
      // Rolled back: nothing was recorded.
      if (e instanceof NotOurs) return { result: 'not_found', object: n.object };
      throw e;
    }
  }

  /**
   * A register's report on a receipt (docs/adr/0088-register-failures-reach-an-operator.md):
   * recorded once; a failure opens a `receipt_failed` attention item naming the payment or the
   * refund, in the same transaction. Nothing else changes: the money moved already.
   */
  private async applyReceipt(connector: string, n: Extract<VerifiedNotification, { object: 'receipt' }>): Promise<NotificationResult> {
    try {
      const applied = await withPgTx(this.db.pool, async (tx): Promise<'applied' | 'duplicate'> => {
        const paymentId = await this.services.payments.findAtConnector(connector, n.ourId, n.ref, tx);
        if (!paymentId) throw new NotOurs();
        const ins = await tx.query(
          `INSERT INTO provider_notifications (connector, event_key, object_type, object_id, provider_ref, outcome)
           VALUES ($1, $2, 'receipt', $3, $4, $5::jsonb) ON CONFLICT (connector, event_key) DO NOTHING`,
          [connector, n.eventKey, paymentId, n.ref, JSON.stringify(heard(n.receipt))]);
        if (ins.rowCount !== 1) return 'duplicate';
        if (n.receipt.failed) await recordReceiptFailure(tx, { connector, paymentId, ref: n.ref, report: n.receipt });
        return 'applied';
      });
      return { result: applied };
    } catch (e) {
      if (e instanceof NotOurs) return { result: 'not_found', object: 'payment' };
      throw e;
    }
  }

  /**
   * A notification that contradicts a final status (docs/adr/0021-provider-answer-after-final-state.md) is an event, maybe stale or out of order: the provider is read once more
   * (outside any transaction) and the read decides, through the same path as reconciliation
   * (`via` 'notification+read': a conflict whose money follows the provider). When the read
   * cannot say, the conflict is recorded for the operator; money it says left (a payout or refund
   * it says it made) is held from available meanwhile (recordUnconfirmed).
   */
  private async confirmContradiction(connector: string, n: OperationNotification, seen: { id: string; status: string | null }): Promise<void> {
    const word = providerWord(n);
    if (word === null || !contradictsStatus(n.object, seen.status, word.status)) return;
    const lifecycle = ({ payment: this.services.payments, refund: this.services.refunds, payout: this.services.payouts } as const)[n.object].lifecycle as AnyLifecycle;
    // The object the notification names (its own reference), whatever we stored: an answer we
    // lost left us none. The connector checks the object it reads is this one of ours.
    const o = await lifecycle.kind.readFromProvider_(seen.id, n.ref);
    if (o !== null && lifecycle.kind.finalOf(o) !== null) {
      await lifecycle.applyAnswer({ id: seen.id }, o, { via: 'notification+read' });
      return;
    }
    await recordUnconfirmed(this.db.pool, { objectType: n.object, objectId: seen.id, connector, provider: word }, lifecycle.log);
  }
}

/** What a verified notification says as a final word (null: not final). */
function providerWord(n: OperationNotification): ProviderWord | null {
  if (n.object === 'payment') {
    const o = n.outcome as PaymentOutcome;
    if (o.status === 'paid') return { status: o.amountReceived.gt(0) ? 'succeeded' : 'failed', ref: o.ref, message: `paid ${o.amountReceived.toFixed(2)}`, via: 'notification' };
    if (o.status === 'declined') return { status: 'failed', ref: o.ref, code: o.code, message: o.message, via: 'notification' };
    return null;
  }
  const o = n.outcome as OperationOutcome;
  if (!isFinal(o)) return null;
  return o.status === 'succeeded' ? { status: 'succeeded', ref: o.ref, via: 'notification' } : { status: 'failed', ref: o.ref, code: o.code, message: o.message, via: 'notification' };
}
