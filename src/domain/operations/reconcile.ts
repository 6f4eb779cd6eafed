import type { OperationType } from '../operation-type.js';
import type { Queryable } from '../../db/client.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { randomId } from '../../lib/ids.js';
import type { OperationOutcome } from '../providers/connector.js';

/**
 * What the lifecycle (lifecycle.ts) needs to reconcile operations whose outcome is unknown
 * (PROVIDERS.md "Unknown outcomes are never guessed"): the backoff between questions to the
 * provider about refunds and payouts, what counts as a final answer, and the attention items
 * raised when the provider's deadline passes without one.
 */

/** First wait after an unknown outcome; doubled per question up to RECONCILE_MAX_DELAY_MS. */
export const RECONCILE_FIRST_DELAY_MS = 5_000;
export const RECONCILE_MAX_DELAY_MS = 3_600_000;

/** When to ask again after `attempts` questions: exponential, capped, with up to 20% jitter. */
export function reconcileDelayMs(attempts: number): number {
  const base = Math.min(RECONCILE_FIRST_DELAY_MS * 2 ** Math.min(attempts, 30), RECONCILE_MAX_DELAY_MS);
  return Math.round(base * (1 + Math.random() * 0.2));
}

export type FinalOutcome = Extract<OperationOutcome, { status: 'succeeded' | 'failed' }>;

/**
 * A provider's answer that decides the operation. `failed` with code `not_found` does not: the
 * provider shows nothing under what we asked by, which is not a refusal of the money.
 */
export function isFinal(o: OperationOutcome): o is FinalOutcome {
  return o.status === 'succeeded' || (o.status === 'failed' && o.code !== 'not_found');
}

/**
 * The provider shows nothing under what we know: the sandbox's `not_found`, or a real connector
 * that can only be asked by its own reference and has none yet (`<kind>:no_ref`: YooKassa and
 * T-Bank have no lookup by our id; the operation is repeated under the same idempotency key).
 */
export const isNotFound = (o: OperationOutcome) =>
  (o.status === 'failed' && o.code === 'not_found') || (o.status === 'refused' && o.code.endsWith(':no_ref'));

/** What was last heard, as stored in attention_items.last_heard (never account numbers). */
export function lastHeard(o: { status: string }): Record<string, unknown> {
  const out: Record<string, unknown> = { status: o.status, at: new Date().toISOString() };
  if ('code' in o) out.code = o.code;
  if ('message' in o) out.message = o.message;
  if ('reason' in o) out.reason = o.reason;
  if ('ref' in o && o.ref !== null) out.ref = o.ref;
  return out;
}

/** The lifecycle's name for the one operation type (domain/operation-type.ts). */

export interface AttentionRow {
  id: string; object_type: string; object_id: string; merchant_id: string; connector: string; provider_ref: string | null;
  reason: string; last_heard: Record<string, unknown>; created_at: Date; resolved_at: Date | null; resolution: string | null;
  note: string | null; resolved_by: string | null;
}

/**
 * Raises the attention item of an operation reconciliation gave up on, once per object; while
 * it is open, each later question keeps what was last heard on it.
 */
export async function raiseAttention(c: Queryable, a: {
  objectType: OperationType; objectId: string; merchantId: string; connector: string; providerRef: string | null; reason: string;
  lastHeard: Record<string, unknown>;
}): Promise<void> {
  await c.query(
    `INSERT INTO attention_items (id, object_type, object_id, merchant_id, connector, provider_ref, reason, last_heard)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
     ON CONFLICT ("object_type", "object_id", "kind") DO UPDATE SET last_heard = EXCLUDED.last_heard WHERE attention_items.resolved_at IS NULL`,
    [`att_${randomId(20)}`, a.objectType, a.objectId, a.merchantId, a.connector, a.providerRef, a.reason, JSON.stringify(a.lastHeard)],
  );
}

/** Closes the object's open item (if any), recording who decided: the provider's late answer or an operator. */
export async function closeAttention(
  c: Queryable, objectType: OperationType, objectId: string, r: { resolution: string; note: string | null; by: string },
): Promise<void> {
  await c.query(
    `UPDATE attention_items SET resolved_at = now(), resolution = $3, note = $4, resolved_by = $5
      WHERE object_type = $1 AND object_id = $2 AND kind = 'unknown_outcome' AND resolved_at IS NULL`,
    [objectType, objectId, r.resolution, r.note, r.by],
  );
}

/** Records the decision on a locked open item and answers the item as it now is. */
export async function resolveItem(c: Queryable, id: string, r: { resolution: string; note: string | null; by: string }): Promise<AttentionRow> {
  const done = await c.query<AttentionRow>(
    `UPDATE attention_items SET resolved_at = now(), resolution = $2, note = $3, resolved_by = $4 WHERE id = $1 RETURNING *`,
    [id, r.resolution, r.note, r.by],
  );
  return done.rows[0]!;
}

/** The operator's decision: the final status the object gets (SUCCESS or FAIL), else 422 on `outcome`. */
export function parseResolution(outcome: unknown): 'SUCCESS' | 'FAIL' {
  if (outcome === 'SUCCESS' || outcome === 'FAIL') return outcome;
  throw ValidationError.field('outcome', 'The outcome must be SUCCESS or FAIL.');
}

/**
 * Locks an open attention item of `objectType` for its resolution: 404 when there is none of
 * that type, 409 when it was resolved already (by another operator, or by the provider's answer).
 */
export async function lockOpenAttention(c: Queryable, id: string, objectType: OperationType): Promise<AttentionRow> {
  const r = await c.query<AttentionRow>(
    `SELECT * FROM attention_items WHERE id = $1 AND object_type = $2 AND kind = 'unknown_outcome' FOR UPDATE`, [id, objectType],
  );
  const row = r.rows[0];
  if (!row) throw new NotFoundError('Attention item not found.');
  if (row.resolved_at !== null) throw new ConflictError(`Attention item is resolved already (${row.resolution}).`);
  return row;
}

/** Whether an operation handed to its provider at `sentAt` is past the provider's deadline. */
export const pastDeadline = (sentAt: Date | null, giveUpMs: number, now = Date.now()) =>
  sentAt !== null && now - sentAt.getTime() >= giveUpMs;
