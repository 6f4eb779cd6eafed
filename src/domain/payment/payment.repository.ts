import type { Queryable } from '../../db/client.js';
import { paymentIdSql } from '../../lib/ids.js';
import type { Currency, PaymentStatus } from '../../generated/prisma/enums.js';
import type { BillStatus } from '../bill/bill.states.js';
import type { PayerAction, ProviderData } from '../providers/connector.js';
import { runPaymentById } from './payment-by-id.js';
import type { PayerFields, PayMethod } from './pay-input.js';

/**
 * The SQL of a payment's operation and of its service (the hot statements `pay_open` and
 * `pay_finish` aside: `pay_finish` is payment-finish.ts's), each taking the connection or the
 * transaction it runs on. Statements about one payment go through `runPaymentById`, which
 * prunes them to the month its id names.
 */

/** A payment as the polling page and the apply step read it. */
export interface PaymentRow {
  id: string; bill_id: string; status: PaymentStatus; amount: string; amount_received: string; commission: string; rate: string | null;
  method: PayMethod; from_card: string | null; email: string | null; phone: string | null; name: string | null; comment: string | null;
  connector: string | null; provider_ref: string | null; payer_action: PayerAction | null; finished_at: Date | null;
  failure_reason: string | null;
  payer_ip: string | null;
  /** Two-stage: what the provider holds (null: nothing held), the capture asked for, whether a cancellation was asked for. */
  authorized_amount: string | null; capture_amount: string | null; cancel_requested: boolean;
  /** Saved cards: the payer consented to saving the card; the saved method it saved or was charged with. */
  save_consent: boolean; payment_method_id: string | null;
  /** A card the provider said it saved before the payment was final (its id encrypted). */
  saved_card: { provider_id_enc: string; mask: string | null; expiry: string | null } | null;
  /** What its connector's answers kept (docs/adr/0118), handed back to every later call; null when nothing. */
  provider_data: ProviderData | null;
  /** The partition key, as text: the finishing statement finds the row in its month's partition only. */
  created_at: string;
}
export const PAYMENT_SQL = `SELECT id, bill_id, status::text, amount::text, amount_received::text, commission::text, rate::text, method::text, from_card,
       payer_email AS email, payer_phone AS phone, payer_name AS name, payer_comment AS comment, connector, provider_ref, payer_action, finished_at,
       failure_reason, payer_ip, authorized_amount::text, capture_amount::text, (cancel_requested_at IS NOT NULL) AS cancel_requested, save_consent, payment_method_id, saved_card, provider_data, created_at::text
  FROM payments WHERE id = $1`;

/** How the payment was made, for the postback's optional fields. */
export interface PaidWith { method: PayMethod; fromCard: string | null; payer: PayerFields; saveConsent?: boolean }

export const paidWithOf = (x: PaymentRow): PaidWith => ({
  method: x.method, fromCard: x.from_card, payer: { email: x.email, phone: x.phone, name: x.name, comment: x.comment }, saveConsent: x.save_consent,
});

/** The payment as the page and the apply step read it; null when there is none. */
export async function readPayment(c: Queryable, id: string): Promise<PaymentRow | null> {
  return (await runPaymentById<PaymentRow>(c, id, { text: PAYMENT_SQL, values: [id] })).rows[0] ?? null;
}

/** The payment locked (FOR UPDATE) in the caller's transaction, with its merchant; null when there is none. */
export async function lockPayment(c: Queryable, id: string): Promise<(PaymentRow & { merchant_id: string }) | null> {
  return (await runPaymentById<PaymentRow & { merchant_id: string }>(c, id, {
    text: PAYMENT_SQL.replace('SELECT id,', 'SELECT id, merchant_id,'), values: [id], suffix: ' FOR UPDATE' })).rows[0] ?? null;
}

