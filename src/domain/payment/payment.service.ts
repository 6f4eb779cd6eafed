import { Decimal } from 'decimal.js';
import type pg from 'pg';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../../errors.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { newId, newPaymentIdSuffix, paymentIdSql } from '../../lib/ids.js';
import { runPaymentById } from './payment-by-id.js';
import { maskCard } from '../../lib/card.js';
import { commissionFor } from '../merchant/fees.js';
import { ledgerParams, transfersSql } from '../ledger/fragments.js';
import { statement } from '../../db/statement.js';
import { ledgerError } from '../ledger/ledger.js';
import { paymentNotReceivedAfterAll, paymentReceived, paymentReceivedAfterAll } from '../ledger/postings.js';
import { recordConflict, type ProviderWord } from '../providers/conflict.js';
import { Lifecycle, type Claimed, type Deferred, type LifecycleObserver, type OperationKind } from '../operations/lifecycle.js';
import type { Leg } from '../ledger/ledger.js';
import { enqueueEvent, eventRow, paymentSignature, type PaymentPostbackFields } from '../../outbox/events.js';
import type { HoldReading } from './hold-reading.js';
import type { Currency, PaymentStatus } from '../../generated/prisma/enums.js';
import {
  assertTransition, IllegalBillTransitionError, PAYABLE_FROM, payRefusal, sourcesOf as billSourcesOf, type BillStatus,
} from '../bill/bill.states.js';
import { PAYMENT_METHOD_REVOKED, type Connector, type PayerAction, type PaymentOutcome, type SavedCard } from '../providers/connector.js';
import { ConnectorRegistry } from '../providers/registry.js';
import { nextCheckDelayMs } from './reconcile-schedule.js';
import { assertPaymentTransition, IllegalPaymentTransitionError, paymentSourcesOf } from './payment.states.js';
import { isMoneyReceived } from '../../kernel/statuses.js';
import { PayValidationError, type PayerFields, type PayInput, type PayMethod } from './pay-input.js';
import { paymentError, PROVIDER_UNAVAILABLE } from './payment-errors.js';
import { money8 } from '../../lib/money.js';
import { paymentReceipt, type Receipt } from '../receipt/receipt.js';
import { paymentCandidates, quoteFor, readPayableBill, round2, type PayableBill, type Quote } from './payable-bill.js';
import { captureReceiptOf } from '../receipt/receipt.repository.js';
import { receiptFromJson, receiptToJson } from '../receipt/receipt-json.js';

export type { PayableBill, Quote } from './payable-bill.js';

export interface RedirectFields { InvId: string; OutSum: string; CurrencyIn: string; custom: string; SignatureValue: string }

export interface PayOutcome {
  bill: PayableBill;
  paymentId: string;
  billId: string;
  status: PaymentStatus;
  amountRub: Decimal;
  amountReceivedRub: Decimal;
  /** Success URL for money received, Fail URL for a FAIL (url null when the shop has none); null while PROCESS. */
  redirect: { url: string | null; fields: RedirectFields } | null;
  /** What the payer must do while the payment is PROCESS (null when nothing, or final). */
  action: PayerAction | null;
  /** When the payment became final (the receipt's date); absent on the answer of the paying call. */
  finishedAt?: Date | null;
  /** How the payer paid (the page reopens the same method after a decline). */
  method?: PayMethod;
  /** Why a FAIL failed: the acquirer's code as `payments.failure_reason` keeps it; null otherwise. */
  failureReason?: string | null;
  /** What the payer typed in the bill's payer fields (read back by paymentState; never the card). */
  payer?: PayerFields;
  /** The address the payment was made from (read back by paymentState). */
  payerIp?: string | null;
  /** A two-stage payment as people read it (read back by paymentState; null: not a hold). */
  hold?: HoldReading | null;
}

/** A capture or cancellation of a held payment, as its audit entry records it (RUB). */
export interface HoldRequest { paymentId: string; merchantId: string; kind: 'capture' | 'cancel'; amount: Decimal; held: Decimal }

/** What a capture or cancellation did: the payment's status now (PROCESS: the provider's answer is still awaited). */
export interface HoldSettled { paymentId: string; status: PaymentStatus; amount: Decimal }

/** A payment reconciliation is to ask its provider about (sent when it was opened: `sentAt` is its creation). */
export interface DueCheck extends Claimed { connector: string | null; ref: string | null; sentAt: Date }

/** What applying a provider's answer did: `applied` only when this call made the payment final. */
export interface ApplyResult { applied: boolean; status: PaymentStatus; conflict?: boolean }

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
  /** The partition key, as text: the finishing statement finds the row in its month's partition only. */
  created_at: string;
}
export const PAYMENT_SQL = `SELECT id, bill_id, status::text, amount::text, amount_received::text, commission::text, rate::text, method::text, from_card,
       payer_email AS email, payer_phone AS phone, payer_name AS name, payer_comment AS comment, connector, provider_ref, payer_action, finished_at,
       failure_reason, payer_ip, authorized_amount::text, capture_amount::text, (cancel_requested_at IS NOT NULL) AS cancel_requested, save_consent, payment_method_id, saved_card, created_at::text
  FROM payments WHERE id = $1`;

export const paidWithOf = (x: PaymentRow): PaidWith => ({
  method: x.method, fromCard: x.from_card, payer: { email: x.email, phone: x.phone, name: x.name, comment: x.comment }, saveConsent: x.save_consent,
});

export class BillNotPayableError extends DomainError {}

/** A saved card a charge opens its payment with (docs/adr/0074-saved-cards-and-recurring-charges.md). */
export interface ChargeOf {
  id: string; connector: Connector; providerId: string; mask: string | null;
  /** Where the charge's receipt goes (a fiscalized shop): the merchant's, or the saving payer's. */
  payer: { email: string | null; phone: string | null };
}

/** The payer form parsed against the bill (its fixed method) and whether the card form is the provider's. */
export type PayInputOf = (bill: PayableBill, o: { hostedCard: boolean }) => PayInput;

/** A payment form's token that already opened a payment (the page finds it: paymentOfForm). */
export class FormAlreadyUsedError extends DomainError {
  constructor() { super('payment_in_progress'); }
}


/**
 * ONE statement, atomic on its own (no BEGIN/COMMIT round trips): the payment PROCESS -> final
 * (row count checked), the bill PROCESS -> final when this is its latest payment, the ledger's
 * PAYMENT_CREDIT transfer with its balance move (the ledger's transfersSql), the postback outbox
 * row, and the merchant's token for the redirect signature. Everything after `p` reads from it,
 * so nothing moves unless the payment really went PROCESS -> final here; (kind, ref_id) and
 * (kind, aggregate_id) stay unique as with ledger.post and enqueueEvent.
 */
