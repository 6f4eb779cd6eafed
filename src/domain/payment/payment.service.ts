import { Decimal } from 'decimal.js';
import type pg from 'pg';
import type { Config } from '../../config.js';
import { withPgTx, type Db } from '../../db/client.js';
import { DomainError } from '../../http/errors.js';
import { decrypt } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { maskCard } from '../../lib/card.js';
import { commissionFor, type MerchantFeeColumns } from '../merchant/fees.js';
import { creditFragment, creditValues } from '../ledger/fragments.js';
import { ledgerError } from '../ledger/ledger.js';
import { paymentReceived } from '../ledger/postings.js';
import { eventRow, paymentSignature, type PaymentPostbackFields } from '../../outbox/events.js';
import type { Currency, PaymentStatus } from '../../generated/prisma/enums.js';
import {
  assertTransition, IllegalBillTransitionError, PAY_REFUSAL_STATUS, PAYABLE_FROM, payRefusal, sourcesOf as billSourcesOf, type BillStatus, type BillType,
} from '../bill/bill.states.js';
import type { PaymentOutcome } from '../providers/connector.js';
import { ConnectorRegistry, DEFAULT_ROUTING, type Routing } from '../providers/registry.js';
import { assertPaymentTransition, IllegalPaymentTransitionError, paymentSourcesOf } from './payment.states.js';
import { isMoneyReceived } from '../statuses.js';
import { PayValidationError, type PayerFields, type PayInput, type PayMethod } from './pay-input.js';
import { paymentError } from './payment-errors.js';
import { money8 } from '../../lib/money.js';

/** A bill as the payment page and the payment flow see it (with its shop, merchant fees and rate). */
export interface PayableBill {
  id: string;
  merchantId: string;
  shopId: string;
  shopName: string;
  orderId: string | null;
  name: string | null;
  description: string | null;
  custom: string | null;
  type: BillType;
  status: BillStatus;
  /** The bill's own flag, the shop's `enabled` and the merchant's status together. */
  active: boolean;
  amount: Decimal;
  currency: Currency;
  payerPaysCommission: boolean;
  paymentMethod: PayMethod | null;
  successUrl: string | null;
  failUrl: string | null;
  resultUrl: string | null;
  /** RUB per unit of the bill's currency (1 for RUB); null when the operator has no rate. */
  rate: Decimal | null;
  fees: MerchantFeeColumns;
  /** The bill's ttl has run out: it takes no payment. */
  expired: boolean;
  /** The page's "back to shop" link. */
  returnUrl: string | null;
  locale: 'ru' | 'en' | null;
  payerEmail: string | null;
  requestFields: Array<'email' | 'phone' | 'name' | 'comment'>;
  items: Array<{ name: string; price: string; quantity: string }>;
  /** The merchant's connector routing. */
  routing: Routing;
}

/** What the payer owes for a bill with a method. */
export interface Quote {
  /** The merchant's fee, in the bill's currency. */
  commission: Decimal;
  /** What the payer owes in the bill's currency (amount, plus the fee when the payer pays it). */
  dueInBillCurrency: Decimal;
  /** What the payer pays, in RUB (payment.amount). */
  dueRub: Decimal;
  rate: Decimal;
}

export interface RedirectFields { InvId: string; OutSum: string; CurrencyIn: string; custom: string; SignatureValue: string }

export interface PayOutcome {
  bill: PayableBill;
  paymentId: string;
  billId: string;
  status: PaymentStatus;
  amountRub: Decimal;
  amountReceivedRub: Decimal;
  /** Success URL for money received, Fail URL for a FAIL; null when the shop has none. */
  redirect: { url: string | null; fields: RedirectFields };
}

export class BillNotPayableError extends DomainError {}

