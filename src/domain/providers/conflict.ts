import { Decimal } from 'decimal.js';
import type { Logger } from 'pino';
import { withPgTx, type Queryable } from '../../db/client.js';
import type { Currency } from '../../generated/prisma/enums.js';
import type { OperationType } from '../operation-type.js';
import { randomId } from '../../lib/ids.js';
import { post, postOverdrawing, type Transfer } from '../ledger/ledger.js';
import { conflictHoldReleased, payoutConflictHeld, refundConflictHeld } from '../ledger/postings.js';

/**
 * A provider's answer that contradicts a final state we had made (docs/adr/0021-provider-answer-after-final-state.md): never dropped. Recorded as an attention item of kind
 * 'conflict' with both facts (our status and who set it, the provider's answer and when), the
 * money moved the provider's way by a transfer of its own kind (which may take the merchant's
 * available below zero), and a log line at error level. The object's status stays what it was
 * (final states never change); its money and the conflict item say what the provider did.
 * /metrics counts the conflict items (payments_provider_conflicts_total, read from the table, so
 * conflicts found by any process count).
 */

/** The reason of every conflict item. */
export const CONFLICT_REASON = 'provider_contradicts_final';

/** What the provider said, as the conflict item keeps it. */
export interface ProviderWord {
  /** 'succeeded' (the money moved) or 'failed' (it did not). */
  status: 'succeeded' | 'failed';
  ref: string | null;
  code?: string;
  message?: string;
  /** How it reached us: 'notification', 'reconciliation', 'resolve' (the read before an operator's decision). */
  via: string;
}

export interface Conflict {
  objectType: OperationType;
  objectId: string;
  merchantId: string;
  connector: string;
  providerRef: string | null;
  /** Our final status. */
  ours: string;
  provider: ProviderWord;
  /** The money following the provider; null when a read could not confirm the provider's notification (nothing moves). */
  transfer: Transfer | null;
  /** Unconfirmed money that left (a payout or refund the provider says it made): held from available until confirmed or resolved. */
  hold?: Transfer;
}

/** A transfer's legs as the conflict item keeps them. */
const legsOf = (t: Transfer) => t.legs.map((l) => ({ from: l.from, to: l.to, amount: l.amount.toFixed(2) }));

/**
 * The ways a provider's word reaches us that tell its current state (a read of the object): only
 * these move money against a final status. A notification is an event that may be stale or out
 * of order (T-Bank's REJECTED of a first attempt after CONFIRMED): it is confirmed by a read
 * first (ProviderNotificationService), never acted on alone.
 */
const READS = new Set(['reconciliation', 'read', 'resolve', 'notification+read']);
export const isProviderRead = (via: string): boolean => READS.has(via);

/**
 * Where a conflict's error line goes: the logger of the process that records it (the app's, the
 * worker's), handed down by whoever builds the services (createServices' `log`), never a
 * module's own, so two apps in one process (tests under isolate: false) keep their lines apart.
 */
export type ConflictLog = Pick<Logger, 'error'>;
/** Services built without a logger (a test's own, the CLI's app) record conflicts silently. */
export const silentConflictLog: ConflictLog = { error: () => undefined };

/**
 * Who made the object final, as far as we know: the operator who resolved its attention item,
 * else the service on an earlier answer of the provider ('service').
 */
async function finalSetBy(c: Queryable, objectType: OperationType, objectId: string): Promise<{ by: string; at: Date | null }> {
  const r = await c.query<{ resolved_by: string | null; resolved_at: Date | null }>(
    `SELECT resolved_by, resolved_at FROM attention_items WHERE object_type = $1 AND object_id = $2 AND kind = 'unknown_outcome'`,
    [objectType, objectId]);
  const item = r.rows[0];
  if (item?.resolved_by && item.resolved_by !== 'provider' && item.resolved_by !== 'reconciliation') return { by: item.resolved_by, at: item.resolved_at };
  return { by: 'service', at: null };
}

/**
 * Records a conflict in the caller's transaction (the object's row locked by the caller): the
 * item (once per object), then the transfer (once per object: its id). False when this object's
 * conflict was recorded before (a repeated notification, another read): nothing changes then.
 */