const PAY_FINISH = statement('pay_finish', `WITH p AS (
         UPDATE payments SET status = :status::text::"PaymentStatus", amount_received = :received, commission = :commission, account_amount = :account_amount,
                provider_ref = coalesce(:reference, provider_ref), failure_reason = :failure_reason, failure_message = :failure_message,
                connector = coalesce(:connector, connector), finished_at = now(), updated_at = now(),
                payment_method_id = coalesce(:saved_id, payment_method_id)
          -- The creation time (the partition key) leads the planner to the one month's partition.
          WHERE id = :payment_id AND created_at = :created_at::timestamptz AND status = ANY(:payment_sources::"PaymentStatus"[])
            -- A NORMAL bill must still be where it can follow the payment (PROCESS): else
            -- nothing of this statement happens (no credit for a payment whose bill cannot).
            -- The bill's id also as a parameter (:bill_id): with it the planner probes bills_pkey; from
            -- the join alone it estimated one row per partition of payments and hashed a seq scan
            -- of bills, which costs the whole table while it is small (a new service's).
            AND EXISTS (SELECT 1 FROM bills bb WHERE bb.id = :bill_id AND bb.id = payments.bill_id AND (bb.type = 'MULTI' OR bb.status = ANY(:bill_sources::"BillStatus"[])))
         RETURNING bill_id, created_at, id),
       b AS (
         UPDATE bills SET status = :status::text::"BillStatus", updated_at = now()
           FROM p
          WHERE bills.id = :bill_id AND bills.id = p.bill_id AND bills.status = ANY(:bill_sources::"BillStatus"[])
            -- This payment is the bill's latest, as the bill row records it (pay_open). The
            -- column is read on the row version this UPDATE locks, so a payment opened while
            -- it waited for the lock counts; a subquery over payments would read the snapshot
            -- taken before, and the bill would follow the older payment for good
            -- (docs/adr/0011-bill-records-its-latest-payment.md).
            AND (bills.last_payment_id = p.id
              -- A bill with no payment opened since the column exists: its payments say. A
              -- scalar subquery, not NOT EXISTS (an anti-join was once planned as a hash over
              -- a seq scan of the month); a later payment is never older than this one, so
              -- the bound on the partition key, a parameter, prunes the earlier months.
              OR bills.last_payment_id IS NULL
                 AND p.id = (SELECT q.id FROM payments q WHERE q.bill_id = p.bill_id AND q.created_at >= :created_at::timestamptz
                              ORDER BY q.created_at DESC, q.id DESC LIMIT 1))
         RETURNING bills.id),
       ${transfersSql('p', 'credit')},
       o AS (
         INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, status, last_error)
         -- A duplicate (kind, aggregate_id) is skipped by the dedupe trigger (outbox_event_keys).
         SELECT :merchant_id, 'PAYMENT_POSTBACK', p.id, :event_url, :event_payload::jsonb, :event_status::"OutboxEventStatus", :event_error FROM p
         RETURNING 1),
       -- The card the provider saved with the payer's consent (docs/adr/0074-saved-cards-and-recurring-charges.md):
       -- once per payment (its unique payment_id), only when the payment really finished here.
       sm AS (
         INSERT INTO saved_payment_methods (id, merchant_id, shop_id, mode, connector, provider_id_enc, card_mask, card_expiry, payment_id)
         SELECT :saved_id, :merchant_id, :saved_shop_id, :saved_mode, :saved_connector, :saved_enc, :saved_mask, :saved_expiry, p.id
           FROM p WHERE :saved_id::text IS NOT NULL
         ON CONFLICT (payment_id) DO NOTHING
         RETURNING 1)
       SELECT (SELECT count(*) FROM p)::int AS p, (SELECT count(*) FROM b)::int AS b, (SELECT count(*) FROM sm)::int AS sm,
              (SELECT api_token_enc FROM merchants WHERE id = :merchant_id) AS tok`);

/** The receipt a payment of `bill` carries (null when its shop issues none), from the quote it was opened with. */
export function receiptFor(bill: PayableBill, quote: Quote, payer: PayerFields): Receipt | null {
  if (!bill.fiscal) return null;
  return paymentReceipt({
    fiscal: bill.fiscal, billName: bill.name, billDescription: bill.description, items: bill.items, totalRub: quote.dueRub,
    payerCommission: bill.payerPaysCommission ? quote.commission : new Decimal(0), rate: quote.rate, rub: bill.currency === 'RUB',
    email: payer.email, phone: payer.phone,
  });
}

/** A connector's answer as the finishing step takes it; null when it is not final. */
type ChargeResult =
  /** `captured`: a held payment captured (in full or in part): SUCCESS with what was captured, never UNDERPAID. */
  | { outcome: 'PAID'; amountReceived: Decimal; reference: string; captured?: boolean; saved?: SavedCard }
  | { outcome: 'DECLINED'; reason: string; message: string; reference: string };

function toCharge(o: PaymentOutcome): ChargeResult | null {
  // Every connector the payment could go to refused before any money moved (down, a 5xx, a
  // refusal on creation): the payer's card is not at fault and the merchant is told the method
  // was unavailable; the provider's own code and words stay in failure_message for the operator.
  if (o.status === 'refused') return { outcome: 'DECLINED', reason: PROVIDER_UNAVAILABLE, message: `${o.code}: ${o.message}`.slice(0, 500), reference: '' };
  return finalAnswer(o);
}

/**
 * A provider's final answer about a payment it has: paid or declined. A later `refused` (the
 * provider could not be asked) is no answer at all: it never fails a payment.
 */
function finalAnswer(o: PaymentOutcome): ChargeResult | null {
  switch (o.status) {
    case 'paid': return { outcome: 'PAID', amountReceived: o.amountReceived, reference: o.ref, ...(o.saved ? { saved: o.saved } : {}) };
    case 'declined': return { outcome: 'DECLINED', reason: o.code, message: o.message, reference: o.ref ?? '' };
    default: return null;
  }
}

/** How the payment was made, for the postback's optional fields. */
interface PaidWith { method: PayMethod; fromCard: string | null; payer: PayerFields; saveConsent?: boolean }

/**
 * The payment postback's optional fields (api-in-the-wild.md): how it was paid, what the
 * balance received, the payer's fields when the page asked for them, and for a FAIL why.
 * Fields with no value are left out (never posted empty); the signature does not cover them.
 */
function postbackExtras(paid: PaidWith, status: PaymentStatus, accountAmount: Decimal, currency: Currency, result: ChargeResult): Partial<PaymentPostbackFields> {
  const out: Partial<PaymentPostbackFields> = {
    AccountType: paid.method,
    BalanceAmount: money8(status === 'FAIL' ? 0 : accountAmount),
    BalanceCurrency: currency,
  };
  const account = paid.method === 'BANK_CARD' ? paid.fromCard : paid.payer.phone;
  if (account) out.AccountNumber = account;
  if (paid.payer.phone) out.PayerPhone = paid.payer.phone;
  if (paid.payer.email) out.PayerEmail = paid.payer.email;
  if (paid.payer.name) out.PayerName = paid.payer.name;
  if (paid.payer.comment) out.PayerComment = paid.payer.comment;
  if (status === 'FAIL') {
    const err = paymentError('FAIL', result.outcome === 'DECLINED' ? result.reason : 'declined');
    if (err.code) out.ErrorCode = err.code;
    if (err.message) out.ErrorMessage = err.message;
  }
  return out;
}

/** Status by what arrived against what was due (DESIGN "States"). */
export function statusFor(received: Decimal, due: Decimal): 'SUCCESS' | 'UNDERPAID' | 'OVERPAID' {
  return received.eq(due) ? 'SUCCESS' : received.lt(due) ? 'UNDERPAID' : 'OVERPAID';
}

/**
 * The money of a finished payment, in the bill's currency (formulas in docs/adr/0010-payment-amounts-and-postback-fields.md):
 * what arrived is scaled from RUB back to the bill's currency by the share of the amount due,
 * the fee by the same share, and the merchant is credited what arrived minus its fee share.
 */
