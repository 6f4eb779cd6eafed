import { Decimal } from 'decimal.js';
import type { Db, Queryable } from '../../db/client.js';
import { withPgTx } from '../../db/client.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { randomId } from '../../lib/ids.js';
import type { PaymentService } from '../payment/payment.service.js';
import type { OperationOutcome, PaymentOutcome } from '../providers/connector.js';
import { isFinal } from '../providers/operation-reconcile.js';
import { runPaymentById } from '../payment/payment-by-id.js';

export type AttentionObject = 'payment' | 'payout' | 'refund';

/** An operation reconciliation gave up on (PROVIDERS.md "Unknown outcomes are never guessed"). */
export interface AttentionItem {
  id: string;
  objectType: AttentionObject;
  objectId: string;
  merchantId: string;
  connector: string;
  providerRef: string | null;
  /** 'unknown_outcome': reconciliation gave up; 'conflict': the provider contradicted a final state (src/domain/providers/conflict.ts). */
  kind: 'unknown_outcome' | 'conflict';
  reason: string;
  lastHeard: Record<string, unknown>;
  createdAt: Date;
  resolvedAt: Date | null;
  resolution: string | null;
  note: string | null;
  resolvedBy: string | null;
}

interface Row {
  id: string; object_type: AttentionObject; object_id: string; merchant_id: string; connector: string; provider_ref: string | null;
  kind: 'unknown_outcome' | 'conflict'; reason: string; last_heard: Record<string, unknown>; created_at: Date; resolved_at: Date | null; resolution: string | null;
  note: string | null; resolved_by: string | null;
}
const COLUMNS = 'id, object_type, object_id, merchant_id, connector, provider_ref, kind, reason, last_heard, created_at, resolved_at, resolution, note, resolved_by';
const toItem = (r: Row): AttentionItem => ({
  id: r.id, objectType: r.object_type, objectId: r.object_id, merchantId: r.merchant_id, connector: r.connector, providerRef: r.provider_ref,
  kind: r.kind, reason: r.reason, lastHeard: r.last_heard, createdAt: r.created_at, resolvedAt: r.resolved_at, resolution: r.resolution, note: r.note,
  resolvedBy: r.resolved_by,
});

/** What another area resolves for its own objects (payouts, refunds), in the operator's transaction. */
export interface AttentionResolver {
  applyOperatorDecision(c: Queryable, objectId: string, to: 'SUCCESS' | 'FAIL', note: string | null, connector: string): Promise<void>;
  /** The provider's answer now (outside any transaction); null when it cannot be asked. */
  askProvider(objectId: string): Promise<OperationOutcome | null>;
  /** A provider's answer applied in the caller's transaction (the same path as its notification). */
  applyProviderOutcome(target: { id: string }, outcome: OperationOutcome, tx: Queryable, via: string): Promise<{ status: string | null }>;
}

/** What the provider answered when asked before an operator's decision: its final status, or null (it still cannot say). */
type ProviderSaid = { kind: 'payment'; outcome: PaymentOutcome } | { kind: 'operation'; outcome: OperationOutcome } | null;

/** The outcome an operator closes a conflict item with: the money already followed the provider; the operator settled the rest. */
export const CONFLICT_SETTLED = 'SETTLED';

/** JSON-safe copy of what a provider said (Decimals as strings). */
export function heard(v: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(v ?? {}, (_k, x) => (x instanceof Decimal ? x.toFixed(2) : x))) as Record<string, unknown>;
}

/**
 * The attention list: operations whose outcome is still unknown after reconciliation gave up.
 * Raised once per object (INSERT ... ON CONFLICT DO NOTHING); the operator's decision goes
 * through the object's own state table and ledger in one transaction with the audit entry.
 */
export class AttentionService {
  constructor(
    private readonly db: Db,
    private readonly payments: PaymentService,
    /** Payouts and refunds apply the operator's decision to their own objects. */
    private readonly resolvers: Record<'payout' | 'refund', AttentionResolver>,
  ) {}

