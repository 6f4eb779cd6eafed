import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { decrypt } from '../../lib/crypto.js';
import { paymentSignature, type PaymentPostbackFields } from '../../outbox/events.js';
import type { Connector, ProviderData } from '../providers/connector.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import { isMoneyReceived } from '../../kernel/statuses.js';
import { paymentCandidates, quoteFor, readPayableBill, type PayableBill, type Quote } from './payable-bill.js';
import { monthCondition, queryPaymentById, runPaymentById } from './payment-by-id.js';
import { isPaymentFinal } from './payment.states.js';
import { holdReading } from './hold-reading.js';
import type { PayOutcome } from './payment-finish.js';
import { PAYMENT_SQL, paidWithOf, type PaymentRow } from './payment.repository.js';
import type { PayMethod } from './pay-input.js';

/**
 * The payer's page's read model: what a bill offers (methods, the card route, the quote), the
 * payment a form or a bill already has, the declines that send a payer back to the shop, the
 * throttle on asking a provider, and a payment's state with its signed redirect. Reads only
 * (mayAskProvider's conditional UPDATE marks who asks); paying and applying answers are
 * PaymentService's.
 */
export class PaymentPage {
  constructor(
    private readonly config: Config,
    private readonly db: Db,
    private readonly connectors: ConnectorRegistry,
  ) {}

  /** The methods of a bill some connector may take now (the page offers only these). */
  async availableMethods(bill: PayableBill): Promise<PayMethod[]> {
    const out: PayMethod[] = [];
    for (const m of ['BANK_CARD', 'SBP'] as const) {
      if (bill.paymentMethod && bill.paymentMethod !== m) continue;
      if ((await this.paymentCandidates(bill, m)).length > 0) out.push(m);
    }
    return out;
  }

  /** The connectors that may take a bill's payment by `method`, in routing order. */
  paymentCandidates(bill: PayableBill, method: PayMethod): Promise<Connector[]> {
    return paymentCandidates(this.connectors, bill, method);
  }

  /** How the card of a bill is taken: by a provider's own form (`hosted`), and whether the sandbox takes it (test hints). */
  async cardRoute(bill: PayableBill): Promise<{ hosted: boolean; sandbox: boolean }> {
    const first = (await this.paymentCandidates(bill, 'BANK_CARD'))[0];
    return { hosted: first?.capabilities.hostsCardForm ?? false, sandbox: !first || first.kind === 'sandbox' };
  }