export async function recordConflict(c: Queryable, x: Conflict, log: ConflictLog = silentConflictLog): Promise<boolean> {
  const setBy = await finalSetBy(c, x.objectType, x.objectId);
  const at = new Date().toISOString();
  const facts = {
    ours: { status: x.ours, set_by: setBy.by, set_at: setBy.at?.toISOString() ?? null },
    provider: { ...x.provider, at },
    money: x.transfer
      ? { transfer: `${x.transfer.kind}:${x.transfer.refId}`, legs: legsOf(x.transfer) }
      : x.hold
        ? { transfer: null, held: { transfer: `${x.hold.kind}:${x.hold.refId}`, legs: legsOf(x.hold) },
            note: 'held from available: a read of the provider could not confirm its notification yet; a confirming read or the operator (SUCCESS: it was made, FAIL: it was not) ends the hold' }
        : { transfer: null, note: 'not moved: a read of the provider could not confirm its notification; the operator decides' },
  };
  const ins = await c.query(
    `INSERT INTO attention_items (id, object_type, object_id, merchant_id, connector, provider_ref, kind, reason, last_heard)
     VALUES ($1, $2, $3, $4, $5, $6, 'conflict', $7, $8::jsonb)
     ON CONFLICT ("object_type", "object_id", "kind") DO NOTHING`,
    [`att_${randomId(20)}`, x.objectType, x.objectId, x.merchantId, x.connector, x.providerRef ?? x.provider.ref, CONFLICT_REASON, JSON.stringify(facts)]);
  if (ins.rowCount !== 1) {
    // An item recorded before without money (a notification no read could confirm) and still
    // open: a confirmed answer now moves the money it left for the operator, once (the
    // transfer's id is the object's), and the item keeps both facts.
    if (!x.transfer) return false;
    const open = await c.query<{ id: string; held: unknown }>(
      `SELECT id, last_heard->'money'->'held' AS held FROM attention_items WHERE object_type = $1 AND object_id = $2 AND kind = 'conflict'
          AND resolved_at IS NULL AND last_heard->'money'->>'transfer' IS NULL FOR UPDATE`, [x.objectType, x.objectId]);
    if (!open.rows[0]) return false;
    // Money held while it was unconfirmed is released first, then leaves as the provider says.
    const released = open.rows[0].held ? await endHold(c, x.objectType, x.objectId) : null;
    await postOverdrawing(c, x.transfer);
    const money = { ...facts.money, ...(open.rows[0].held ? { held: open.rows[0].held, released: released ? `${released.kind}:${released.refId}` : null } : {}) };
    await c.query(`UPDATE attention_items SET last_heard = $2::jsonb WHERE id = $1`, [open.rows[0].id, JSON.stringify({ ...facts, money })]);
    log.error({ conflict: { object_type: x.objectType, object_id: x.objectId, merchant_id: x.merchantId, connector: x.connector, ...facts } },
      `provider ${x.connector} confirmed what it said of the final ${x.objectType} ${x.objectId}: money moved by ${x.transfer.kind}`);
    return true;
  }
  // The item is inserted first, so a transfer already applied (DuplicatePostingError) cannot
  // happen here; were it to, the whole transaction rolls back rather than move money twice.
  if (x.transfer) await postOverdrawing(c, x.transfer);
  else if (x.hold) await postOverdrawing(c, x.hold);
  log.error({
    conflict: { object_type: x.objectType, object_id: x.objectId, merchant_id: x.merchantId, connector: x.connector, ...facts },
  }, `provider ${x.connector} contradicts the final ${x.objectType} ${x.objectId}: ours ${x.ours} (set by ${setBy.by}), provider ${x.provider.status}; ${x.transfer ? `money moved by ${x.transfer.kind}` : x.hold ? `unconfirmed by a read, money held by ${x.hold.kind}` : 'unconfirmed by a read, no money moved'}`);
  return true;
}

/** Whether a provider's final answer contradicts a final status (money moved vs not). */
export function contradicts(moneyMoved: boolean, providerStatus: 'succeeded' | 'failed'): boolean {
  return moneyMoved !== (providerStatus === 'succeeded');
}

const TABLES: Record<OperationType, string> = { payment: 'payments', payout: 'payouts', refund: 'refunds' };
const MONEY_MOVED: Record<OperationType, readonly string[]> = {
  payment: ['SUCCESS', 'UNDERPAID', 'OVERPAID'], payout: ['SUCCESS'], refund: ['SUCCESS'],
};
const FINAL: Record<OperationType, readonly string[]> = {
  payment: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'], payout: ['SUCCESS', 'FAIL', 'ERROR'], refund: ['SUCCESS', 'FAIL'],
};

/** Whether an object's status is one in which its money moved (a payment received, a refund or payout made). */
export const moneyMoved = (objectType: OperationType, status: string): boolean => MONEY_MOVED[objectType].includes(status);

/** Whether a provider's final word contradicts an object's status (final, money moved or not). */
export function contradictsStatus(objectType: OperationType, status: string | null, providerStatus: 'succeeded' | 'failed'): boolean {
  return status !== null && FINAL[objectType].includes(status) && contradicts(moneyMoved(objectType, status), providerStatus);
}

/**
 * A notification contradicted a final status and the read that should confirm it could not say
 * (the provider unreachable, or not final): the conflict is recorded for the operator. Money the
 * provider says left (a payout or refund it says it made) is held from available meanwhile
 * (docs/adr/0080-unconfirmed-conflict-holds-the-money.md), so no second payout can spend it;
 * nothing else moves. Once per object, like every conflict; in its own transaction with the row locked.
 */