/** Our payment at `connector` by our id or the provider's reference (inbound notifications); null when unknown there. */
export async function findAtConnector(c: Queryable, connector: string, ourId: string | null, ref: string): Promise<string | null> {
  if (ourId !== null) {
    const r = await runPaymentById<{ id: string }>(c, ourId, { text: `SELECT id FROM payments WHERE connector = $1 AND id = $2`, values: [connector, ourId] });
    return r.rows[0]?.id ?? null;
  }
  const r = await c.query<{ id: string }>(
    `SELECT id FROM payments WHERE connector = $1 AND ($2::text IS NOT NULL AND id = $2 OR $2::text IS NULL AND provider_ref = $3) LIMIT 1`,
    [connector, ourId, ref]);
  return r.rows[0]?.id ?? null;
}

/** What a payment opened by `pay_open` carries. */
export interface OpenedRow {
  billId: string; merchantId: string; shopId: string; method: PayMethod; amountRub: string; currency: Currency; rate: string | null; commission: string;
  fromCard: string | null; ip: string | null; payer: PayerFields; payableFrom: { NORMAL: readonly BillStatus[]; MULTI: readonly BillStatus[] }; connector: string | null;
  firstCheckMs: number; formNonce: string | null; saveConsent: boolean; paymentMethodId: string | null; receipt: unknown;
}

/**
 * `pay_open`: ONE atomic statement moves the bill to PROCESS only if it is still payable and
 * inserts the payment from that update, so it takes the bill's row lock and the check and the
 * change cannot be split by a concurrent payment. Null when the bill was not payable any more.
 */
export async function openPayment(c: Queryable, idSuffix: string, x: OpenedRow): Promise<{ id: string; created_at: string } | null> {
  // The payment is opened and handed to the acquirer in one step: it is written as PROCESS,
  // and the bill records it as its latest (the finishing statement compares with that). Its
  // creation time is one clock reading, taken in the bill's UPDATE: the sub-SELECT refers to
  // the bill's row, so it is a per-row subplan (uncorrelated, it would be an InitPlan, read
  // once), and an UPDATE that waited for the bill's row lock evaluates it again on the row it
  // then updates (EvalPlanQual): payments of a MULTI bill are ordered as they took the lock.
  // The id names the month of that time, rounded to the column's milliseconds first, so the
  // id's month is its partition's even at 23:59:59.9995 (lib/ids.ts).
  const r = await c.query<{ id: string; created_at: string }>({ name: 'pay_open', text:
    `WITH b AS (
       UPDATE bills SET status = 'PROCESS', updated_at = now(),
              (last_payment_id, last_payment_at) = (SELECT ${paymentIdSql('t.at', '$1::text')}, t.at
                                                      FROM (SELECT clock_timestamp()::timestamptz(3) AS at, bills.id AS bill_id OFFSET 0) t
                                                     WHERE t.bill_id = bills.id)
        WHERE id = $2 AND active AND (expires_at IS NULL OR expires_at > now())
          AND status = ANY(CASE WHEN type = 'NORMAL' THEN $16::"BillStatus"[] ELSE $17::"BillStatus"[] END)
       RETURNING id, last_payment_id, last_payment_at)
     INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, currency_in, bill_currency, rate,
                           commission, account_currency, from_card, payer_ip, payer_email, payer_phone, payer_name, payer_comment,
                           connector, next_check_at, form_nonce, created_at, updated_at, save_consent, payment_method_id, receipt)
     SELECT b.last_payment_id, b.id, $3, $4, 'PROCESS', $5::"PaymentMethod", $6, 'RUB', $7::"Currency", $8, $9, $7::"Currency", $10, $11,
            $12, $13, $14, $15, $18, b.last_payment_at + make_interval(secs => $19::double precision / 1000), $20, b.last_payment_at, b.last_payment_at,
            $21, $22, $23::jsonb
       FROM b
     RETURNING id, created_at::text`,
  values: [idSuffix, x.billId, x.merchantId, x.shopId, x.method, x.amountRub, x.currency, x.rate, x.commission, x.fromCard, x.ip,
    x.payer.email, x.payer.phone, x.payer.name, x.payer.comment, x.payableFrom.NORMAL, x.payableFrom.MULTI,
    x.connector, x.firstCheckMs, x.formNonce, x.saveConsent, x.paymentMethodId, x.receipt],
  });
  return r.rowCount === 1 ? r.rows[0]! : null;
}

