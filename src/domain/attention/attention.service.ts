import { Decimal } from 'decimal.js';
import type { Db, Queryable } from '../../db/client.js';
import { withPgTx } from '../../db/client.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { randomId } from '../../lib/ids.js';
import type { OperationKinds } from '../operations/kinds.js';
import { parseResolution } from '../operations/reconcile.js';
import type { OperationType } from '../operation-type.js';
import { holdsMoney, releaseHeldConflict } from '../providers/conflict.js';

/** An operation reconciliation gave up on (PROVIDERS.md "Unknown outcomes are never guessed"). */
export interface AttentionItem {
  id: string;
  objectType: OperationType;
  objectId: string;
  merchantId: string;
  connector: string;
  providerRef: string | null;
  /**
   * 'unknown_outcome': reconciliation gave up; 'conflict': the provider contradicted a final state
   * (src/domain/providers/conflict.ts); 'receipt_failed': the provider's cash register did not
   * register the object's receipt (src/domain/receipt/register-failures.ts).
   */
  kind: 'unknown_outcome' | 'conflict' | 'receipt_failed';
  reason: string;
  lastHeard: Record<string, unknown>;
  createdAt: Date;
  resolvedAt: Date | null;
  resolution: string | null;
  note: string | null;
  resolvedBy: string | null;
}

interface Row {
  id: string; object_type: OperationType; object_id: string; merchant_id: string; connector: string; provider_ref: string | null;
  kind: AttentionItem['kind']; reason: string; last_heard: Record<string, unknown>; created_at: Date; resolved_at: Date | null; resolution: string | null;
  note: string | null; resolved_by: string | null;
}
const COLUMNS = 'id, object_type, object_id, merchant_id, connector, provider_ref, kind, reason, last_heard, created_at, resolved_at, resolution, note, resolved_by';
const toItem = (r: Row): AttentionItem => ({
  id: r.id, objectType: r.object_type, objectId: r.object_id, merchantId: r.merchant_id, connector: r.connector, providerRef: r.provider_ref,
  kind: r.kind, reason: r.reason, lastHeard: r.last_heard, createdAt: r.created_at, resolvedAt: r.resolved_at, resolution: r.resolution, note: r.note,
  resolvedBy: r.resolved_by,
});