const BILL_SQL = `
SELECT b.id, b.merchant_id, b.shop_id, s.name AS shop_name, b.order_id, b.name, b.description, b.custom,
       b.type::text, b.status::text, (b.active AND s.enabled AND m.status = 'ACTIVE') AS active,
       b.amount::text, b.currency_in::text AS currency, b.payer_pays_commission, b.payment_method::text,
       COALESCE(b.success_url, s.success_url) AS success_url, COALESCE(b.fail_url, s.fail_url) AS fail_url, s.result_url,
       (b.expires_at IS NOT NULL AND b.expires_at <= now()) AS expired, b.return_url, b.locale, b.payer_email,
       b.request_fields, b.items,
       CASE WHEN b.currency_in = 'RUB' THEN '1' ELSE r.rub_per_unit::text END AS rate,
       m.payment_card_percent::text, m.payment_card_fixed::text, m.payment_sbp_percent::text, m.payment_sbp_fixed::text,
       m.routing
  FROM bills b
  JOIN shops s ON s.id = b.shop_id
  JOIN merchants m ON m.id = b.merchant_id
  LEFT JOIN fx_rates r ON r.currency = b.currency_in
 WHERE b.id = $1`;

interface BillRow {
  id: string; merchant_id: string; shop_id: string; shop_name: string; order_id: string | null; name: string | null;
  description: string | null; custom: string | null; type: BillType; status: BillStatus; active: boolean; amount: string;
  currency: Currency; payer_pays_commission: boolean; payment_method: PayMethod | null; success_url: string | null;
  fail_url: string | null; result_url: string | null; rate: string | null; payment_card_percent: string | null;
  payment_card_fixed: string | null; payment_sbp_percent: string | null; payment_sbp_fixed: string | null;
  expired: boolean; return_url: string | null; locale: 'ru' | 'en' | null; payer_email: string | null;
  request_fields: PayableBill['requestFields'] | null; items: PayableBill['items'] | null;
  routing: Partial<Routing> | null;
}

const toBill = (r: BillRow): PayableBill => ({
  id: r.id, merchantId: r.merchant_id, shopId: r.shop_id, shopName: r.shop_name, orderId: r.order_id, name: r.name,
  description: r.description, custom: r.custom, type: r.type, status: r.status, active: r.active,
  amount: new Decimal(r.amount), currency: r.currency, payerPaysCommission: r.payer_pays_commission,
  paymentMethod: r.payment_method, successUrl: r.success_url, failUrl: r.fail_url, resultUrl: r.result_url,
  rate: r.rate === null ? null : new Decimal(r.rate),
  routing: { ...DEFAULT_ROUTING, ...(r.routing ?? {}) },
  fees: {
    paymentCardPercent: r.payment_card_percent, paymentCardFixed: r.payment_card_fixed,
    paymentSbpPercent: r.payment_sbp_percent, paymentSbpFixed: r.payment_sbp_fixed,
    payoutCardPercent: null, payoutCardFixed: null, payoutSbpPercent: null, payoutSbpFixed: null,
  },
  expired: r.expired, returnUrl: r.return_url, locale: r.locale, payerEmail: r.payer_email,
  requestFields: r.request_fields ?? [], items: r.items ?? [],
});

/** A connector's answer as the finishing step takes it; null when it is not final. */
type ChargeResult =
  | { outcome: 'PAID'; amountReceived: Decimal; reference: string }
  | { outcome: 'DECLINED'; reason: string; message: string; reference: string };

function toCharge(o: PaymentOutcome): ChargeResult | null {
  switch (o.status) {
    case 'paid': return { outcome: 'PAID', amountReceived: o.amountReceived, reference: o.ref };
    case 'declined': return { outcome: 'DECLINED', reason: o.code, message: o.message, reference: o.ref ?? '' };
    // Every connector refused before money could move (or none can take the method): the payer may retry.
    case 'refused': return { outcome: 'DECLINED', reason: o.code, message: o.message, reference: '' };
    default: return null;
  }
}

/** How the payment was made, for the postback's optional fields. */
interface PaidWith { method: PayMethod; fromCard: string | null; payer: PayerFields }

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