/** The routing's next connector, on record before it is called (reconciliation asks the one that may have the money). */
export async function setConnector(c: Queryable, id: string, connector: string): Promise<void> {
  await runPaymentById(c, id, { text: `UPDATE payments SET connector = $2 WHERE id = $1 AND status = 'PROCESS'`, values: [id, connector] });
}

/** What a PROCESS payment keeps of an answer that is not final (`keepHeard`). */
export interface Heard {
  ref: string | null;
  /** The payer's action, as JSON (kept until another replaces it). */
  action: string | null;
  attempts: number; nextCheckMs: number;
  /** The call went unanswered. */
  unanswered: boolean;
  /** Two-stage: what the provider says it holds (RUB, 2 decimals). */
  held: string | null;
  /** A card saved before the payment is final, as JSON. */
  savedCard: string | null;
  /** The answer's ProviderData, as JSON (replaces what was kept; null keeps it). */
  data: string | null;
}

/** The payment kept PROCESS with what was heard; its merchant, connector and reference as it then is (null: not PROCESS). */
export async function keepHeard(c: Queryable, id: string, h: Heard): Promise<{ merchant_id: string; connector: string | null; provider_ref: string | null; created_at: Date } | null> {
  const r = await runPaymentById<{ merchant_id: string; connector: string | null; provider_ref: string | null; created_at: Date }>(c, id, { text:
    `UPDATE payments SET provider_ref = coalesce($2, provider_ref),
            authorized_amount = coalesce(authorized_amount, $7::numeric),
            authorized_at = CASE WHEN $7::numeric IS NOT NULL THEN coalesce(authorized_at, clock_timestamp()) ELSE authorized_at END,
            payer_action = CASE WHEN $7::numeric IS NOT NULL THEN NULL ELSE coalesce($3::jsonb, payer_action) END, check_attempts = $4,
            next_check_at = now() + make_interval(secs => $5::double precision / 1000), updated_at = now(),
            -- A call just went unanswered: the payer's page, opened next, does not ask again at once
            -- (it would wait out another timeout before showing that the payment is being checked).
            provider_asked_at = CASE WHEN $6 THEN clock_timestamp() ELSE provider_asked_at END,
            saved_card = coalesce(saved_card, $8::jsonb), provider_data = coalesce($9::jsonb, provider_data)
      WHERE id = $1 AND status = 'PROCESS'`,
  values: [id, h.ref, h.action, h.attempts, h.nextCheckMs, h.unanswered, h.held, h.savedCard, h.data],
  suffix: ' RETURNING merchant_id, connector, provider_ref, created_at' });
  return r.rows[0] ?? null;
}

/** Starts (once) the wait for a decline's reason and schedules the next question at its end; whether it has ended. */
export async function declineReasonWaited(c: Queryable, id: string, waitMs: number, attempts: number | undefined): Promise<boolean> {
  const r = await runPaymentById<{ waited: boolean }>(c, id, { text:
    `UPDATE payments SET decline_seen_at = coalesce(decline_seen_at, clock_timestamp()),
            next_check_at = coalesce(decline_seen_at, clock_timestamp()) + make_interval(secs => $2::double precision / 1000),
            check_attempts = coalesce($3, check_attempts), updated_at = now()
      WHERE id = $1 AND status = 'PROCESS'`,
  values: [id, waitMs, attempts ?? null],
  suffix: ` RETURNING decline_seen_at <= clock_timestamp() - make_interval(secs => $2::double precision / 1000) AS waited` });
  return r.rows[0]?.waited === true;
}