export function settle(q: Quote, receivedRub: Decimal): { receivedInBillCurrency: Decimal; commission: Decimal; accountAmount: Decimal } {
  if (receivedRub.lte(0)) return { receivedInBillCurrency: new Decimal(0), commission: new Decimal(0), accountAmount: new Decimal(0) };
  const exact = receivedRub.eq(q.dueRub);
  const share = receivedRub.div(q.dueRub);
  const receivedInBillCurrency = exact ? q.dueInBillCurrency : round2(q.dueInBillCurrency.mul(share));
  const fee = exact ? q.commission : round2(q.commission.mul(share));
  const commission = Decimal.min(fee, receivedInBillCurrency);
  return { receivedInBillCurrency, commission, accountAmount: receivedInBillCurrency.sub(commission) };
}

/**
 * The quote a payment was opened with, from what the payment row stored (the fees or the rate
 * may have changed since): `amount` is what the payer owed in RUB, `commission` is in the bill's
 * currency, and the amount due in the bill's currency is the bill's (plus the fee when the payer
 * pays it), never the RUB amount.
 */
export function storedQuote(bill: Pick<PayableBill, 'amount' | 'payerPaysCommission' | 'rate'>, payment: { amount: string; commission: string; rate: string | null }): Quote {
  const commission = new Decimal(payment.commission);
  return {
    commission,
    dueInBillCurrency: bill.payerPaysCommission ? bill.amount.add(commission) : bill.amount,
    dueRub: new Decimal(payment.amount),
    rate: payment.rate !== null ? new Decimal(payment.rate) : bill.rate ?? new Decimal(1),
  };
}

/**
 * The payer side of a bill: quotes, the payment flow through the acquirer, the final
 * transaction (payment, bill, ledger, outbox). Used by the hosted page and the cabinet.
 */
export class PaymentService {
  /** The payment's part in the provider-operation lifecycle. */
  readonly lifecycle: Lifecycle<PaymentStatus, PaymentRow, PaymentOutcome, DueCheck>;

  constructor(
    private readonly config: Config,
    private readonly db: Db,
    readonly connectors: ConnectorRegistry = new ConnectorRegistry(config, db),
    observer?: LifecycleObserver,
  ) {
    this.lifecycle = new Lifecycle(this.operation(), { pool: db.pool, giveUpMs: config.reconcileGiveUpMs, observer });
  }

  /**
   * Pays a bill; the payer's request runs the payment's send phase itself: `pay_open` locks the
   * bill, checks it and opens the payment (payment PROCESS, NORMAL bill -> PROCESS, the first
   * connector on record); the connector is called outside any transaction; a final answer is
   * applied by `finish_` in ONE statement (atomic on its own: no BEGIN/COMMIT round trips on the
   * hot path), anything else keeps it PROCESS for the payer's page, notifications and
   * reconciliation (the lifecycle's other phases). A NORMAL bill thus has at most one running
   * payment and at most one that receives money.
   */
  async pay(billId: string, input: PayInput | PayInputOf, ctx: { ip?: string; formNonce?: string } = {}): Promise<PayOutcome> {
    return this.sendOpened(await this.open(this.db.pool, billId, input, ctx.ip ?? null, ctx.formNonce ?? null));
  }

  /**
   * Opens the payment of a saved card's charge in the caller's transaction (the one that wrote its
   * bill; docs/adr/0074-saved-cards-and-recurring-charges.md): the method's connector only, no payer.
   * `sendOpened` then calls the connector, after the commit.
   */
  openCharge(c: Pick<pg.Pool, 'query'>, billId: string, charge: ChargeOf) {
    return this.open(c, billId, { method: 'BANK_CARD', payer: { email: charge.payer.email, phone: charge.payer.phone, name: null, comment: null } }, null, null, charge);
  }

  /** The send phase of an opened payment: its connector called outside any transaction, a final answer applied once. */
  async sendOpened(opened: Awaited<ReturnType<PaymentService['open']>>): Promise<PayOutcome> {
    const { input: pay, paymentId } = opened;
    const { outcome, connector } = await this.createPaymentFromProvider_(opened);
    this.lifecycle.answered(paymentId);
    const result = toCharge(outcome);
    if (result === null) {
      // No final answer (an action the payer must take, a pending operation, a timeout): the
      // payment stays PROCESS with the connector that has it and its reference; nothing is
      // guessed. The payer's page polls it; notifications and reconciliation finish it.
      const action = outcome.status === 'action' ? outcome.action : null;
      await this.hold(paymentId, outcome, 0);
      return {
        bill: opened.bill, paymentId, billId: opened.bill.id, status: 'PROCESS', amountRub: opened.quote.dueRub,
        amountReceivedRub: new Decimal(0), redirect: null, action,
      };
    }
    try {
      return await this.finish_(this.db.pool, opened.bill, { id: paymentId, createdAt: opened.createdAt }, opened.quote, result, {
        method: pay.method, fromCard: opened.charge ? opened.charge.mask : pay.card ? maskCard(pay.card.number) : null, payer: pay.payer, saveConsent: opened.saveConsent,
      }, connector);
    } catch (e) {
      // The payment became final while this call was out (the provider's notification, after an
      // answer it repeated, overtook the answer itself): the answer is the provider's word like any
      // read, applied once (agreeing, nothing; contradicting, a recorded conflict), and the caller
      // gets the payment as it is, never a 409 for a state already reached (docs/adr/0090).
      if (!(e instanceof IllegalPaymentTransitionError)) throw e;
      await this.applyOutcome(paymentId, outcome, { via: 'reconciliation' });
      const now = (await runPaymentById<PaymentRow>(this.db.pool, paymentId, { text: PAYMENT_SQL, values: [paymentId] })).rows[0]!;
      return {
        bill: opened.bill, paymentId, billId: opened.bill.id, status: now.status, amountRub: opened.quote.dueRub,
        amountReceivedRub: new Decimal(now.amount_received), redirect: null, action: null, method: pay.method,
        failureReason: now.status === 'FAIL' ? now.failure_reason : null,
      };
    }
  }