  /** Raises an item (once per object); true when this call raised it. */
  async raise(i: { objectType: AttentionObject; objectId: string; merchantId: string; connector: string; providerRef: string | null; reason: string; lastHeard: unknown }): Promise<boolean> {
    const r = await this.db.pool.query(
      `INSERT INTO attention_items (id, object_type, object_id, merchant_id, connector, provider_ref, reason, last_heard)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
       ON CONFLICT ("object_type", "object_id", "kind") DO NOTHING`,
      [`att_${randomId(16)}`, i.objectType, i.objectId, i.merchantId, i.connector, i.providerRef, i.reason, JSON.stringify(heard(i.lastHeard))]);
    return r.rowCount === 1;
  }

  /** Updates what was last heard about an open item (reconciliation keeps asking). */
  async heardAgain(objectType: AttentionObject, objectId: string, lastHeard: unknown): Promise<void> {
    await this.db.pool.query(`UPDATE attention_items SET last_heard = $3::jsonb WHERE object_type = $1 AND object_id = $2 AND kind = 'unknown_outcome' AND resolved_at IS NULL`,
      [objectType, objectId, JSON.stringify(heard(lastHeard))]);
  }

  /** Open items, oldest first. */
  async listOpen(limit = 100): Promise<AttentionItem[]> {
    const r = await this.db.pool.query<Row>(`SELECT ${COLUMNS} FROM attention_items WHERE resolved_at IS NULL ORDER BY created_at, id LIMIT $1`, [limit]);
    return r.rows.map(toItem);
  }

  async get(id: string): Promise<AttentionItem | null> {
    const r = await this.db.pool.query<Row>(`SELECT ${COLUMNS} FROM attention_items WHERE id = $1`, [id]);
    return r.rows[0] ? toItem(r.rows[0]) : null;
  }

