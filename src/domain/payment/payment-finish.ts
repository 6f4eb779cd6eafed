import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import { statement } from '../../db/statement.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { money8 } from '../../lib/money.js';
import { eventRow, paymentSignature, type PaymentPostbackFields } from '../../outbox/events.js';
import type { Currency, PaymentStatus } from '../../generated/prisma/enums.js';
import { assertTransition, IllegalBillTransitionError, sourcesOf as billSourcesOf, type BillStatus } from '../bill/bill.states.js';
import { ledgerParams, transfersSql } from '../ledger/fragments.js';
import { ledgerError } from '../ledger/ledger.js';
import { paymentReceived } from '../ledger/postings.js';
import { PAYMENT_METHOD_REVOKED, type CarriesData, type PayerAction, type PaymentOutcome, type SavedCard } from '../providers/connector.js';
import { paymentReceipt, type Receipt } from '../receipt/receipt.js';
import { isMoneyReceived } from '../../kernel/statuses.js';
import { round2, type PayableBill, type Quote } from './payable-bill.js';
import type { PayerFields, PayMethod } from './pay-input.js';
import { paymentError } from './payment-errors.js';
import type { HoldReading } from './hold-reading.js';
import { revokeCharged, statusesOf, type PaidWith } from './payment.repository.js';
import { assertPaymentTransition, IllegalPaymentTransitionError, paymentSourcesOf } from './payment.states.js';

/**
 * A payment's finish: PROCESS -> final with its money (the bill, the ledger credit, the
 * postback, a saved card) in the one statement `pay_finish`, and the sums it is made of.
 */

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
                payment_method_id = coalesce(:saved_id, payment_method_id), provider_data = coalesce(:provider_data::jsonb, provider_data)
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
export type ChargeResult = CarriesData & (
  /** `captured`: a held payment captured (in full or in part): SUCCESS with what was captured, never UNDERPAID. */
  | { outcome: 'PAID'; amountReceived: Decimal; reference: string; captured?: boolean; saved?: SavedCard }
  | { outcome: 'DECLINED'; reason: string; message: string; reference: string });

/**
 * A provider's final answer about a payment it has: paid or declined. A later `refused` (the
 * provider could not be asked) is no answer at all: it never fails a payment.
 */
export function finalAnswer(o: PaymentOutcome): ChargeResult | null {
  // The provider's state of the payment (docs/adr/0118) is kept by the finishing statement itself.
  const data = o.data ? { data: o.data } : {};
  switch (o.status) {
    case 'paid': return { outcome: 'PAID', amountReceived: o.amountReceived, reference: o.ref, ...(o.saved ? { saved: o.saved } : {}), ...data };
    case 'declined': return { outcome: 'DECLINED', reason: o.code, message: o.message, reference: o.ref ?? '', ...data };
    default: return null;
  }
}

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
 * PROCESS -> final in ONE statement (PAY_FINISH, atomic on its own): the state table's guard,
 * the bill, the ledger credit, the postback. In the lifecycle's transaction (an answer applied
 * later) or alone on the pool (the answer to the payer's own send: the hot path).
 */
export async function finishPayment(
  config: Pick<Config, 'tokenEncryptionKey'>, c: Queryable, bill: PayableBill, payment: { id: string; createdAt: string }, q: Quote, result: ChargeResult,
  paid: PaidWith, connector: string | null,
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
    saved_enc: saved ? encrypt(config.tokenEncryptionKey, saved.card.providerId) : null,
    saved_mask: saved?.card.mask ?? null, saved_expiry: saved?.card.expiry ?? null,
    provider_data: result.data ? JSON.stringify(result.data) : null,
    ...ledgerParams(bill.merchantId, bill.currency, transfer ? [transfer] : [], 'credit'),
  })).catch((e) => { throw ledgerError(e, `payment ${paymentId}`); });
  const row = r.rows[0]!;
  if (row.p !== 1) {
    // The table's guard refused it (another finish, the reaper): nothing of the statement happened.
    const now = await statusesOf(c, paymentId, payment.createdAt, bill.id);
    if (now.payment && !paymentSourcesOf(status).includes(now.payment)) throw new IllegalPaymentTransitionError(now.payment, status);
    throw new IllegalBillTransitionError(now.bill ?? bill.status, status as BillStatus, bill.type);
  }
  // Unreachable while the gate above holds (the NORMAL bill was in a source state).
  if (bill.type === 'NORMAL' && row.b !== 1) throw new Error(`NORMAL bill ${bill.id} did not follow payment ${paymentId}`);
  // A charge refused because the payer revoked the method at the provider: revoked here too,
  // so it is never charged again (docs/adr/0092-saved-methods-follow-the-payer.md).
  if (result.outcome === 'DECLINED' && result.reason === PAYMENT_METHOD_REVOKED) await revokeCharged(c, paymentId, payment.createdAt);

  const token = decrypt(config.tokenEncryptionKey, row.tok);
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