  /**
   * The payment's first call, outside any transaction. Routing (PROVIDERS.md): the first
   * candidate was written with the payment (pay_open); the next one is tried ONLY after a
   * refusal before money could move, and is written first, so reconciliation always asks the
   * connector that may have the money.
   */
  private async createPaymentFromProvider_(opened: Awaited<ReturnType<PaymentService['open']>>): Promise<{ outcome: PaymentOutcome; connector: string | null }> {
    const { input: pay, paymentId } = opened;
    const method = pay.method === 'SBP' ? 'sbp' : 'card';
    // The receipt frozen with the payment when it was opened (docs/adr/0087): every connector tried gets this one.
    const receipt = opened.receipt ?? undefined;
    let last: { outcome: PaymentOutcome; connector: string | null } | null = null;
    for (const [i, c] of opened.candidates.entries()) {
      if (i > 0) await runPaymentById(this.db.pool, paymentId, { text: `UPDATE payments SET connector = $2 WHERE id = $1 AND status = 'PROCESS'`, values: [paymentId, c.name] });
      const outcome = await this.connectors.call<PaymentOutcome>(c, 'create_payment', (cc) => c.createPayment({
        paymentId, method, amount: opened.quote.dueRub, card: c.capabilities.hostsCardForm ? undefined : pay.card,
        // What an SBP payer sends is chosen on the sandbox bank's page only (a test instrument):
        // a real provider is asked for the amount due, whatever the request said.
        sbpAmount: c.kind === 'sandbox' ? pay.sbpAmount : undefined,
        returnUrl: `${this.config.publicBaseUrl}/pay/${opened.bill.id}/payments/${paymentId}`,
        receipt,
        ...(opened.bill.expiresAt ? { payableUntil: opened.bill.expiresAt } : {}),
        ...(opened.bill.capture ? {} : { capture: false }),
        ...(opened.saveConsent && c.capabilities.savedCards ? { savePaymentMethod: true } : {}),
        ...(opened.charge ? { savedMethod: { providerId: opened.charge.providerId } } : {}),
      }, cc));
      last = { outcome, connector: c.name };
      if (outcome.status !== 'refused') break;
    }
    return last ?? { outcome: { status: 'refused', code: 'no_connector', message: `No enabled connector can take payment_${method}.` }, connector: null };
  }

  /**
   * Keeps a payment PROCESS with what the provider said that was not final: the payer's action
   * (kept until another replaces it), its reference, and when to ask next. The connector that
   * has it is on record since it was called.
   */
  private async hold(paymentId: string, o: PaymentOutcome, attempts: number, c: Queryable = this.db.pool): Promise<Deferred | null> {
    const ref = 'ref' in o ? o.ref : null;
    const action = o.status === 'action' ? JSON.stringify(o.action) : null;
    // Two-stage: what the provider holds, recorded when it first says so (docs/adr/0073-two-stage-payments.md).
    const held = o.status === 'authorized' ? round2(o.amount).toFixed(2) : null;
    // A card saved before the payment is final (T-Bank: RebillId on AUTHORIZED), kept for its finish.
    const saved = o.status === 'pending' && o.saved
      ? JSON.stringify({ provider_id_enc: encrypt(this.config.tokenEncryptionKey, o.saved.providerId), mask: o.saved.mask, expiry: o.saved.expiry }) : null;
    const r = await runPaymentById<{ merchant_id: string; connector: string | null; provider_ref: string | null; created_at: Date }>(c, paymentId, { text:
      `UPDATE payments SET provider_ref = coalesce($2, provider_ref),
              authorized_amount = coalesce(authorized_amount, $7::numeric),
              authorized_at = CASE WHEN $7::numeric IS NOT NULL THEN coalesce(authorized_at, clock_timestamp()) ELSE authorized_at END,
              payer_action = CASE WHEN $7::numeric IS NOT NULL THEN NULL ELSE coalesce($3::jsonb, payer_action) END, check_attempts = $4,
              next_check_at = now() + make_interval(secs => $5::double precision / 1000), updated_at = now(),
              -- A call just went unanswered: the payer's page, opened next, does not ask again at once
              -- (it would wait out another timeout before showing that the payment is being checked).
              provider_asked_at = CASE WHEN $6 THEN clock_timestamp() ELSE provider_asked_at END,
              saved_card = coalesce(saved_card, $8::jsonb)
        WHERE id = $1 AND status = 'PROCESS'`,
    values: [paymentId, ref, action, attempts, nextCheckDelayMs(this.config, attempts), o.status === 'unknown', held, saved],
    suffix: ' RETURNING merchant_id, connector, provider_ref, created_at' });
    const row = r.rows[0];
    // A payment is handed to its connector when it is opened: its deadline runs from then.
    return row ? { merchantId: row.merchant_id, connector: row.connector, ref: row.provider_ref, sentAt: row.created_at } : null;
  }

  /**
   * Whether a decline whose reason the provider sends separately (its notification) has waited
   * DECLINE_REASON_WAIT_MS since it was first read. The first read starts the wait and asks the
   * provider again when it ends, so reconciliation applies it with the generic reason when the
   * notification never comes; a notification that comes first finishes the payment with its reason.
   */
  private async declineReasonWaited(paymentId: string, attempts: number | undefined, c: Queryable): Promise<boolean> {
    const r = await runPaymentById<{ waited: boolean }>(c, paymentId, { text:
      `UPDATE payments SET decline_seen_at = coalesce(decline_seen_at, clock_timestamp()),
              next_check_at = coalesce(decline_seen_at, clock_timestamp()) + make_interval(secs => $2::double precision / 1000),
              check_attempts = coalesce($3, check_attempts), updated_at = now()
        WHERE id = $1 AND status = 'PROCESS'`,
    values: [paymentId, this.config.declineReasonWaitMs, attempts ?? null],
    suffix: ` RETURNING decline_seen_at <= clock_timestamp() - make_interval(secs => $2::double precision / 1000) AS waited` });
    return r.rows[0]?.waited === true;
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
    // The provider's word that it saved the card came after the payment finished (T-Bank's
    // AUTHORIZED notification overtaken by CONFIRMED): the card is saved now, once.
    if (!done.applied && (outcome.status === 'paid' || outcome.status === 'pending') && outcome.saved && isMoneyReceived(done.status)) {
      await this.saveLate_(opts.tx ?? this.db.pool, paymentId, outcome.saved);
    }
    return { applied: done.applied, status: done.status, ...(done.conflict ? { conflict: true } : {}) };
  }