/**
 * A card saved by a payment already final with money received, the payer having consented and
 * none saved yet: written once (the unique payment_id), and the payment names it.
 */
export async function saveLate(c: Queryable, id: string, card: { savedId: string; providerIdEnc: string; mask: string | null; expiry: string | null }): Promise<void> {
  // Rare (a late word): by id over every month, with no month bound appended.
  await c.query({ text:
    `WITH p AS (
       SELECT p.id, p.created_at, p.merchant_id, p.shop_id, p.connector,
              CASE WHEN m.live_merchant_id IS NULL THEN 'live' ELSE 'test' END AS mode
         FROM payments p JOIN merchants m ON m.id = p.merchant_id
        WHERE p.id = $1 AND p.save_consent AND p.payment_method_id IS NULL AND p.connector IS NOT NULL
          AND p.status IN ('SUCCESS', 'UNDERPAID', 'OVERPAID')),
     sm AS (
       INSERT INTO saved_payment_methods (id, merchant_id, shop_id, mode, connector, provider_id_enc, card_mask, card_expiry, payment_id)
       SELECT $2, merchant_id, shop_id, mode, connector, $3, $4, $5, id FROM p
       ON CONFLICT (payment_id) DO NOTHING
       RETURNING id, payment_id)
     UPDATE payments SET payment_method_id = sm.id FROM sm, p WHERE payments.id = sm.payment_id AND payments.created_at = p.created_at`,
    values: [id, card.savedId, card.providerIdEnc, card.mask, card.expiry] });
}

/** The saved method a charge was made with, REVOKED (once; a saving payment has none to revoke). */
export async function revokeCharged(c: Queryable, id: string, createdAt: string): Promise<void> {
  await c.query(
    `UPDATE saved_payment_methods s SET status = 'REVOKED', revoked_at = coalesce(s.revoked_at, now())
       FROM payments p
      WHERE p.id = $1 AND p.created_at = $2::timestamptz AND NOT p.save_consent AND s.id = p.payment_method_id AND s.status = 'ACTIVE'`,
    [id, createdAt]);
}

/** A saved card's charge in PROCESS as its creation was sent; null for a payment that is no charge. */
export async function chargeToRepeat(c: Queryable, id: string) {
  const r = await runPaymentById<{ bill_id: string; amount: string; commission: string; rate: string | null; created_at: Date; provider_id_enc: string | null; receipt: unknown }>(c, id, {
    text: `SELECT bill_id, amount::text, commission::text, rate::text, created_at, receipt,
                  (SELECT s.provider_id_enc FROM saved_payment_methods s WHERE s.id = payments.payment_method_id) AS provider_id_enc
             FROM payments WHERE id = $1 AND status = 'PROCESS' AND payment_method_id IS NOT NULL AND NOT save_consent`, values: [id] });
  const x = r.rows[0];
  return x?.provider_id_enc ? { ...x, provider_id_enc: x.provider_id_enc } : null;
}

/** The status of a payment and of its bill, when the finishing statement's guard refused. */
export async function statusesOf(c: Queryable, id: string, createdAt: string, billId: string): Promise<{ payment: PaymentStatus | null; bill: BillStatus | null }> {
  const cur = await c.query<{ status: PaymentStatus }>(`SELECT status::text FROM payments WHERE id = $1 AND created_at = $2::timestamptz`, [id, createdAt]);
  const bb = await c.query<{ status: BillStatus }>(`SELECT status::text FROM bills WHERE id = $1`, [billId]);
  return { payment: cur.rows[0]?.status ?? null, bill: bb.rows[0]?.status ?? null };
}

/** The legs of a payment's credit, as the ledger wrote them. */
export async function creditLegsOf(c: Queryable, id: string) {
  return (await c.query<{ currency: Currency; debit_account: string; credit_account: string; amount: string }>(
    `SELECT currency::text AS currency, debit_account, credit_account, amount::text FROM ledger_entries WHERE transfer_id = $1 ORDER BY leg`,
    [`PAYMENT_CREDIT:${id}`])).rows;
}

