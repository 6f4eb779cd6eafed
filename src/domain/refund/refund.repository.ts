import { Decimal } from 'decimal.js';
import type { Currency, PaymentStatus, RefundStatus } from '../../generated/prisma/enums.js';
import type { Queryable } from '../../db/client.js';
import { IllegalRefundTransitionError, sourcesOf } from './refund.states.js';
import { runPaymentById } from '../payment/payment-by-id.js';
import type { Claimed, Deferred } from '../operations/lifecycle.js';
import type { ProviderData } from '../providers/connector.js';

/** A refund as the service hands it out (the API view and the cabinet read this). */
export interface RefundRecord {
  id: string;
  merchantId: string;
  paymentId: string;
  status: RefundStatus;
  amount: Decimal;
  currency: Currency;
  failureReason: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface RefundRow {
  id: string; merchant_id: string; payment_id: string; status: RefundStatus; amount: string;
  currency: Currency; failure_reason: string | null; created_at: Date; finished_at: Date | null;
}

/** Columns to SELECT for `RefundRow` (refund/search reads them through the keyset search). */
export const REFUND_COLUMNS = 'id, merchant_id, payment_id, status, amount::text AS amount, currency, failure_reason, created_at, finished_at';

export const toRecord = (r: RefundRow): RefundRecord => ({
  id: r.id, merchantId: r.merchant_id, paymentId: r.payment_id, status: r.status, amount: new Decimal(r.amount),
  currency: r.currency, failureReason: r.failure_reason, createdAt: r.created_at, finishedAt: r.finished_at,
});

/** What a refund needs to know of its payment, read under the payment's row lock. */
export interface RefundablePayment {
  status: PaymentStatus;
  /**
   * What the payment received, in accountCurrency (the bill's currency), before commission:
   * account_amount + commission (null: nothing credited).
   */
  received: Decimal | null;
  accountCurrency: Currency;
  refundedAmount: Decimal;
  /** What chargebacks took from the payment (refunds may not take it again). */
  chargebackAmount: Decimal;
  /** What the payer paid the acquirer, in RUB. */
  receivedRub: Decimal;
  /** The connector that took the payment (its refunds go through it). */
  connector: string;
  /** The RUB of the payment's refunds so far (NEW, PROCESS, SUCCESS): what the provider has given or will give back. */
  refundedRub: Decimal;
}

/** Locks the merchant's payment (FOR UPDATE): refunds of one payment are serialised on it. */
export async function lockPayment(c: Queryable, merchantId: string, paymentId: string): Promise<RefundablePayment | null> {
  const r = await runPaymentById<{
    status: PaymentStatus; received: string | null; account_currency: Currency; refunded_amount: string; chargeback_amount: string;
    received_rub: string; refunded_rub: string; connector: string;
  }>(c, paymentId, {
    text: `SELECT status, coalesce(connector, 'sandbox') AS connector, (account_amount + commission)::text AS received, account_currency, refunded_amount::text AS refunded_amount,
            chargeback_amount::text AS chargeback_amount, amount_received::text AS received_rub,
            (SELECT coalesce(sum(amount_rub), 0)::text FROM refunds WHERE payment_id = $1 AND status <> 'FAIL') AS refunded_rub
       FROM payments WHERE id = $1 AND merchant_id = $2`,
    values: [paymentId, merchantId], suffix: ' FOR UPDATE',
  });
  const p = r.rows[0];
  if (!p) return null;
  return {
    status: p.status,
    received: p.received === null ? null : new Decimal(p.received),
    accountCurrency: p.account_currency,
    refundedAmount: new Decimal(p.refunded_amount),
    chargebackAmount: new Decimal(p.chargeback_amount),
    receivedRub: new Decimal(p.received_rub),
    refundedRub: new Decimal(p.refunded_rub),
    connector: p.connector,
  };
}

/** Adds to (or, with a negative delta, gives back) what was refunded of a payment. */
export async function addRefunded(c: Queryable, paymentId: string, delta: Decimal): Promise<void> {
  await runPaymentById(c, paymentId, {
    text: `UPDATE payments SET refunded_amount = refunded_amount + $2, updated_at = now() WHERE id = $1`, values: [paymentId, delta.toFixed(2)],
  });
}

export async function insertRefund(
  c: Queryable,
  r: { id: string; merchantId: string; paymentId: string; amount: Decimal; amountRub: Decimal; currency: Currency; delayMs: number; connector: string; receipt: string | null },
): Promise<RefundRecord> {
  // clock_timestamp(): taken after the payment lock, so a payment's refunds are ordered by
  // created_at in the order they were admitted ("latest refund" in refund/status).
  const res = await c.query<RefundRow>(
    // A refund goes through the connector that took its payment (lockPayment read it).
    // The refund's receipt is kept with it from here on (docs/adr/0087).
    `INSERT INTO refunds (id, merchant_id, payment_id, status, amount, amount_rub, currency, process_after, created_at, updated_at, connector, receipt)
     VALUES ($1, $2, $3, 'NEW', $4, $7, $5::"Currency", clock_timestamp() + $6 * interval '1 millisecond', clock_timestamp(), clock_timestamp(),
             $8, $9::jsonb)
     RETURNING ${REFUND_COLUMNS}`,
    [r.id, r.merchantId, r.paymentId, r.amount.toFixed(2), r.currency, r.delayMs, r.amountRub.toFixed(2), r.connector, r.receipt],
  );
  return toRecord(res.rows[0]!);
}

export async function findRefund(c: Queryable, merchantId: string, id: string): Promise<RefundRecord | null> {
  const r = await c.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refunds WHERE id = $1 AND merchant_id = $2`, [id, merchantId]);
  return r.rows[0] ? toRecord(r.rows[0]) : null;
}

export async function latestRefundOfPayment(c: Queryable, merchantId: string, paymentId: string): Promise<RefundRecord | null> {
  const r = await c.query<RefundRow>(
    `SELECT ${REFUND_COLUMNS} FROM refunds WHERE payment_id = $1 AND merchant_id = $2 ORDER BY created_at DESC, id DESC LIMIT 1`,
    [paymentId, merchantId],
  );
  return r.rows[0] ? toRecord(r.rows[0]) : null;
}

export async function refundsOfPayment(c: Queryable, merchantId: string, paymentId: string): Promise<RefundRecord[]> {
  const r = await c.query<RefundRow>(
    `SELECT ${REFUND_COLUMNS} FROM refunds WHERE payment_id = $1 AND merchant_id = $2 ORDER BY created_at DESC, id DESC`,
    [paymentId, merchantId],
  );
  return r.rows.map(toRecord);
}

/** A refund claimed by a worker, with what the acquirer needs. */
export interface ClaimedRefund extends Claimed {
  id: string; merchantId: string; paymentId: string; amount: Decimal; currency: Currency; fromCard: string | null;
  /** What the provider gives back, in RUB (null: a refund admitted before this was kept, in another currency). */
  amountRub: Decimal | null;
  /** The connector that took the payment, and the payment's reference there. */
  connector: string; paymentRef: string | null;
  /** The refund's own reference at the provider, once one was heard. */
  ref: string | null;
  /** What its connector's answers kept (docs/adr/0118), handed back to every call about it; null when nothing. */
  data: ProviderData | null;
  /** When it was handed to the connector (null: never; from then on it is asked about). */
  sentAt: Date | null;
  checkAttempts: number;
  /** The refund's receipt as kept when it was created (refunds.receipt; null: none). */
  receipt: unknown;
}

/**
 * Claims due refunds for one worker in one statement: NEW ones whose time has come move to
 * PROCESS; PROCESS ones whose lease expired (their worker died) or whose next reconciliation
 * check is due are taken again. SKIP LOCKED lets any number of workers share the queue
 * without taking the same refund.
 */
/** When a NEW or PROCESS refund is due; identical to the expression of refunds_due_idx (migration 20261125040000). */
const REFUND_DUE_AT = `(CASE WHEN status = 'NEW' THEN process_after ELSE coalesce(greatest(next_check_at, lease_until), '-infinity'::timestamptz) END)`;

export async function claimDueRefunds(c: Queryable, limit: number, leaseMs: number): Promise<ClaimedRefund[]> {
  const r = await c.query<{
    id: string; merchant_id: string; payment_id: string; amount: string; amount_rub: string | null; currency: Currency; from_card: string | null; connector: string;
    payment_ref: string | null; provider_ref: string | null; provider_data: ProviderData | null; sent_at: Date | null; check_attempts: number; receipt: unknown;
  }>(
    // The due moment is refunds_due_idx's expression (a partial index of the rows that can be
    // due): an idle poll reads one index page. The conditions after it are the exact rule.
    `WITH due AS (
       SELECT id FROM refunds
        WHERE status IN ('NEW', 'PROCESS') AND ${REFUND_DUE_AT} <= now()
          AND ((status = ANY($1::"RefundStatus"[]) AND process_after <= now())
            OR (status = 'PROCESS' AND (lease_until IS NULL OR lease_until < now()) AND (next_check_at IS NULL OR next_check_at <= now())))
        ORDER BY ${REFUND_DUE_AT}
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     UPDATE refunds r
        SET status = 'PROCESS', lease_until = now() + $3 * interval '1 millisecond', updated_at = now()
       FROM due, payments p
      WHERE r.id = due.id AND p.id = r.payment_id
     RETURNING r.id, r.merchant_id, r.payment_id, r.amount::text AS amount, r.amount_rub::text AS amount_rub, r.currency, p.from_card, coalesce(r.connector, 'sandbox') AS connector,
               p.provider_ref AS payment_ref, r.provider_ref, r.provider_data, r.sent_at, r.check_attempts, r.receipt`,
    [sourcesOf('PROCESS'), limit, leaseMs],
  );
  return r.rows.map((x) => ({
    id: x.id, merchantId: x.merchant_id, paymentId: x.payment_id, amount: new Decimal(x.amount), currency: x.currency, fromCard: x.from_card,
    amountRub: x.amount_rub === null ? null : new Decimal(x.amount_rub),
    connector: x.connector, paymentRef: x.payment_ref, ref: x.provider_ref, data: x.provider_data, sentAt: x.sent_at, checkAttempts: x.check_attempts, receipt: x.receipt,
  }));
}

/** A refund locked for the lifecycle, with the connector that has it and its reference there. */
export type LockedRefund = RefundRecord & { connector: string; ref: string | null };

/** Locks a refund (by our id, or by its connector's reference) for its final transition. */
export async function lockRefund(c: Queryable, target: { id: string } | { connector: string; ref: string }): Promise<LockedRefund | null> {
  const columns = `${REFUND_COLUMNS}, coalesce(connector, 'sandbox') AS connector, provider_ref`;
  const r = 'id' in target
    ? await c.query<RefundRow & { connector: string; provider_ref: string | null }>(`SELECT ${columns} FROM refunds WHERE id = $1 FOR UPDATE`, [target.id])
    : await c.query<RefundRow & { connector: string; provider_ref: string | null }>(
      `SELECT ${columns} FROM refunds WHERE connector = $1 AND provider_ref = $2 FOR UPDATE`, [target.connector, target.ref]);
  const row = r.rows[0];
  return row ? { ...toRecord(row), connector: row.connector, ref: row.provider_ref } : null;
}

/**
 * A refund's final status, conditional on the transition table's from-states with the row count
 * checked: a refund no longer in one of them is an IllegalRefundTransitionError (409) naming its
 * current status, and nothing changes.
 */
export async function finishRefund(
  c: Queryable, id: string, status: RefundStatus, failureReason: string | null, providerRef: string | null = null, data: ProviderData | null = null,
): Promise<void> {
  const r = await c.query(
    `UPDATE refunds SET status = $2::"RefundStatus", failure_reason = $3, provider_ref = coalesce($5, provider_ref),
            provider_data = coalesce($6::jsonb, provider_data), finished_at = now(), lease_until = NULL, updated_at = now()
      WHERE id = $1 AND status = ANY($4::"RefundStatus"[])`,
    [id, status, failureReason, sourcesOf(status), providerRef, data === null ? null : JSON.stringify(data)],
  );
  if (r.rowCount === 1) return;
  const cur = await c.query<{ status: RefundStatus }>(`SELECT status::text FROM refunds WHERE id = $1`, [id]);
  throw new IllegalRefundTransitionError(cur.rows[0]?.status ?? 'NEW', status);
}

/** The bill, order id and current shop Result URL of a payment (for refund and chargeback postbacks). */
export async function paymentShopOf(c: Queryable, paymentId: string): Promise<{ billId: string; orderId: string | null; resultUrl: string | null }> {
  const r = await runPaymentById<{ bill_id: string; order_id: string | null; result_url: string | null }>(c, paymentId, {
    text: `SELECT p.bill_id, b.order_id, s.result_url FROM payments p JOIN bills b ON b.id = p.bill_id JOIN shops s ON s.id = p.shop_id WHERE p.id = $1`,
    values: [paymentId], column: 'p.created_at',
  });
  const row = r.rows[0]!;
  return { billId: row.bill_id, orderId: row.order_id, resultUrl: row.result_url };
}

/**
 * For a refund repeated after a lost answer (a provider that does not deduplicate it decides
 * from the payment's state, T-Bank): the payment's other refunds in RUB, those SUCCESS and those
 * handed to the connector and still open, and the RUB the payer paid (CreateRefund.siblings).
 */
export async function refundSiblingsRub(c: Queryable, paymentId: string, refundId: string): Promise<{ succeededRub: Decimal; openRub: Decimal; paidRub: Decimal | null }> {
  const r = await c.query<{ succeeded: string; open: string; paid: string | null }>(
    `SELECT coalesce(sum(coalesce(amount_rub, CASE WHEN currency = 'RUB' THEN amount END)) FILTER (WHERE status = 'SUCCESS'), 0)::text AS succeeded,
            coalesce(sum(coalesce(amount_rub, CASE WHEN currency = 'RUB' THEN amount END)) FILTER (WHERE status = 'PROCESS' AND sent_at IS NOT NULL), 0)::text AS open,
            (SELECT amount_received::text FROM payments WHERE id = $1) AS paid
       FROM refunds WHERE payment_id = $1 AND id <> $2`,
    [paymentId, refundId],
  );
  const x = r.rows[0]!;
  return { succeededRub: new Decimal(x.succeeded), openRub: new Decimal(x.open), paidRub: x.paid === null ? null : new Decimal(x.paid) };
}

/** On record as handed to its connector, before the call (a lost answer is then reconciled, never sent blind again). */
export async function markRefundSent(c: Queryable, id: string): Promise<void> {
  await c.query('UPDATE refunds SET sent_at = now() WHERE id = $1', [id]);
}

/**
 * No final answer: a PROCESS refund keeps what was heard and is due again after `delayMs`; the
 * lease goes. Null when it is no longer PROCESS.
 */
export async function deferRefund(c: Queryable, id: string, ref: string | null, delayMs: number, data: ProviderData | null = null): Promise<Deferred | null> {
  const d = await c.query<{ sent_at: Date | null; merchant_id: string; connector: string; provider_ref: string | null }>(
    `UPDATE refunds SET provider_ref = coalesce($2, provider_ref), provider_data = coalesce($4::jsonb, provider_data), lease_until = NULL,
            next_check_at = now() + $3::int * interval '1 millisecond', check_attempts = check_attempts + 1, updated_at = now()
      WHERE id = $1 AND status = 'PROCESS' RETURNING sent_at, merchant_id, coalesce(connector, 'sandbox') AS connector, provider_ref`,
    [id, ref, delayMs, data === null ? null : JSON.stringify(data)]);
  const x = d.rows[0];
  return x ? { merchantId: x.merchant_id, connector: x.connector, ref: x.provider_ref, sentAt: x.sent_at } : null;
}

/**
 * An answer that is not final heard outside the worker's question (a notification, a read for the
 * attention list): a PROCESS refund keeps the reference and the provider's state it carries; its
 * lease and next check stay as they are.
 */
export async function keepRefundHeard(c: Queryable, id: string, ref: string | null, data: ProviderData | null): Promise<void> {
  if (ref === null && data === null) return;
  await c.query(`UPDATE refunds SET provider_ref = coalesce($2, provider_ref), provider_data = coalesce($3::jsonb, provider_data), updated_at = now()
                  WHERE id = $1 AND status = 'PROCESS'`, [id, ref, data === null ? null : JSON.stringify(data)]);
}

/** Gives back the leases of refunds claimed but never worked on (a worker stopping). */
export async function releaseRefundClaims(c: Queryable, ids: string[]): Promise<void> {
  if (ids.length > 0) await c.query(`UPDATE refunds SET lease_until = NULL WHERE id = ANY($1::text[]) AND status = 'PROCESS'`, [ids]);
}

/** The connector that has a refund and its reference there; null when there is no such refund. */
export async function refundConnectorOf(c: Queryable, id: string): Promise<{ connector: string; ref: string | null; data: ProviderData | null } | null> {
  const r = await c.query<{ connector: string; provider_ref: string | null; provider_data: ProviderData | null }>(
    `SELECT coalesce(connector, 'sandbox') AS connector, provider_ref, provider_data FROM refunds WHERE id = $1`, [id]);
  const row = r.rows[0];
  return row ? { connector: row.connector, ref: row.provider_ref, data: row.provider_data } : null;
}