export async function recordUnconfirmed(
  pool: Parameters<typeof withPgTx>[0], x: { objectType: OperationType; objectId: string; connector: string; provider: ProviderWord },
  log: ConflictLog = silentConflictLog,
): Promise<boolean> {
  return withPgTx(pool, async (c) => {
    const r = await c.query<{ merchant_id: string; status: string; provider_ref: string | null; amount: string; currency: Currency; commission: string }>(
      `SELECT merchant_id, status::text, provider_ref, ${MONEY_COLUMNS[x.objectType]} FROM ${TABLES[x.objectType]} WHERE id = $1 FOR UPDATE`, [x.objectId]);
    const row = r.rows[0];
    if (!row || !contradictsStatus(x.objectType, row.status, x.provider.status)) return false;
    return recordConflict(c, {
      objectType: x.objectType, objectId: x.objectId, merchantId: row.merchant_id, connector: x.connector, providerRef: row.provider_ref,
      ours: row.status, provider: x.provider, transfer: null, hold: x.provider.status === 'succeeded' ? holdOf(x.objectType, x.objectId, row) : undefined,
    }, log);
  });
}

/** The hold of money a provider says left (payouts and refunds); none for payments (money in). */
function holdOf(objectType: OperationType, id: string, row: { merchant_id: string; amount: string; currency: Currency; commission: string }): Transfer | undefined {
  const money = { merchantId: row.merchant_id, currency: row.currency, amount: new Decimal(row.amount) };
  if (objectType === 'payout') return payoutConflictHeld({ ...money, payoutId: id, commission: new Decimal(row.commission) });
  if (objectType === 'refund') return refundConflictHeld({ ...money, refundId: id });
  return undefined;
}

/** What a hold is made of, per table (a payment holds nothing). */
const MONEY_COLUMNS: Record<OperationType, string> = {
  payout: 'amount::text, currency::text, commission::text',
  refund: "amount::text, currency::text, '0' AS commission",
  payment: "'0' AS amount, 'RUB' AS currency, '0' AS commission",
};

const HOLD_KIND = { payout: 'PAYOUT_CONFLICT_HOLD', refund: 'REFUND_CONFLICT_HOLD' } as const;

/**
 * Ends an object's conflict hold, in the caller's transaction: its legs, as the ledger wrote
 * them, back to available (the release transfer, once per object). Null when the object has no
 * hold or it ended already.
 */
export async function endHold(c: Queryable, objectType: OperationType, objectId: string): Promise<Transfer | null> {
  if (objectType === 'payment') return null;
  const kind = HOLD_KIND[objectType];
  const r = await c.query<{ debit_account: string; credit_account: string; amount: string; currency: Currency; merchant_id: string; released: boolean }>(
    `SELECT e.debit_account, e.credit_account, e.amount::text, e.currency::text, t.merchant_id,
            EXISTS (SELECT 1 FROM ledger_transfers x WHERE x.id = $3) AS released
       FROM ledger_transfers t JOIN ledger_entries e ON e.transfer_id = t.id WHERE t.id = $1 AND t.ref_type = $2 ORDER BY e.leg`,
    [`${kind}:${objectId}`, objectType, `${kind.replace('_HOLD', '_RELEASE')}:${objectId}`]);
  if (r.rows.length === 0 || r.rows[0]!.released) return null;
  const release = conflictHoldReleased({
    kind, refType: objectType, refId: objectId, merchantId: r.rows[0]!.merchant_id,
    legs: r.rows.map((l) => ({ from: l.debit_account, to: l.credit_account, amount: new Decimal(l.amount), currency: l.currency })),
  });
  await post(c, release);
  return release;
}

/** Whether a conflict item still holds money no read confirmed (its `last_heard`): the operator's resolution must say whether it was made. */
export function holdsMoney(lastHeard: Record<string, unknown>): boolean {
  const m = lastHeard.money as { transfer?: unknown; held?: unknown; released?: unknown } | undefined;
  return !!m && m.held != null && m.transfer == null && m.released == null;
}

/**
 * The operator's resolution of a conflict that holds money (or the provider's final answer when
 * asked then), in the caller's transaction with the item locked: not made, the hold goes back to
 * available (once) and the item says so. Made is applied by the object's own conflict path (a
 * confirmed conflict: the hold released, the money debited, the merchant's event), not here.
 */
export async function releaseHeldConflict(c: Queryable, itemId: string, x: { objectType: OperationType; objectId: string; lastHeard: Record<string, unknown> }): Promise<void> {
  const released = await endHold(c, x.objectType, x.objectId);
  const money = { ...(x.lastHeard.money as Record<string, unknown>), released: released ? `${released.kind}:${released.refId}` : null };
  await c.query(`UPDATE attention_items SET last_heard = last_heard || jsonb_build_object('money', $2::jsonb) WHERE id = $1`, [itemId, JSON.stringify(money)]);
}