  /**
   * Records the operator's decision on an item. An item of an unknown outcome first asks the
   * provider once more (outside any transaction): when it answers a final status, its answer is
   * applied (as its notification would be) and the item is closed by 'provider', with the
   * operator's choice in the note; only when the provider still cannot say does the operator's
   * outcome apply: for a payment SUCCESS (paid what it was to pay) or FAIL through the payment's
   * state table and the ledger, for payouts and refunds through their services. A conflict item
   * is closed with SETTLED (its money moved when it was recorded). `audit` runs in the same
   * transaction. 422 for a bad outcome, 404 unknown item, 409 already resolved or the object
   * already final otherwise.
   */
  async resolve(id: string, body: Record<string, unknown>, by: string, audit: (c: Queryable, before: AttentionItem, after: AttentionItem) => Promise<void>): Promise<AttentionItem> {
    const note = body.note === undefined || body.note === null ? null : body.note;
    if (note !== null && (typeof note !== 'string' || note.length > 2000)) throw ValidationError.field('note', 'The note must be a string of at most 2000 characters.');
    const outcome = body.outcome;
    const pre = await this.get(id);
    if (!pre) throw new NotFoundError('Attention item not found.');
    this.checkOutcome(pre, outcome);
    if (pre.resolvedAt) throw new ConflictError(`Attention item is already resolved (${pre.resolution}).`);
    const said = pre.kind === 'unknown_outcome' ? await this.askProvider(pre) : null;
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query<Row>(`SELECT ${COLUMNS} FROM attention_items WHERE id = $1 FOR UPDATE`, [id]);
      if (!r.rows[0]) throw new NotFoundError('Attention item not found.');
      const item = toItem(r.rows[0]);
      this.checkOutcome(item, outcome);
      if (item.resolvedAt) throw new ConflictError(`Attention item is already resolved (${item.resolution}).`);
      let decided: { resolution: string; note: string | null; by: string } = { resolution: String(outcome), note, by };
      if (item.kind === 'conflict') {
        // Nothing to apply: the money followed the provider when the conflict was recorded.
      } else if (said !== null) {
        const status = await this.applyProviderAnswer(c, item, said);
        decided = { resolution: status, note: `${by} chose ${String(outcome)}; the provider answered ${status} when asked${note ? `. ${note}` : ''}`, by: 'provider' };
      } else if (item.objectType === 'payment') {
        const p = await runPaymentById<{ amount: string; provider_ref: string | null }>(c, item.objectId, { text: `SELECT amount::text, provider_ref FROM payments WHERE id = $1`, values: [item.objectId] });
        const ref = p.rows[0]?.provider_ref ?? item.providerRef ?? '';
        const done = await this.payments.applyOutcome(item.objectId, outcome === 'SUCCESS'
          ? { status: 'paid', amountReceived: new Decimal(p.rows[0]!.amount), ref }
          : { status: 'declined', code: 'operator_decision', message: 'Failed by the operator after reconciliation gave up.', ref }, { tx: c, via: 'operator' });
        const wanted = outcome === 'SUCCESS' ? done.status !== 'FAIL' && done.status !== 'PROCESS' : done.status === 'FAIL';
        if (!done.applied && !wanted) throw new ConflictError(`Payment is ${done.status}; it cannot become ${String(outcome)}.`);
      } else {
        await this.resolvers[item.objectType].applyOperatorDecision(c, item.objectId, outcome as 'SUCCESS' | 'FAIL', note, item.connector);
      }
      const u = await c.query<Row>(
        `UPDATE attention_items SET resolved_at = now(), resolution = $2, note = $3, resolved_by = $4 WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, decided.resolution, decided.note, decided.by]);
      const after = toItem(u.rows[0]!);
      await audit(c, item, after);
      return after;
    });
  }

  /** 422 unless the outcome is one this item takes: SUCCESS or FAIL, SETTLED for a conflict. */
  private checkOutcome(item: AttentionItem, outcome: unknown): void {
    if (item.kind === 'conflict') {
      if (outcome !== CONFLICT_SETTLED) throw ValidationError.field('outcome', `A conflict is closed with ${CONFLICT_SETTLED}: its money already followed the provider.`);
      return;
    }
    if (item.objectType === 'payment' && outcome !== 'SUCCESS' && outcome !== 'FAIL') throw ValidationError.field('outcome', 'The outcome must be SUCCESS or FAIL.');
    if (typeof outcome !== 'string' || outcome.length === 0 || outcome.length > 40) throw ValidationError.field('outcome', 'The outcome is required.');
    if (outcome !== 'SUCCESS' && outcome !== 'FAIL') throw ValidationError.field('outcome', 'The outcome must be SUCCESS or FAIL.');
  }

  /** The provider's final answer about the item's object now, or null when it cannot say (not final, not reachable). */
  private async askProvider(item: AttentionItem): Promise<ProviderSaid> {
    if (item.objectType === 'payment') {
      const o = await this.payments.readProvider(item.objectId);
      return o !== null && (o.status === 'paid' || o.status === 'declined') ? { kind: 'payment', outcome: o } : null;
    }
    const o = await this.resolvers[item.objectType].askProvider(item.objectId);
    return o !== null && isFinal(o) ? { kind: 'operation', outcome: o } : null;
  }

  /** Applies what the provider answered, in the resolution's transaction; answers the object's status after it. */
  private async applyProviderAnswer(c: Queryable, item: AttentionItem, said: NonNullable<ProviderSaid>): Promise<string> {
    if (said.kind === 'payment') {
      // Asked now: a decline is final even when its reason would follow in a notification.
      const o = said.outcome.status === 'declined' ? { ...said.outcome, reasonFollows: false } : said.outcome;
      return (await this.payments.applyOutcome(item.objectId, o, { tx: c, via: 'resolve' })).status;
    }
    const done = await this.resolvers[item.objectType as 'payout' | 'refund'].applyProviderOutcome({ id: item.objectId }, said.outcome, c, 'resolve');
    return String(done.status);
  }
}