  /**
   * A card saved by a payment already final with money received, the payer having consented and
   * none saved yet (docs/adr/0074-saved-cards-and-recurring-charges.md): written once (the
   * unique payment_id), and the payment names it. Its postback, sent at the finish, did not.
   */
  private async saveLate_(c: Queryable, paymentId: string, card: SavedCard): Promise<void> {
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
      values: [paymentId, newId(), encrypt(this.config.tokenEncryptionKey, card.providerId), card.mask, card.expiry] });
  }

  /** The payment's part in the lifecycle (src/domain/operations/lifecycle.ts). */
  private operation(): OperationKind<PaymentStatus, PaymentRow, PaymentOutcome, DueCheck> {
    const lockById = (c: Queryable, id: string) => runPaymentById<PaymentRow>(c, id, { text: PAYMENT_SQL, values: [id], suffix: ' FOR UPDATE' });
    const billOf = async (c: Queryable, p: PaymentRow) => (await readPayableBill(c, this.connectors, p.bill_id))!;
    return {
      type: 'payment',
      lock_: async (c, target) => {
        const id = 'id' in target ? target.id : await this.findAtConnector(target.connector, null, target.ref, c);
        return id === null ? null : (await lockById(c, id)).rows[0] ?? null;
      },
      finalOf: (o) => {
        const a = finalAnswer(o);
        if (a === null) return null;
        return a.outcome === 'PAID' && round2(a.amountReceived).gt(0) ? 'SUCCESS' : 'FAIL';
      },
      wordOf: (o) => {
        if (o.status === 'paid') return { status: round2(o.amountReceived).gt(0) ? 'succeeded' : 'failed', ref: o.ref || null, message: `paid ${round2(o.amountReceived).toFixed(2)} RUB` };
        if (o.status === 'declined') return { status: 'failed', ref: o.ref || null, code: o.code, message: o.message };
        return null;
      },
      finish_: async (c, p, o) => {
        const bill = await billOf(c, p);
        const a = finalAnswer(o)!;
        // A capture we asked for: what the provider captured is what was received (SUCCESS, never UNDERPAID).
        let result: ChargeResult = a.outcome === 'PAID' && p.capture_amount !== null ? { ...a, captured: true } : a;
        // The card the provider said it saved before this final answer (which may not repeat it).
        if (result.outcome === 'PAID' && !result.saved && p.saved_card) {
          result = { ...result, saved: { providerId: decrypt(this.config.tokenEncryptionKey, p.saved_card.provider_id_enc), mask: p.saved_card.mask, expiry: p.saved_card.expiry } };
        }
        return (await this.finish_(c, bill, { id: p.id, createdAt: p.created_at }, storedQuote(bill, p), result, paidWithOf(p), p.connector)).status;
      },
      conflict_: async (c, p, o, word) => this.conflict_(c, p, await billOf(c, p), o, word),
      hold_: async (c, p, o, attempts) => {
        if (o.status === 'action' || o.status === 'pending' || o.status === 'authorized' || attempts !== undefined) await this.hold(p.id, o, attempts ?? 0, c);
      },
      // Asked now (the read before an operator's decision, or confirming a notification): a
      // decline is final even when its reason would follow in a notification.
      waits_: async (c, p, o, { attempts, via }) => o.status === 'declined' && o.reasonFollows === true
        && via !== 'resolve' && via !== 'notification+read' && !await this.declineReasonWaited(p.id, attempts, c),
      decided: (p, to) => (to === 'SUCCESS'
        ? { status: 'paid', amountReceived: new Decimal(p.amount), ref: p.provider_ref ?? '' }
        : { status: 'declined', code: 'operator_decision', message: 'Failed by the operator after reconciliation gave up.', ref: p.provider_ref }),
      illegal: (from, to) => new IllegalPaymentTransitionError(from, to),
      // A payment is sent when it is opened (pay): a claimed one is only ever asked about.
      sendFromProvider_: (p) => this.reconcileFromProvider_(p),
      reconcileFromProvider_: (p) => this.reconcileFromProvider_(p),
      readFromProvider_: async (id, ref) => {
        const p = (await runPaymentById<PaymentRow>(this.db.pool, id, { text: PAYMENT_SQL, values: [id] })).rows[0];
        return p?.connector ? this.reconcileFromProvider_({ id, connector: p.connector, ref: ref ?? p.provider_ref }) : null;
      },
      defer_: async (c, p, o) => {
        const held = await this.hold(p.id, o, p.checkAttempts + 1, c);
        // A held payment waits for the merchant's capture or cancel (days): it is no operation
        // the provider left unanswered, so no attention item (its expiry is the provider's answer).
        return o.status === 'authorized' ? null : held;
      },
    };
  }

  /** Asks the connector that has a payment for its status, outside any transaction. */
  private async reconcileFromProvider_(p: { id: string; connector: string | null; ref: string | null }): Promise<PaymentOutcome> {
    // No connector could take it (none was ever called): no money can have moved.
    if (p.connector === null) return { status: 'declined', code: 'no_connector', message: 'No connector took the payment.', ref: null };
    const c = await this.connectors.get(p.connector);
    if (!c) return { status: 'unknown', ref: p.ref, reason: `connector ${p.connector} is not available` };
    if (p.ref === null && c.capabilities.savedCards) {
      const repeat = await this.repeatCharge_(c, p.id);
      if (repeat) return repeat;
    }
    // Whether it is a two-stage payment (its bill's `capture`): T-Bank's state alone does not say.
    const twoStage = c.capabilities.twoStage === true && (await runPaymentById<{ capture: boolean }>(this.db.pool, p.id, {
      text: `SELECT (SELECT b.capture FROM bills b WHERE b.id = payments.bill_id) AS capture FROM payments WHERE id = $1`, values: [p.id] })).rows[0]?.capture === false;
    return this.connectors.call<PaymentOutcome>(c, 'get_payment', (cc) => c.getPayment({ paymentId: p.id, ref: p.ref, ...(twoStage ? { twoStage } : {}) }, cc));
  }

  /**
   * A saved card's charge whose creation answer was lost (no reference): YooKassa cannot be asked
   * by our id, so the creation is sent again exactly as it was, under the same idempotency key
   * (our payment id) with when it was first sent; the provider answers the payment it made, or
   * makes it now, never a second one (docs/adr/0074-saved-cards-and-recurring-charges.md). Null
   * for a payment that is no charge.
   */
  private async repeatCharge_(c: Connector, paymentId: string): Promise<PaymentOutcome | null> {
    const r = await runPaymentById<{ bill_id: string; amount: string; commission: string; rate: string | null; created_at: Date; provider_id_enc: string | null; receipt: unknown }>(this.db.pool, paymentId, {
      text: `SELECT bill_id, amount::text, commission::text, rate::text, created_at, receipt,
                    (SELECT s.provider_id_enc FROM saved_payment_methods s WHERE s.id = payments.payment_method_id) AS provider_id_enc
               FROM payments WHERE id = $1 AND status = 'PROCESS' AND payment_method_id IS NOT NULL AND NOT save_consent`, values: [paymentId] });
    const x = r.rows[0];
    if (!x?.provider_id_enc) return null;
    const bill = (await readPayableBill(this.db.pool, this.connectors, x.bill_id))!;
    const quote = storedQuote(bill, x);
    // The receipt the first sending carried, as kept with the payment: a repeat is the same request (docs/adr/0087).
    const receipt = receiptFromJson(x.receipt)?.receipt;
    return this.connectors.call<PaymentOutcome>(c, 'create_payment', (cc) => c.createPayment({
      paymentId, method: 'card', amount: quote.dueRub, returnUrl: `${this.config.publicBaseUrl}/pay/${bill.id}/payments/${paymentId}`, receipt,
      savedMethod: { providerId: decrypt(this.config.tokenEncryptionKey, x.provider_id_enc!) }, firstSentAt: x.created_at,
    }, cc));
  }

  /** The saved method a charge was made with, REVOKED (once; a saving payment has none to revoke). */
  private async revokeCharged_(c: Pick<pg.Pool, 'query'>, paymentId: string, createdAt: string): Promise<void> {
    await c.query(
      `UPDATE saved_payment_methods s SET status = 'REVOKED', revoked_at = coalesce(s.revoked_at, now())
         FROM payments p
        WHERE p.id = $1 AND p.created_at = $2::timestamptz AND NOT p.save_consent AND s.id = p.payment_method_id AND s.status = 'ACTIVE'`,
      [paymentId, createdAt]);
  }

  /**
   * A provider's final answer about a payment final already that contradicts it (a payment we
   * failed that the provider charged, one we credited that it declined), in the lifecycle's
   * transaction with the payment locked: the money follows the provider (PAYMENT_CONFLICT_CREDIT
   * as the PAYMENT_CREDIT would have been, or PAYMENT_CONFLICT_DEBIT reversing the credit, which
   * may take available below zero) and a second postback carries the provider's status. The
   * payment's status stays (final states never change). Once per payment.
   */
  private async conflict_(c: Queryable, p: PaymentRow, bill: PayableBill, outcome: PaymentOutcome, word: ProviderWord): Promise<boolean> {
    const paymentId = p.id;
    const connector = p.connector ?? 'sandbox';
    let transfer;
    let fields: PaymentPostbackFields;
    const base = { InvId: bill.orderId ?? '', Currency: bill.currency, CurrencyIn: 'RUB' as const, TrsId: paymentId, custom: bill.custom ?? '' };
    if (outcome.status === 'paid' && word.status === 'succeeded') {
      // What the PAYMENT_CREDIT would have been. The FAIL zeroed the stored fee: it is the
      // merchant's fee of today for the bill's amount.
      const fee = commissionFor(this.config, bill.fees, p.method === 'SBP' ? 'payment_sbp' : 'payment_card', bill.amount);
      const q = { ...storedQuote(bill, p), commission: fee, dueInBillCurrency: bill.payerPaysCommission ? bill.amount.add(fee) : bill.amount };
      const receivedRub = round2(outcome.amountReceived);
      const st = settle(q, receivedRub);
      transfer = paymentReceivedAfterAll({
        paymentId, merchantId: bill.merchantId, currency: bill.currency, connector, receivedRub, accountAmount: st.accountAmount, commission: st.commission,
      });
      fields = { ...base, OutSum: st.receivedInBillCurrency.toFixed(2), Commission: st.commission.toFixed(2), Status: statusFor(receivedRub, q.dueRub) };
    } else {
      // The credit's own legs, the other way (whatever the fee or the rate were then).
      const credit = await c.query<{ currency: Currency; debit_account: string; credit_account: string; amount: string }>(
        `SELECT currency::text AS currency, debit_account, credit_account, amount::text FROM ledger_entries WHERE transfer_id = $1 ORDER BY leg`,
        [`PAYMENT_CREDIT:${paymentId}`]);
      const legs: Leg[] = credit.rows.map((l) => ({ from: l.debit_account, to: l.credit_account, amount: new Decimal(l.amount), currency: l.currency }));
      // A payment credited without a ledger transfer (none: every money status is credited) has nothing to reverse.
      if (legs.length === 0) return false;
      transfer = paymentNotReceivedAfterAll({ paymentId, merchantId: bill.merchantId, credit: legs });
      fields = { ...base, OutSum: '0.00', Commission: '0.00', Status: 'FAIL' };
    }
    const recorded = await recordConflict(c, {
      objectType: 'payment', objectId: paymentId, merchantId: bill.merchantId, connector, providerRef: p.provider_ref, ours: p.status,
      provider: word, transfer,
    });
    // The merchant learns what the provider did: a postback of its own (the first one's
    // (kind, aggregate) is taken), TrsId the payment, Status the provider's.
    if (recorded) await enqueueEvent(c, { merchantId: bill.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: `${paymentId}:conflict`, url: bill.resultUrl, fields });
    return recorded;
  }

  /**
   * Two-stage (docs/adr/0073-two-stage-payments.md): captures a held payment, `amount` RUB (at
   * most what is held; null: all of it, or the capture asked for before). Captures once whatever
   * the repeats: the request is recorded once with the payment locked (a repeat must ask the
   * same amount), the provider is called outside any transaction with our payment id as its
   * idempotency key, and its answer is applied through the lifecycle (PROCESS -> SUCCESS once:
   * the ledger credits what was captured, the postback says it). 404 no such payment, 409 not
   * held (or cancelled, or another amount asked for), 422 `amount` not in (0, held].
   */
  captureHold(paymentId: string, amount: Decimal | null, audit?: InTx<HoldRequest>, merchantId?: string): Promise<HoldSettled> {
    return this.settleHold(paymentId, 'capture', amount, audit, merchantId);
  }

  /** Two-stage: releases a held payment (PROCESS -> FAIL, nothing credited, the FAIL postback); once, as captureHold. `merchantId`: only its own. */
  cancelHold(paymentId: string, audit?: InTx<HoldRequest>, merchantId?: string): Promise<HoldSettled> {
    return this.settleHold(paymentId, 'cancel', null, audit, merchantId);
  }

  /** What a merchant's payment holds that may still be captured or cancelled (the cabinet's buttons); null when nothing. */
  async capturable(merchantId: string, paymentId: string): Promise<Decimal | null> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(paymentId)) return null;
    const r = await runPaymentById<{ held: string }>(this.db.pool, paymentId, { text:
      `SELECT authorized_amount::text AS held FROM payments
        WHERE id = $1 AND merchant_id = $2 AND status = 'PROCESS' AND authorized_amount IS NOT NULL
          AND capture_amount IS NULL AND cancel_requested_at IS NULL`, values: [paymentId, merchantId] });
    return r.rows[0] ? new Decimal(r.rows[0].held) : null;
  }

  private async settleHold(paymentId: string, kind: 'capture' | 'cancel', amount: Decimal | null, audit?: InTx<HoldRequest>, merchantId?: string): Promise<HoldSettled> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(paymentId)) throw new NotFoundError('Payment not found.');
    const asked = await withPgTx(this.db.pool, async (c) => {
      const p = (await runPaymentById<PaymentRow & { merchant_id: string }>(c, paymentId, {
        text: PAYMENT_SQL.replace('SELECT id,', 'SELECT id, merchant_id,'), values: [paymentId], suffix: ' FOR UPDATE' })).rows[0];
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
        const r = await runPaymentById<{ merchant_id: string }>(c, paymentId, { text:
          `UPDATE payments SET capture_amount = CASE WHEN $2 THEN $3::numeric ELSE capture_amount END,
                  capture_receipt = CASE WHEN $2 THEN $4::jsonb ELSE capture_receipt END,
                  cancel_requested_at = CASE WHEN $2 THEN cancel_requested_at ELSE clock_timestamp() END, updated_at = now()
            WHERE id = $1 AND status = 'PROCESS'`,
        values: [paymentId, kind === 'capture', want.toFixed(2), receipt ? receiptToJson(receipt) : null], suffix: ' RETURNING merchant_id' });
        await audit?.(c, { paymentId, merchantId: r.rows[0]!.merchant_id, kind, amount: want, held });
      } else if (kind === 'capture') {
        const r = await runPaymentById<{ capture_receipt: unknown }>(c, paymentId, { text: `SELECT capture_receipt FROM payments WHERE id = $1`, values: [paymentId] });
        receipt = receiptFromJson(r.rows[0]?.capture_receipt)?.receipt ?? null;
      }
      return { p, want, receipt };
    });
    const { p, want, receipt } = asked;
    const connector = p.connector ? await this.connectors.get(p.connector) : null;
    const held = new Decimal(p.authorized_amount!);
    const call = kind === 'capture' ? connector?.capturePayment : connector?.cancelPayment;
    const outcome: PaymentOutcome = !connector || !call
      ? { status: 'unknown', ref: p.provider_ref, reason: `connector ${p.connector ?? '(none)'} cannot ${kind} a held payment now` }
      : await this.connectors.call<PaymentOutcome>(connector, kind === 'capture' ? 'capture_payment' : 'cancel_payment',
        (cc) => call.call(connector, { paymentId, ref: p.provider_ref, amount: want, held, ...(receipt ? { receipt } : {}) }, cc));
    this.lifecycle.answered(paymentId);
    if (outcome.status === 'refused') {
      // The provider did not take it: no money moved, the request is withdrawn (it may be made again).
      await runPaymentById(this.db.pool, paymentId, { text:
        `UPDATE payments SET capture_amount = CASE WHEN $2 THEN NULL ELSE capture_amount END,
                capture_receipt = CASE WHEN $2 THEN NULL ELSE capture_receipt END,
                cancel_requested_at = CASE WHEN $2 THEN cancel_requested_at ELSE NULL END, updated_at = now()
          WHERE id = $1 AND status = 'PROCESS'`, values: [paymentId, kind === 'capture'] });
      throw new ConflictError(`${p.connector} refused the ${kind}: ${outcome.code}: ${outcome.message}`);
    }
    // No final answer (a timeout): it stays PROCESS with the request on record; reconciliation
    // asks the provider and applies what it did.
    const done = await this.applyOutcome(paymentId, outcome, { via: 'read' });
    return { paymentId, status: done.status, amount: want };
  }

  /** Our payment at `connector` by our id or the provider's reference (inbound notifications); null when unknown there. */
  async findAtConnector(connector: string, ourId: string | null, ref: string, c: Queryable = this.db.pool): Promise<string | null> {
    if (ourId !== null) {
      const r = await runPaymentById<{ id: string }>(c, ourId, { text: `SELECT id FROM payments WHERE connector = $1 AND id = $2`, values: [connector, ourId] });
      return r.rows[0]?.id ?? null;
    }
    const r = await c.query<{ id: string }>(
      `SELECT id FROM payments WHERE connector = $1 AND ($2::text IS NOT NULL AND id = $2 OR $2::text IS NULL AND provider_ref = $3) LIMIT 1`,
      [connector, ourId, ref]);
    return r.rows[0]?.id ?? null;
  }

  /**
   * Asks the connector that has a payment in PROCESS for its status (outside any transaction,
   * timed) and applies the answer once (the payer's page, the sandbox bank's return); `via` 'read'.
   */
  async askProvider(p: { id: string; connector: string | null; ref: string | null }): Promise<{ outcome: PaymentOutcome; result: ApplyResult }> {
    const outcome = await this.reconcileFromProvider_(p);
    return { outcome, result: await this.applyOutcome(p.id, outcome, { via: 'read' }) };
  }

  /**
   * Claims payments in PROCESS that are due to be asked (reconciliation),
   * oldest check first: their next check moves `leaseMs` ahead, so another worker skips them
   * while this one asks; applying the answer or deferring it sets the real next one.
   */
  async claimDueChecks(limit: number, leaseMs: number): Promise<DueCheck[]> {
    const r = await this.db.pool.query<{ id: string; connector: string | null; provider_ref: string | null; check_attempts: number; created_at: Date }>(
      `UPDATE payments p SET next_check_at = now() + make_interval(secs => $2::double precision / 1000)
         FROM (SELECT id FROM payments WHERE status = 'PROCESS' AND next_check_at <= now()
                ORDER BY next_check_at LIMIT $1 FOR UPDATE SKIP LOCKED) d
        WHERE p.id = d.id
        RETURNING p.id, p.connector, p.provider_ref, p.check_attempts, p.created_at`, [limit, leaseMs]);
    return r.rows.map((x) => ({ id: x.id, connector: x.connector, ref: x.provider_ref, checkAttempts: x.check_attempts, sentAt: x.created_at }));
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
  async releaseChecks(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.pool.query(`UPDATE payments SET next_check_at = now() WHERE id = ANY($1::text[]) AND status = 'PROCESS'`, [ids]);
  }

  /**
   * Opens the payment: reads the bill, checks it, then ONE atomic statement moves the bill to
   * PROCESS only if it is still payable (a NORMAL bill NEW or FAIL, a MULTI bill any status, and
   * active) and inserts the payment from that update, so it takes the bill's row lock and the
   * check and the change cannot be split by a concurrent payment: of 20 concurrent POSTs on a
   * NORMAL bill one opens a payment and the others find the bill in PROCESS (409). `input` may
   * be a parser of the raw form, run on the bill (its fixed method, which never changes).
   */
  private async open(c: Pick<pg.Pool, 'query'>, billId: string, rawInput: PayInput | PayInputOf, ip: string | null, formNonce: string | null, charge?: ChargeOf) {
    if (!/^[A-Za-z0-9]{1,64}$/.test(billId)) throw new DomainError('bill_not_found');
    const bill = await this.payableBillOrThrow(c, billId);
    if (charge) return this.openSaved(c, bill, charge, rawInput as PayInput);
    // The card route's connectors first: whether the card form is the provider's decides what the form must carry.
    const cardCandidates = bill.paymentMethod === 'SBP' ? [] : await paymentCandidates(this.connectors, bill, 'BANK_CARD');
    const input = typeof rawInput === 'function' ? rawInput(bill, { hostedCard: cardCandidates[0]?.capabilities.hostsCardForm ?? false }) : rawInput;
    if (bill.paymentMethod && bill.paymentMethod !== input.method) {
      throw new PayValidationError({ method: 'method_not_allowed' });
    }
    const quote = quoteFor(this.config, bill, input.method);
    if (!quote) throw new DomainError('rate-not-found');
    // A card the payer typed into a provider's own form never reached us: a connector that needs
    // the card number cannot be a fallback for it (it would decline a payer who did nothing wrong).
    const candidates = input.method === 'SBP' ? await paymentCandidates(this.connectors, bill, 'SBP')
      : input.card ? cardCandidates : cardCandidates.filter((c) => c.capabilities.hostsCardForm);
    return this.insertPayment(c, bill, billId, input, quote, candidates, ip, formNonce);
  }

  /** A charge of a saved card: its own connector only (the one that saved it), no payer. */
  private async openSaved(c: Pick<pg.Pool, 'query'>, bill: PayableBill, charge: ChargeOf, input: PayInput) {
    const quote = quoteFor(this.config, bill, 'BANK_CARD');
    if (!quote) throw new DomainError('rate-not-found');
    return this.insertPayment(c, bill, bill.id, input, quote, [charge.connector], null, null, charge);
  }

  private async insertPayment(
    c: Pick<pg.Pool, 'query'>, bill: PayableBill, billId: string, input: PayInput, quote: Quote, candidates: Connector[], ip: string | null, formNonce: string | null, charge?: ChargeOf,
  ) {
    // The payer's consent counts only on a bill that offered it (the page shows the box then only).
    const saveConsent = !charge && bill.savePaymentMethod && input.method === 'BANK_CARD' && input.saveConsent === true;
    // No connector may take this method's money (production: no enabled live-mode connector on
    // the route): refused before any payment is opened; never handed to the sandbox.
    if (candidates.length === 0) throw new DomainError('method_unavailable');
    // A MULTI bill already in PROCESS (another payment running) stays there.
    if (bill.status !== 'PROCESS') assertTransition(bill.status, 'PROCESS', bill.type);
    assertPaymentTransition('NEW', 'PROCESS');
    // The payment's receipt, built once from the shop's settings now and kept with it (docs/adr/0087).
    const receipt = receiptFor(bill, quote, input.payer);

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
      values: [newPaymentIdSuffix(), bill.id, bill.merchantId, bill.shopId, input.method, quote.dueRub.toFixed(2), bill.currency,
        bill.currency === 'RUB' ? null : quote.rate.toFixed(), quote.commission.toFixed(2), charge ? charge.mask : input.card ? maskCard(input.card.number) : null, ip,
        input.payer.email, input.payer.phone, input.payer.name, input.payer.comment, PAYABLE_FROM.NORMAL, PAYABLE_FROM.MULTI,
        candidates[0]?.name ?? null, nextCheckDelayMs(this.config, 0), formNonce, saveConsent, charge?.id ?? null, receipt ? receiptToJson(receipt) : null],
    }).catch((e: { code?: string; constraint?: string }) => {
      // The same payment form posted twice at once: the other POST opened the payment.
      if (e.code === '23505' && e.constraint === 'payment_form_nonces_pkey') throw new FormAlreadyUsedError();
      throw e;
    });
    if (r.rowCount !== 1) {
      // The bill changed since it was read (another payment opened or finished it, or it was
      // deactivated): answer with what it is now.
      await this.payableBillOrThrow(c, billId);
      throw new DomainError('payment_in_progress');
    }
    return { bill, paymentId: r.rows[0]!.id, createdAt: r.rows[0]!.created_at, quote, input, candidates, saveConsent, charge, receipt };
  }

  /**
   * The bill, or the refusal a payer gets for it: unknown 404, finished 403, inactive 403,
   * expired 403 (api:error.bill_expired), in progress 409.
   */
  private async payableBillOrThrow(c: Pick<pg.Pool, 'query'>, billId: string): Promise<PayableBill> {
    const bill = await readPayableBill(c, this.connectors, billId, 'pay_read_bill');
    if (!bill) throw new DomainError('bill_not_found');
    const refusal = payRefusal(bill);
    if (refusal) throw new DomainError(refusal);
    return bill;
  }

  /**
   * PROCESS -> final in ONE statement (PAY_FINISH, atomic on its own): the state table's guard,
   * the bill, the ledger credit, the postback. In the lifecycle's transaction (an answer applied
   * later) or alone on the pool (pay(), the hot path).
   */
  private async finish_(
    c: Pick<pg.Pool, 'query'>, bill: PayableBill, payment: { id: string; createdAt: string }, q: Quote, result: ChargeResult, paid: PaidWith, connector: string | null,
  ): Promise<PayOutcome> {
    const paymentId = payment.id;
    const receivedRub = result.outcome === 'PAID' ? round2(result.amountReceived) : new Decimal(0);
    const status: PaymentStatus = result.outcome === 'PAID' && receivedRub.gt(0)
      ? (result.captured && receivedRub.lte(q.dueRub) ? 'SUCCESS' : statusFor(receivedRub, q.dueRub)) : 'FAIL';
    assertPaymentTransition('PROCESS', status);
    assertTransition('PROCESS', status as BillStatus, bill.type);
    const s = settle(q, status === 'FAIL' ? new Decimal(0) : receivedRub);
    // The provider saved the card, the payer having consented: kept with the payment's finish.
    const saved = result.outcome === 'PAID' && result.saved && paid.saveConsent === true && connector !== null && isMoneyReceived(status)
      ? { id: newId(), card: result.saved } : null;

    const fields: PaymentPostbackFields = {
      InvId: bill.orderId ?? '',
      OutSum: s.receivedInBillCurrency.toFixed(2),
      Commission: s.commission.toFixed(2),
      Currency: bill.currency,
      CurrencyIn: 'RUB',
      TrsId: paymentId,
      Status: status as PaymentPostbackFields['Status'],
      custom: bill.custom ?? '',
      ...postbackExtras(paid, status, s.accountAmount, bill.currency, result),
      // Outside the signature, as every optional field (payment-api.md "Signature").
      ...(saved ? { PaymentMethodId: saved.id } : {}),
    };
    const [, , , eventUrl, eventPayload, eventStatus, eventError] =
      eventRow({ merchantId: bill.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: paymentId, url: bill.resultUrl, fields });

    // The transfer's legs are postings.paymentReceived's; PAY_FINISH applies them in its one statement.
    const transfer = isMoneyReceived(status)
      ? paymentReceived({
        paymentId, merchantId: bill.merchantId, currency: bill.currency, connector: connector ?? 'sandbox',
        receivedRub, accountAmount: s.accountAmount, commission: s.commission,
      })
      : null;
    const r = await c.query<{ p: number; b: number; tok: string }>(PAY_FINISH.bind({
      payment_id: paymentId, created_at: payment.createdAt, bill_id: bill.id, merchant_id: bill.merchantId,
      status, received: receivedRub.toFixed(2), commission: s.commission.toFixed(2), account_amount: s.accountAmount.toFixed(8),
      reference: result.reference || null, connector,
      failure_reason: result.outcome === 'DECLINED' ? result.reason : null, failure_message: result.outcome === 'DECLINED' ? result.message : null,
      payment_sources: paymentSourcesOf(status), bill_sources: billSourcesOf(status as BillStatus, bill.type),
      event_url: eventUrl, event_payload: eventPayload, event_status: eventStatus, event_error: eventError,
      saved_id: saved?.id ?? null, saved_shop_id: bill.shopId, saved_mode: bill.test ? 'test' : 'live', saved_connector: connector,
      saved_enc: saved ? encrypt(this.config.tokenEncryptionKey, saved.card.providerId) : null,
      saved_mask: saved?.card.mask ?? null, saved_expiry: saved?.card.expiry ?? null,
      ...ledgerParams(bill.merchantId, bill.currency, transfer ? [transfer] : [], 'credit'),
    })).catch((e) => { throw ledgerError(e, `payment ${paymentId}`); });
    const row = r.rows[0]!;
    if (row.p !== 1) {
      // The table's guard refused it (another finish, the reaper): nothing of the statement happened.
      const cur = await c.query<{ status: PaymentStatus }>(`SELECT status::text FROM payments WHERE id = $1 AND created_at = $2::timestamptz`, [paymentId, payment.createdAt]);
      const bb = await c.query<{ status: BillStatus }>(`SELECT status::text FROM bills WHERE id = $1`, [bill.id]);
      if (cur.rows[0] && !paymentSourcesOf(status).includes(cur.rows[0].status)) throw new IllegalPaymentTransitionError(cur.rows[0].status, status);
      throw new IllegalBillTransitionError(bb.rows[0]?.status ?? bill.status, status as BillStatus, bill.type);
    }
    // Unreachable while the gate above holds (the NORMAL bill was in a source state).
    if (bill.type === 'NORMAL' && row.b !== 1) throw new Error(`NORMAL bill ${bill.id} did not follow payment ${paymentId}`);
    // A charge refused because the payer revoked the method at the provider: revoked here too,
    // so it is never charged again (docs/adr/0092-saved-methods-follow-the-payer.md).
    if (result.outcome === 'DECLINED' && result.reason === PAYMENT_METHOD_REVOKED) await this.revokeCharged_(c, paymentId, payment.createdAt);

    const token = decrypt(this.config.tokenEncryptionKey, row.tok);
    const received = isMoneyReceived(status);
    return {
      bill,
      paymentId,
      billId: bill.id,
      status,
      amountRub: q.dueRub,
      amountReceivedRub: receivedRub,
      action: null,
      method: paid.method,
      failureReason: result.outcome === 'DECLINED' ? result.reason : null,
      redirect: {
        url: received ? bill.successUrl : bill.failUrl,
        fields: {
          InvId: fields.InvId, OutSum: fields.OutSum, CurrencyIn: fields.CurrencyIn, custom: fields.custom,
          SignatureValue: paymentSignature(fields, token),
        },
      },
    };
  }
}