/** The outcome an operator closes a conflict item with: the money already followed the provider; the operator settled the rest. */
export const CONFLICT_SETTLED = 'SETTLED';
/** The outcome an operator closes a failed receipt with: a correction receipt was issued (nothing moves). */
export const RECEIPT_CORRECTED = 'CORRECTED';

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
    /** The one map of operation kinds: each object type's lifecycle asks its provider and applies its answer or the operator's decision. */
    private readonly kinds: OperationKinds,
  ) {}

  /** Raises an item (once per object); true when this call raised it. */
  async raise(i: { objectType: OperationType; objectId: string; merchantId: string; connector: string; providerRef: string | null; reason: string; lastHeard: unknown }): Promise<boolean> {
    const r = await this.db.pool.query(
      `INSERT INTO attention_items (id, object_type, object_id, merchant_id, connector, provider_ref, reason, last_heard)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
       ON CONFLICT ("object_type", "object_id", "kind") DO NOTHING`,
      [`att_${randomId(16)}`, i.objectType, i.objectId, i.merchantId, i.connector, i.providerRef, i.reason, JSON.stringify(heard(i.lastHeard))]);
    return r.rowCount === 1;
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
   * outcome apply (for a payment SUCCESS is paid what it was to pay), through the object's
   * lifecycle: its state table and the ledger. A conflict item
   * is closed with SETTLED (its money moved when it was recorded), except one that still holds
   * money no read confirmed (docs/adr/0080-unconfirmed-conflict-holds-the-money.md): it is
   * decided SUCCESS (it was made: the hold is released and debited) or FAIL (it was not: the
   * hold goes back to available), once, and the provider is asked first by the reference its
   * notification named, as for an unknown outcome. `audit` runs in the same
   * transaction. 422 for a bad outcome, 404 unknown item, 409 already resolved or the object
   * already final otherwise.
   */
  async resolve(id: string, body: Record<string, unknown>, by: string, audit: (c: Queryable, before: AttentionItem, after: AttentionItem) => Promise<void>): Promise<AttentionItem> {
    const note = body.note === undefined || body.note === null ? null : body.note;
    if (note !== null && (typeof note !== 'string' || note.length > 2000)) throw ValidationError.field('note', 'The note must be a string of at most 2000 characters.');
    const outcome = body.outcome;
    const pre = await this.get(id);
    if (!pre) throw new NotFoundError('Attention item not found.');
    // A conflict's outcomes depend on its money (held or not): a resolved one is 409 whatever is sent again.
    if (pre.kind === 'conflict' && pre.resolvedAt) throw new ConflictError(`Attention item is already resolved (${pre.resolution}).`);
    this.checkOutcome(pre, outcome);
    if (pre.resolvedAt) throw new ConflictError(`Attention item is already resolved (${pre.resolution}).`);
    const { lifecycle } = this.kinds[pre.objectType];
    const held = pre.kind === 'conflict' && holdsMoney(pre.lastHeard);
    // Asked outside any transaction; only a final answer decides.
    const asked = pre.kind === 'unknown_outcome' ? await lifecycle.kind.readFromProvider_(pre.objectId)
      : held ? await lifecycle.kind.readFromProvider_(pre.objectId, pre.providerRef) : null;
    const said = asked !== null && lifecycle.kind.finalOf(asked) !== null ? asked : null;
    return withPgTx(this.db.pool, async (c) => {
      // The object's row before its item, in the order a provider's conflict takes them.
      const row = held ? await lifecycle.kind.lock_(c, { id: pre.objectId }) : null;
      const r = await c.query<Row>(`SELECT ${COLUMNS} FROM attention_items WHERE id = $1 FOR UPDATE`, [id]);
      if (!r.rows[0]) throw new NotFoundError('Attention item not found.');
      const item = toItem(r.rows[0]);
      if (item.kind === 'conflict' && item.resolvedAt) throw new ConflictError(`Attention item is already resolved (${item.resolution}).`);
      this.checkOutcome(item, outcome);
      if (item.resolvedAt) throw new ConflictError(`Attention item is already resolved (${item.resolution}).`);
      let decided: { resolution: string; note: string | null; by: string } = { resolution: String(outcome), note, by };
      if (item.kind === 'receipt_failed') {
        // Nothing to apply: a receipt is corrected at the register, outside this service.
      } else if (item.kind === 'conflict' && row !== null && holdsMoney(item.lastHeard)) {
        const word = said !== null ? lifecycle.kind.wordOf(said) : null;
        const made = word !== null ? word.status === 'succeeded' : outcome === 'SUCCESS';
        // Made: the object's own conflict path (the hold released, the money debited, the merchant's event); not made: the hold back to available.
        if (made) {
          const moved = await lifecycle.kind.conflict_(c, row, said ?? lifecycle.kind.decided(row, 'SUCCESS', note as string | null),
            { status: 'succeeded', ref: word?.ref ?? item.providerRef, via: said !== null ? 'resolve' : 'operator' }, lifecycle.log);
          // Never closed with its money still held: the whole resolution rolls back.
          if (!moved) throw new ConflictError(`The held money of ${item.objectType} ${item.objectId} could not be debited; nothing changed.`);
        } else {
          await releaseHeldConflict(c, item.id, item);
        }
        const resolution = made ? 'SUCCESS' : 'FAIL';
        if (said !== null) decided = { resolution, note: `${by} chose ${String(outcome)}; the provider answered ${resolution} when asked${note ? `. ${note}` : ''}`, by: 'provider' };
      } else if (item.kind === 'conflict') {
        // Nothing to apply: the money followed the provider when the conflict was recorded.
      } else if (said !== null) {
        const status = String((await lifecycle.applyAnswer({ id: item.objectId }, said, { tx: c, via: 'resolve' })).status);
        decided = { resolution: status, note: `${by} chose ${String(outcome)}; the provider answered ${status} when asked${note ? `. ${note}` : ''}`, by: 'provider' };
      } else {
        await lifecycle.decide_(c, item.objectId, outcome as 'SUCCESS' | 'FAIL', note);
      }
      const u = await c.query<Row>(
        `UPDATE attention_items SET resolved_at = now(), resolution = $2, note = $3, resolved_by = $4 WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, decided.resolution, decided.note, decided.by]);
      const after = toItem(u.rows[0]!);
      await audit(c, item, after);
      return after;
    });
  }

  /** 422 unless the outcome is one this item takes: SUCCESS or FAIL, SETTLED for a conflict (SUCCESS or FAIL for one that holds money). */
  private checkOutcome(item: AttentionItem, outcome: unknown): void {
    if (item.kind === 'receipt_failed') {
      if (outcome !== RECEIPT_CORRECTED) throw ValidationError.field('outcome', `A failed receipt is closed with ${RECEIPT_CORRECTED} once a correction receipt was issued.`);
      return;
    }
    if (item.kind === 'conflict' && holdsMoney(item.lastHeard)) {
      if (outcome !== 'SUCCESS' && outcome !== 'FAIL') {
        throw ValidationError.field('outcome', 'This conflict holds money the provider says left: SUCCESS (it was made: the merchant is debited) or FAIL (it was not: the hold goes back to available).');
      }
      return;
    }
    if (item.kind === 'conflict') {
      if (outcome !== CONFLICT_SETTLED) throw ValidationError.field('outcome', `A conflict is closed with ${CONFLICT_SETTLED}: its money already followed the provider.`);
      return;
    }
    // An unknown outcome, whatever the kind: the lifecycle's own parse (422 unless SUCCESS or FAIL).
    parseResolution(outcome);
  }
}