/**
 * Claims payments in PROCESS that are due to be asked, oldest check first: their next check
 * moves `leaseMs` ahead, so another worker skips them while this one asks.
 */
export async function claimDue(c: Queryable, limit: number, leaseMs: number) {
  return (await c.query<{ id: string; connector: string | null; provider_ref: string | null; provider_data: ProviderData | null; check_attempts: number; created_at: Date }>(
    `UPDATE payments p SET next_check_at = now() + make_interval(secs => $2::double precision / 1000)
       FROM (SELECT id FROM payments WHERE status = 'PROCESS' AND next_check_at <= now()
              ORDER BY next_check_at LIMIT $1 FOR UPDATE SKIP LOCKED) d
      WHERE p.id = d.id
      RETURNING p.id, p.connector, p.provider_ref, p.provider_data, p.check_attempts, p.created_at`, [limit, leaseMs])).rows;
}

/** Checks claimed but never asked: due again at once. */
export async function releaseDue(c: Queryable, ids: string[]): Promise<void> {
  if (ids.length > 0) await c.query(`UPDATE payments SET next_check_at = now() WHERE id = ANY($1::text[]) AND status = 'PROCESS'`, [ids]);
}

/** What a merchant's payment holds that may still be captured or cancelled; null when nothing. */
export async function capturableOf(c: Queryable, merchantId: string, id: string): Promise<string | null> {
  const r = await runPaymentById<{ held: string }>(c, id, { text:
    `SELECT authorized_amount::text AS held FROM payments
      WHERE id = $1 AND merchant_id = $2 AND status = 'PROCESS' AND authorized_amount IS NOT NULL
        AND capture_amount IS NULL AND cancel_requested_at IS NULL`, values: [id, merchantId] });
  return r.rows[0]?.held ?? null;
}

/** A hold's capture (`amount`, its receipt) or cancellation asked for, on the PROCESS payment; its merchant. */
export async function recordHoldRequest(c: Queryable, id: string, kind: 'capture' | 'cancel', amount: string, receipt: unknown): Promise<string> {
  const r = await runPaymentById<{ merchant_id: string }>(c, id, { text:
    `UPDATE payments SET capture_amount = CASE WHEN $2 THEN $3::numeric ELSE capture_amount END,
            capture_receipt = CASE WHEN $2 THEN $4::jsonb ELSE capture_receipt END,
            cancel_requested_at = CASE WHEN $2 THEN cancel_requested_at ELSE clock_timestamp() END, updated_at = now()
      WHERE id = $1 AND status = 'PROCESS'`,
  values: [id, kind === 'capture', amount, receipt], suffix: ' RETURNING merchant_id' });
  return r.rows[0]!.merchant_id;
}

/** The receipt a capture asked for before was built with. */
export async function captureReceiptJson(c: Queryable, id: string): Promise<unknown> {
  return (await runPaymentById<{ capture_receipt: unknown }>(c, id, { text: `SELECT capture_receipt FROM payments WHERE id = $1`, values: [id] })).rows[0]?.capture_receipt;
}

/** A hold's request the provider refused, withdrawn (it may be made again). */
export async function withdrawHoldRequest(c: Queryable, id: string, kind: 'capture' | 'cancel'): Promise<void> {
  await runPaymentById(c, id, { text:
    `UPDATE payments SET capture_amount = CASE WHEN $2 THEN NULL ELSE capture_amount END,
            capture_receipt = CASE WHEN $2 THEN NULL ELSE capture_receipt END,
            cancel_requested_at = CASE WHEN $2 THEN cancel_requested_at ELSE NULL END, updated_at = now()
      WHERE id = $1 AND status = 'PROCESS'`, values: [id, kind === 'capture'] });
}