const round2 = (d: Decimal): Decimal => d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);

/** Status by what arrived against what was due (DESIGN "States"). */
export function statusFor(received: Decimal, due: Decimal): 'SUCCESS' | 'UNDERPAID' | 'OVERPAID' {
  return received.eq(due) ? 'SUCCESS' : received.lt(due) ? 'UNDERPAID' : 'OVERPAID';
}

/**
 * The money of a finished payment, in the bill's currency (formulas in docs/decisions.md):
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
  constructor(
    private readonly config: Config,
    private readonly db: Db,
    readonly connectors: ConnectorRegistry = new ConnectorRegistry(config, db),
  ) {}

  /**
   * The page shows the sandbox's test hints: every connector kind built so far is the sandbox's
   * (a provider that hosts its own card form comes with the payer's actions, next step).
   */
  get sandbox(): boolean { return true; }

  /** The bill for the payment page; null when there is no such bill. */
  async findPayableBill(billId: string): Promise<PayableBill | null> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(billId)) return null;
    const r = await this.db.pool.query<BillRow>(BILL_SQL, [billId]);
    return r.rows[0] ? toBill(r.rows[0]) : null;
  }

  /** What the payer owes with `method`; null when the bill's currency has no rate. */
  quote(bill: PayableBill, method: PayMethod): Quote | null {
    if (!bill.rate) return null;
    const commission = commissionFor(this.config, bill.fees, method === 'SBP' ? 'payment_sbp' : 'payment_card', bill.amount);
    const dueInBillCurrency = bill.payerPaysCommission ? bill.amount.add(commission) : bill.amount;
    return { commission, dueInBillCurrency, dueRub: round2(dueInBillCurrency.mul(bill.rate)), rate: bill.rate };
  }

  /**
   * Pays a bill: tx1 locks the bill, checks it and opens the payment (payment PROCESS, NORMAL
   * bill -> PROCESS); the acquirer runs outside any transaction; tx2 makes both final, credits
   * the ledger and writes the postback row. A NORMAL bill thus has at most one running payment
   * and at most one that receives money.
   */
  async pay(billId: string, input: PayInput | ((bill: PayableBill) => PayInput), ctx: { ip?: string } = {}): Promise<PayOutcome> {
    const opened = await this.open(this.db.pool, billId, input, ctx.ip ?? null);
    const { input: pay } = opened;
    const method = pay.method === 'SBP' ? 'sbp' : 'card';
    const routed = await this.connectors.route<PaymentOutcome>(
      opened.bill.routing[method === 'sbp' ? 'payment_sbp' : 'payment_card'], method === 'sbp' ? 'payment_sbp' : 'payment_card', 'create_payment',
      (c, ctx) => c.createPayment({ paymentId: opened.paymentId, method, amount: opened.quote.dueRub, card: pay.card, sbpAmount: pay.sbpAmount }, ctx),
    );
    const result = toCharge(routed.outcome);
    if (result === null) {
      // No final answer (a timeout, or an action the payer must take): the payment stays
      // PROCESS with the connector that has it; nothing is guessed. Until reconciliation and
      // the payer's actions exist (next step) the stale-payment reaper ends it as before.
      const ref = 'ref' in routed.outcome ? routed.outcome.ref : null;
      await this.db.pool.query(`UPDATE payments SET connector = $2, provider_ref = coalesce($3, provider_ref), updated_at = now() WHERE id = $1`,
        [opened.paymentId, routed.connector!.name, ref]);
      throw new DomainError('payment_in_progress', 409);
    }
    // The finishing step is a single atomic statement: no explicit transaction around it.
    return this.finish(this.db.pool, opened.bill, opened.paymentId, opened.quote, result, {
      method: pay.method, fromCard: pay.card ? maskCard(pay.card.number) : null, payer: pay.payer,
    }, routed.connector?.name ?? null);
  }

  /**
   * Payments left in PROCESS by a process that died between the acquirer call and the final
   * transaction (or whose final transaction failed). The sandbox acquirer answers at once and
   * keeps nothing, so after `olderThanMs` such a payment is failed (no money was credited);
   * its NORMAL bill can then be paid again. Returns how many were failed.
   */
  async failStalePayments(olderThanMs: number, limit = 100): Promise<number> {
    const r = await this.db.pool.query<{ id: string; bill_id: string }>(
      `SELECT id, bill_id FROM payments WHERE status = 'PROCESS' AND updated_at < now() - make_interval(secs => $1::double precision / 1000)
        ORDER BY updated_at LIMIT $2`,
      [olderThanMs, limit],
    );
    let n = 0;
    for (const row of r.rows) {
      const done = await withPgTx(this.db.pool, async (c) => {
        // Lock the payment; another reaper (or a late final transaction) may have finished it.
        const p = await c.query<{ status: PaymentStatus; amount: string; commission: string; rate: string | null; method: PayMethod; from_card: string | null; email: string | null; phone: string | null; name: string | null; comment: string | null }>(
          `SELECT status::text, amount::text, commission::text, rate::text, method::text, from_card, payer_email AS email, payer_phone AS phone,
                  payer_name AS name, payer_comment AS comment
             FROM payments WHERE id = $1 FOR UPDATE`, [row.id]);
        if (p.rows[0]?.status !== 'PROCESS') return false;
        const b = await c.query<BillRow>(BILL_SQL, [row.bill_id]);
        const bill = toBill(b.rows[0]!);
        const quote = storedQuote(bill, p.rows[0]);
        const x = p.rows[0];
        await this.finish(c, bill, row.id, quote, { outcome: 'DECLINED', reason: 'abandoned', message: 'No final answer before the payment went stale.', reference: '' }, {
          method: x.method, fromCard: x.from_card, payer: { email: x.email, phone: x.phone, name: x.name, comment: x.comment },
        }, null);
        return true;
      });
      if (done) n += 1;
    }
    return n;
  }

  /**
   * Opens the payment: reads the bill, checks it, then ONE atomic statement moves the bill to
   * PROCESS only if it is still payable (a NORMAL bill NEW or FAIL, a MULTI bill any status, and
   * active) and inserts the payment from that update, so it takes the bill's row lock and the
   * check and the change cannot be split by a concurrent payment: of 20 concurrent POSTs on a
   * NORMAL bill one opens a payment and the others find the bill in PROCESS (409). `input` may
   * be a parser of the raw form, run on the bill (its fixed method, which never changes).
   */
  private async open(c: Pick<pg.Pool, 'query'>, billId: string, rawInput: PayInput | ((bill: PayableBill) => PayInput), ip: string | null) {
    if (!/^[A-Za-z0-9]{1,64}$/.test(billId)) throw new DomainError('bill_not_found', 404);
    const bill = await this.payableBillOrThrow(c, billId);
    const input = typeof rawInput === 'function' ? rawInput(bill) : rawInput;
    if (bill.paymentMethod && bill.paymentMethod !== input.method) {
      throw new PayValidationError({ method: 'method_not_allowed' });
    }
    const quote = this.quote(bill, input.method);
    if (!quote) throw new DomainError('rate-not-found', 403);
    // A MULTI bill already in PROCESS (another payment running) stays there.
    if (bill.status !== 'PROCESS') assertTransition(bill.status, 'PROCESS', bill.type);
    assertPaymentTransition('NEW', 'PROCESS');

    const paymentId = newId();
    // The payment is opened and handed to the acquirer in one step: it is written as PROCESS.
    // clock_timestamp() is taken after the bill's row lock: payments of a MULTI bill are
    // ordered as they took it.
    const r = await c.query({ name: 'pay_open', text:
      `WITH b AS (
         UPDATE bills SET status = 'PROCESS', updated_at = now()
          WHERE id = $2 AND active AND (expires_at IS NULL OR expires_at > now())
            AND status = ANY(CASE WHEN type = 'NORMAL' THEN $16::"BillStatus"[] ELSE $17::"BillStatus"[] END)
         RETURNING id)
       INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, currency_in, bill_currency, rate,
                             commission, account_currency, from_card, payer_ip, payer_email, payer_phone, payer_name, payer_comment,
                             created_at, updated_at)
       SELECT $1, b.id, $3, $4, 'PROCESS', $5::"PaymentMethod", $6, 'RUB', $7::"Currency", $8, $9, $7::"Currency", $10, $11,
              $12, $13, $14, $15, clock_timestamp(), clock_timestamp()
         FROM b`,
      values: [paymentId, bill.id, bill.merchantId, bill.shopId, input.method, quote.dueRub.toFixed(2), bill.currency,
        bill.currency === 'RUB' ? null : quote.rate.toFixed(), quote.commission.toFixed(2), input.card ? maskCard(input.card.number) : null, ip,
        input.payer.email, input.payer.phone, input.payer.name, input.payer.comment, PAYABLE_FROM.NORMAL, PAYABLE_FROM.MULTI],
    });
    if (r.rowCount !== 1) {
      // The bill changed since it was read (another payment opened or finished it, or it was
      // deactivated): answer with what it is now.
      await this.payableBillOrThrow(c, billId);
      throw new DomainError('payment_in_progress', 409);
    }
    return { bill, paymentId, quote, input };
  }

  /**
   * The bill, or the refusal a payer gets for it: unknown 404, finished 403, inactive 403,
   * expired 403 (api:error.bill_expired), in progress 409.
   */
  private async payableBillOrThrow(c: Pick<pg.Pool, 'query'>, billId: string): Promise<PayableBill> {
    const r = await c.query<BillRow>({ name: 'pay_read_bill', text: BILL_SQL, values: [billId] });
    if (!r.rows[0]) throw new DomainError('bill_not_found', 404);
    const bill = toBill(r.rows[0]);
    const refusal = payRefusal(bill);
    if (refusal) throw new DomainError(refusal, PAY_REFUSAL_STATUS[refusal]);
    return bill;
  }

  private async finish(
    c: Pick<pg.Pool, 'query'>, bill: PayableBill, paymentId: string, q: Quote, result: ChargeResult, paid: PaidWith, connector: string | null,
  ): Promise<PayOutcome> {
    const receivedRub = result.outcome === 'PAID' ? round2(result.amountReceived) : new Decimal(0);
    const status: PaymentStatus = result.outcome === 'PAID' && receivedRub.gt(0) ? statusFor(receivedRub, q.dueRub) : 'FAIL';
    assertPaymentTransition('PROCESS', status);
    assertTransition('PROCESS', status as BillStatus, bill.type);
    const s = settle(q, status === 'FAIL' ? new Decimal(0) : receivedRub);

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
    };
    const [, , , eventUrl, eventPayload, eventStatus, eventError] =
      eventRow({ merchantId: bill.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: paymentId, url: bill.resultUrl, fields });

    // ONE statement, atomic on its own (no BEGIN/COMMIT round trips): the payment PROCESS ->
    // final (row count checked), the bill PROCESS -> final when this is its latest payment, the
    // ledger's PAYMENT_CREDIT transfer with its balance move (the ledger module's creditFragment),
    // the postback outbox row, and the merchant's token
    // for the redirect signature. Everything after `p` reads from it, so nothing moves unless
    // the payment really went PROCESS -> final here; (kind, ref_id) and (kind, aggregate_id)
    // stay unique as with ledger.post and enqueueEvent.
    const transfer = isMoneyReceived(status)
      ? paymentReceived({
        paymentId, merchantId: bill.merchantId, currency: bill.currency, connector: connector ?? 'sandbox',
        receivedRub, accountAmount: s.accountAmount, commission: s.commission,
      })
      : null;
    const ledgerValues = creditValues(transfer, { kind: 'PAYMENT_CREDIT', refId: paymentId, merchantId: bill.merchantId, currency: bill.currency });
    const r = await c.query<{ p: number; b: number; tok: string }>({ name: 'pay_finish', text:
      `WITH p AS (
         UPDATE payments SET status = $2::text::"PaymentStatus", amount_received = $3, commission = $4, account_amount = $5,
                provider_ref = coalesce($6, provider_ref), failure_reason = $7, failure_message = $26,
                connector = coalesce($27, connector), finished_at = now(), updated_at = now()
          WHERE id = $1 AND status = ANY($24::"PaymentStatus"[])
            -- A NORMAL bill must still be where it can follow the payment (PROCESS): else
            -- nothing of this statement happens (no credit for a payment whose bill cannot).
            AND EXISTS (SELECT 1 FROM bills bb WHERE bb.id = payments.bill_id AND (bb.type = 'MULTI' OR bb.status = ANY($25::"BillStatus"[])))
         RETURNING bill_id, created_at, id),
       b AS (
         UPDATE bills SET status = $2::text::"BillStatus", updated_at = now()
           FROM p
          WHERE bills.id = p.bill_id AND bills.status = ANY($25::"BillStatus"[])
            AND NOT EXISTS (SELECT 1 FROM payments q WHERE q.bill_id = p.bill_id AND (q.created_at, q.id) > (p.created_at, p.id))
         RETURNING bills.id),
       ${creditFragment('p', 13)},
       o AS (
         INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, status, last_error)
         -- A duplicate (kind, aggregate_id) is skipped by the dedupe trigger (outbox_event_keys).
         SELECT $8, 'PAYMENT_POSTBACK', p.id, $9, $10::jsonb, $11::"OutboxEventStatus", $12 FROM p
         RETURNING 1)
       SELECT (SELECT count(*) FROM p)::int AS p, (SELECT count(*) FROM b)::int AS b,
              (SELECT api_token_enc FROM merchants WHERE id = $8) AS tok`,
      values: [paymentId, status, receivedRub.toFixed(2), s.commission.toFixed(2), s.accountAmount.toFixed(8), result.reference || null,
        result.outcome === 'DECLINED' ? result.reason : null, bill.merchantId,
        eventUrl, eventPayload, eventStatus, eventError, ...ledgerValues,
        paymentSourcesOf(status), billSourcesOf(status as BillStatus, bill.type),
        result.outcome === 'DECLINED' ? result.message : null, connector] }).catch((e) => { throw ledgerError(e, `payment ${paymentId}`); });
    const row = r.rows[0]!;
    if (row.p !== 1) {
      // The table's guard refused it (another finish, the reaper): nothing of the statement happened.
      const cur = await c.query<{ status: PaymentStatus }>(`SELECT status::text FROM payments WHERE id = $1`, [paymentId]);
      const bb = await c.query<{ status: BillStatus }>(`SELECT status::text FROM bills WHERE id = $1`, [bill.id]);
      if (cur.rows[0] && !paymentSourcesOf(status).includes(cur.rows[0].status)) throw new IllegalPaymentTransitionError(cur.rows[0].status, status);
      throw new IllegalBillTransitionError(bb.rows[0]?.status ?? bill.status, status as BillStatus, bill.type);
    }
    // Unreachable while the gate above holds (the NORMAL bill was in a source state).
    if (bill.type === 'NORMAL' && row.b !== 1) throw new Error(`NORMAL bill ${bill.id} did not follow payment ${paymentId}`);

    const token = decrypt(this.config.tokenEncryptionKey, row.tok);
    const received = isMoneyReceived(status);
    return {
      bill,
      paymentId,
      billId: bill.id,
      status,
      amountRub: q.dueRub,
      amountReceivedRub: receivedRub,
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