  /** The bill for the payment page; null when there is no such bill. */
  async findPayableBill(billId: string): Promise<PayableBill | null> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(billId)) return null;
    return readPayableBill(this.db.pool, this.connectors, billId);
  }

  /** What the payer owes with `method`; null when the bill's currency has no rate. */
  quote(bill: PayableBill, method: PayMethod): Quote | null {
    return quoteFor(this.config, bill, method);
  }

  /** The payment of a bill still in PROCESS (the latest), if any. */
  async runningPayment(billId: string): Promise<string | null> {
    const r = await this.db.pool.query<{ id: string }>(
      `SELECT id FROM payments WHERE bill_id = $1 AND status = 'PROCESS' ORDER BY created_at DESC, id DESC LIMIT 1`, [billId]);
    return r.rows[0]?.id ?? null;
  }

  /**
   * How many payments of a bill from one payer address FAILed in the last `windowMs`: the page
   * hands a payer who keeps being declined back to the shop (docs/adr/0015-declined-card-stays-on-the-form.md).
   */
  async recentDeclines(billId: string, payerIp: string, windowMs: number): Promise<number> {
    const r = await this.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM payments
        WHERE bill_id = $1 AND payer_ip = $2 AND status = 'FAIL'
          AND created_at > now() - make_interval(secs => $3::double precision / 1000)`, [billId, payerIp, windowMs]);
    return r.rows[0]?.n ?? 0;
  }

  /** The payment a payment form's token opened, if any (single-use form tokens). */
  async paymentOfForm(formNonce: string): Promise<{ id: string; billId: string } | null> {
    const r = await this.db.pool.query<{ id: string; bill_id: string }>(`SELECT id, bill_id FROM payments WHERE form_nonce = $1`, [formNonce]);
    return r.rows[0] ? { id: r.rows[0].id, billId: r.rows[0].bill_id } : null;
  }

  /**
   * Whether this caller may ask the provider about a payment in PROCESS now: at most once per
   * `everyMs` per payment across every process (the page is polled by payers through any API
   * process). One conditional UPDATE picks the caller that asks; the others read the state.
   * Not while a decline read without its reason waits for the notification: asking again would
   * only read the same decline (reconciliation asks when the wait ends; so does the page).
   */
  async mayAskProvider(paymentId: string, everyMs: number): Promise<boolean> {
    // A row whenever the payment is in the month its id names (so a throttled poll, which
    // changes nothing, does not fall back to the read of every month); `asked` says who asks.
    const r = await queryPaymentById<{ asked: boolean }>(this.db.pool, paymentId, (month) => {
      const m = monthCondition('created_at', month, 4);
      const mu = monthCondition('payments.created_at', month, 4);
      return { text:
        `WITH p AS (SELECT id, created_at FROM payments WHERE id = $1${m.sql}),
         u AS (
           UPDATE payments SET provider_asked_at = clock_timestamp() FROM p
            WHERE payments.id = p.id AND payments.created_at = p.created_at AND payments.status = 'PROCESS'${mu.sql}
              AND (payments.provider_asked_at IS NULL
                   OR payments.provider_asked_at <= clock_timestamp() - make_interval(secs => $2::double precision / 1000))
              AND (payments.decline_seen_at IS NULL
                   OR payments.decline_seen_at <= clock_timestamp() - make_interval(secs => $3::double precision / 1000))
           RETURNING 1)
         SELECT EXISTS (SELECT 1 FROM u) AS asked FROM p`,
      values: [paymentId, everyMs, this.config.declineReasonWaitMs, ...m.values] };
    });
    return r.rows[0]?.asked === true;
  }

  /**
   * A payment of a bill for the polling page; null when there is no such payment of that bill.
   * `connector`, `ref` and `data` (its connector's own, docs/adr/0118) are what asking its provider takes.
   */
  async paymentState(billId: string, paymentId: string): Promise<{ bill: PayableBill; outcome: PayOutcome; connector: string | null; ref: string | null; data: ProviderData | null } | null> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(paymentId)) return null;
    const p = (await runPaymentById<PaymentRow>(this.db.pool, paymentId, { text: PAYMENT_SQL, values: [paymentId] })).rows[0];
    if (!p || p.bill_id !== billId) return null;
    const bill = (await readPayableBill(this.db.pool, this.connectors, billId))!;
    const outcome: PayOutcome = {
      bill, paymentId, billId, status: p.status, amountRub: new Decimal(p.amount), amountReceivedRub: new Decimal(p.amount_received),
      redirect: null, action: p.status === 'PROCESS' ? p.payer_action : null, finishedAt: p.finished_at,
      method: p.method, failureReason: p.status === 'FAIL' ? p.failure_reason : null,
      payer: paidWithOf(p).payer, payerIp: p.payer_ip,
      hold: holdReading({ status: p.status, authorized: p.authorized_amount, failureReason: p.failure_reason, cancelRequested: p.cancel_requested }),
    };
    if (outcome.hold === 'HELD') {
      // Authorised and held: the payer goes back to the shop as after a success (the shop's
      // Success URL with the fields it checks, signed as usual: OutSum is the bill's amount).
      // The postback still comes once, on the capture or the cancellation.
      const tok = (await this.db.pool.query<{ tok: string }>('SELECT api_token_enc AS tok FROM merchants WHERE id = $1', [bill.merchantId])).rows[0]!.tok;
      const f = { InvId: bill.orderId ?? '', OutSum: bill.amount.toFixed(2), CurrencyIn: 'RUB', custom: bill.custom ?? '' };
      outcome.redirect = { url: bill.successUrl, fields: { ...f, SignatureValue: paymentSignature(f, decrypt(this.config.tokenEncryptionKey, tok)) } };
    }
    if (isPaymentFinal(p.status)) {
      // The redirect as the finishing step built it: the postback's fields, signed with the current token.
      const r = await this.db.pool.query<{ payload: { fields: PaymentPostbackFields }; tok: string }>(
        // Through its key row: outbox partitions have no (kind, aggregate_id) index, and the key's
        // (id, created_at) is the event's primary key in one month's partition.
        `SELECT e.payload, m.api_token_enc AS tok FROM outbox_event_keys k
           JOIN outbox_events e ON e.id = k.id AND e.created_at = k.created_at
           JOIN merchants m ON m.id = e.merchant_id
          WHERE k.kind = 'PAYMENT_POSTBACK' AND k.aggregate_id = $1`, [paymentId]);
      const row = r.rows[0];
      if (row) {
        const f = row.payload.fields;
        outcome.redirect = {
          url: isMoneyReceived(p.status) ? bill.successUrl : bill.failUrl,
          fields: { InvId: f.InvId, OutSum: f.OutSum, CurrencyIn: f.CurrencyIn, custom: f.custom, SignatureValue: paymentSignature(f, decrypt(this.config.tokenEncryptionKey, row.tok)) },
        };
      }
    }
    return { bill, outcome, connector: p.connector, ref: p.provider_ref, data: p.provider_data };
  }
}
