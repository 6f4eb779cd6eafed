import { withPgTx, type Db } from '../../db/client.js';
import { heard } from '../attention/attention.service.js';
import type { PaymentService } from '../payment/payment.service.js';
import type { ParsedNotification } from './connector.js';
import { contradictsStatus, recordUnconfirmed, type ProviderWord } from './conflict.js';
import type { KindEntry, OperationKinds } from '../operations/kinds.js';
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
 * key) and applied in the same transaction through the object's state table and the ledger,
 * by its kind in the one map of operation kinds (src/domain/operations/kinds.ts), so a
 * duplicate or an out-of-order one changes nothing.
 */
export class ProviderNotificationService {
  constructor(
    private readonly db: Db,
    private readonly kinds: OperationKinds,
    /** A register's report names a payment: found as a payment's notification finds it. */
    private readonly payments: Pick<PaymentService, 'findAtConnector'>,
  ) {}

  async apply(connector: string, n: VerifiedNotification): Promise<NotificationResult> {
    if (n.object === 'receipt') return this.applyReceipt(connector, n);
    const kind = this.kinds[n.object];
    // The object it was about and its status after the apply (for a contradiction's read).
    let seen: { id: string; status: string | null } | null = null;
    try {
      const applied = await withPgTx(this.db.pool, async (tx): Promise<'applied' | 'duplicate'> => {
        const ins = await tx.query(
          `INSERT INTO provider_notifications (connector, event_key, object_type, object_id, provider_ref, outcome)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb) ON CONFLICT (connector, event_key) DO NOTHING`,
          [connector, n.eventKey, n.object, n.ourId, n.ref, JSON.stringify(heard(n.outcome))]);
        if (ins.rowCount !== 1) return 'duplicate';
        const target = n.ourId ? { id: n.ourId, connector } : { connector, ref: n.ref };
        const done = await kind.apply(target, n.outcome, { tx, via: 'notification' });
        if (done.status === null) throw new NotOurs();
        if (n.ourId ?? done.id) seen = { id: (n.ourId ?? done.id)!, status: done.status };
        // Which of our objects it was about (found by the provider's reference): kept with the record.
        if (done.id && !n.ourId) {
          await tx.query(`UPDATE provider_notifications SET object_id = $3 WHERE connector = $1 AND event_key = $2`, [connector, n.eventKey, done.id]);
        }
        return 'applied';
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
        const paymentId = await this.payments.findAtConnector(connector, n.ourId, n.ref, tx);
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
    const { lifecycle } = this.kinds[n.object];
    const word = providerWord(this.kinds[n.object], n.outcome);
    if (word === null || !contradictsStatus(n.object, seen.status, word.status)) return;
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

/** What a verified notification says as a final word, in its kind's words (null: not final). */
function providerWord({ lifecycle: { kind } }: KindEntry, o: unknown): ProviderWord | null {
  const word = kind.finalOf(o) === null ? null : kind.wordOf(o);
  return word === null ? null : { ...word, via: 'notification' };
}
