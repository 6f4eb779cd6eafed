import { Decimal } from 'decimal.js';
import type pg from 'pg';
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { maskCard } from '../../lib/card.js';
import { enqueueEvent, type PaymentPostbackFields } from '../../outbox/events.js';
import type { PaymentStatus } from '../../generated/prisma/enums.js';
import type { Leg } from '../ledger/ledger.js';
import { paymentNotReceivedAfterAll, paymentReceivedAfterAll } from '../ledger/postings.js';
import { commissionFor } from '../merchant/fees.js';
import type { Applied, Claimed, Deferred, OperationKind, Target } from '../operations/lifecycle.js';
import { recordConflict, type ConflictLog, type ProviderWord } from '../providers/conflict.js';
import type { Connector, PaymentOutcome, ProviderData, SavedCard } from '../providers/connector.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import type { Receipt } from '../receipt/receipt.js';
import { receiptFromJson } from '../receipt/receipt-json.js';
import { readPayableBill, round2, type PayableBill } from './payable-bill.js';
import { PROVIDER_UNAVAILABLE } from './payment-errors.js';
import { finalAnswer, finishPayment, settle, statusFor, storedQuote, type ChargeResult, type PayOutcome } from './payment-finish.js';
import type { OpenedPayment } from './payment-open.js';
import * as repo from './payment.repository.js';
import type { PaymentRow } from './payment.repository.js';
import { IllegalPaymentTransitionError } from './payment.states.js';
import { nextCheckDelayMs } from './reconcile-schedule.js';
import { isMoneyReceived } from '../../kernel/statuses.js';

/** A request on a held payment (docs/adr/0073-two-stage-payments.md): its capture of `amount`, or its cancellation. */
export interface HoldCall { kind: 'capture' | 'cancel'; amount: Decimal; held: Decimal; receipt: Receipt | null }

/** A payment the lifecycle sends or asks about: the connector that has it and its reference. */
export interface PaymentSend extends Claimed {
  connector: string | null; ref: string | null;
  /** What its connector's answers kept (docs/adr/0118), handed back to every call about it; absent for a payment just opened. */
  data?: ProviderData | null;
  /** The payer's first send: the payment just opened, with its routing's connectors in order. */
  opened?: OpenedPayment;
  /** A request on a held payment, heard as a read. */
  hold?: HoldCall;
}

/** A payment reconciliation is to ask its provider about (sent when it was opened: `sentAt` is its creation). */
export interface DueCheck extends PaymentSend { sentAt: Date }

/**
 * The payment as an operation kind of the lifecycle (src/domain/operations/lifecycle.ts): its
 * row, its connector calls (the first send with its routing, a hold's capture or cancellation,
 * the question, a saved card's repeated charge), its finish through its state table and the
 * ledger, its conflicts and its deferral. Every SQL statement is the repository's.
 */
export class PaymentOperation implements OperationKind<PaymentStatus, PaymentRow, PaymentOutcome, PaymentSend, PayOutcome> {
  readonly type = 'payment' as const;

  constructor(private readonly config: Config, private readonly pool: pg.Pool, private readonly connectors: ConnectorRegistry) {}

  async lock_(c: Queryable, target: Target): Promise<PaymentRow | null> {
    const id = 'id' in target ? target.id : await repo.findAtConnector(c, target.connector, null, target.ref);
    return id === null ? null : repo.lockPayment(c, id);
  }

  finalOf(o: PaymentOutcome): PaymentStatus | null {
    const a = finalAnswer(o);
    if (a === null) return null;
    return a.outcome === 'PAID' && round2(a.amountReceived).gt(0) ? 'SUCCESS' : 'FAIL';
  }

  wordOf(o: PaymentOutcome): Omit<ProviderWord, 'via'> | null {
    if (o.status === 'paid') return { status: round2(o.amountReceived).gt(0) ? 'succeeded' : 'failed', ref: o.ref || null, message: `paid ${round2(o.amountReceived).toFixed(2)} RUB` };
    // No connector of the route took the payment (firstSend): our refusal, not a provider's word.
    if (o.status === 'declined' && o.code === PROVIDER_UNAVAILABLE && o.ref === null) return null;
    if (o.status === 'declined') return { status: 'failed', ref: o.ref || null, code: o.code, message: o.message };
    return null;
  }

  async finish_(c: Queryable, p: PaymentRow, o: PaymentOutcome): Promise<PaymentStatus> {
    const bill = await this.billOf(c, p);
    const a = finalAnswer(o)!;
    // A capture we asked for: what the provider captured is what was received (SUCCESS, never UNDERPAID).
    let result: ChargeResult = a.outcome === 'PAID' && p.capture_amount !== null ? { ...a, captured: true } : a;
    // The card the provider said it saved before this final answer (which may not repeat it).
    if (result.outcome === 'PAID' && !result.saved && p.saved_card) {
      result = { ...result, saved: { providerId: decrypt(this.config.tokenEncryptionKey, p.saved_card.provider_id_enc), mask: p.saved_card.mask, expiry: p.saved_card.expiry } };
    }
    return (await finishPayment(this.config, c, bill, { id: p.id, createdAt: p.created_at }, storedQuote(bill, p), result, repo.paidWithOf(p), p.connector)).status;
  }

  /**
   * The payer's first send answered finally: finished on the pool by `pay_finish` alone (the
   * hot path: no BEGIN/COMMIT, no lock). The payment became final while the call was out (the
   * provider's notification, after an answer it repeated, overtook the answer itself): null, and
   * the lifecycle applies the answer as a read, so the caller gets the payment as it is, never a
   * 409 for a state already reached (docs/adr/0090).
   */
  async finishSent_(op: PaymentSend, o: PaymentOutcome): Promise<PayOutcome | null> {
    const opened = op.opened;
    if (!opened) return null;
    const pay = opened.input;
    try {
      return await finishPayment(this.config, this.pool, opened.bill, { id: op.id, createdAt: opened.createdAt }, opened.quote, finalAnswer(o)!, {
        method: pay.method, fromCard: opened.charge ? opened.charge.mask : pay.card ? maskCard(pay.card.number) : null, payer: pay.payer, saveConsent: opened.saveConsent,
      }, op.connector);
    } catch (e) {
      if (e instanceof IllegalPaymentTransitionError) return null;
      throw e;
    }
  }

  async conflict_(c: Queryable, p: PaymentRow, o: PaymentOutcome, word: ProviderWord, log: ConflictLog): Promise<boolean> {
    return this.recordConflict_(c, p, await this.billOf(c, p), o, word, log);
  }

  async hold_(c: Queryable, p: PaymentRow, o: PaymentOutcome, attempts: number | undefined): Promise<void> {
    if (o.status === 'action' || o.status === 'pending' || o.status === 'authorized' || attempts !== undefined) await this.keep_(c, p.id, o, attempts ?? 0);
  }

  /**
   * Whether a decline whose reason the provider sends separately (its notification) still waits
   * for it: DECLINE_REASON_WAIT_MS from its first read, then asked again and applied with the
   * generic reason; a notification that comes first finishes the payment with its reason. Asked
   * now (the read before an operator's decision, or confirming a notification), a decline is final.
   */
  async waits_(c: Queryable, p: PaymentRow, o: PaymentOutcome, { attempts, via }: { attempts: number | undefined; via: string }): Promise<boolean> {
    return o.status === 'declined' && o.reasonFollows === true && via !== 'resolve' && via !== 'notification+read'
      && !await repo.declineReasonWaited(c, p.id, this.config.declineReasonWaitMs, attempts);
  }

  decided(p: PaymentRow, to: 'SUCCESS' | 'FAIL'): PaymentOutcome {
    return to === 'SUCCESS'
      ? { status: 'paid', amountReceived: new Decimal(p.amount), ref: p.provider_ref ?? '' }
      : { status: 'declined', code: 'operator_decision', message: 'Failed by the operator after reconciliation gave up.', ref: p.provider_ref };
  }

  illegal(from: PaymentStatus, to: PaymentStatus): Error {
    return new IllegalPaymentTransitionError(from, to);
  }

  /** The payer's first send, a request on a held payment, or (a claimed payment, sent when it was opened) the question. */
  sendFromProvider_(op: PaymentSend): Promise<PaymentOutcome> {
    if (op.opened) return this.firstSendFromProvider_(op, op.opened);
    if (op.hold) return this.holdFromProvider_(op, op.hold);
    return this.reconcileFromProvider_(op);
  }

  /** Asks the connector that has a payment for its status, outside any transaction. */
  async reconcileFromProvider_(p: { id: string; connector: string | null; ref: string | null; data?: ProviderData | null }): Promise<PaymentOutcome> {
    // No connector could take it (none was ever called): no money can have moved.
    if (p.connector === null) return { status: 'declined', code: 'no_connector', message: 'No connector took the payment.', ref: null };
    const c = await this.connectors.get(p.connector);
    if (!c) return { status: 'unknown', ref: p.ref, reason: `connector ${p.connector} is not available` };
    if (p.ref === null && c.capabilities.savedCards) {
      const repeat = await this.repeatChargeFromProvider_(c, p.id);
      if (repeat) return repeat;
    }
    return this.connectors.call<PaymentOutcome>(c, 'get_payment', (cc) => c.getPayment({ paymentId: p.id, ref: p.ref, data: p.data ?? null }, cc));
  }

  async readFromProvider_(id: string, ref?: string | null): Promise<PaymentOutcome | null> {
    const p = await repo.readPayment(this.pool, id);
    return p?.connector ? this.reconcileFromProvider_({ id, connector: p.connector, ref: ref ?? p.provider_ref, data: p.provider_data }) : null;
  }

  async defer_(c: Queryable, op: PaymentSend, o: PaymentOutcome): Promise<Deferred | null> {
    if (op.hold) {
      // The provider did not take the request: no money moved, and it is withdrawn (it may be made again).
      if (o.status === 'refused') await repo.withdrawHoldRequest(c, op.id, op.hold.kind);
      // Else heard as a read: what it says is kept, no check is counted. A held payment waits for
      // the merchant (days): no attention item.
      else if (o.status === 'action' || o.status === 'pending' || o.status === 'authorized') await this.keep_(c, op.id, o, 0);
      return null;
    }
    const held = await this.keep_(c, op.id, o, op.sentAt === null ? 0 : op.checkAttempts + 1);
    // A held payment waits for the merchant's capture or cancel (days): it is no operation
    // the provider left unanswered, so no attention item (its expiry is the provider's answer).
    return o.status === 'authorized' ? null : held;
  }

  /**
   * After an answer applied: the provider's word that it saved the card came after the payment
   * finished (T-Bank's AUTHORIZED notification overtaken by CONFIRMED). A payment final with
   * money received, the payer having consented and none saved yet, saves it now
   * (docs/adr/0074-saved-cards-and-recurring-charges.md): written once, and the payment names it.
   * Its postback, sent at the finish, did not.
   */
  async savedLate_(c: Queryable, paymentId: string, o: PaymentOutcome, done: Applied<PaymentStatus>): Promise<void> {
    if (done.applied || done.status === null || !isMoneyReceived(done.status)) return;
    const card: SavedCard | undefined = o.status === 'paid' || o.status === 'pending' ? o.saved : undefined;
    if (!card) return;
    await repo.saveLate(c, paymentId, { savedId: newId(), providerIdEnc: encrypt(this.config.tokenEncryptionKey, card.providerId), mask: card.mask, expiry: card.expiry });
  }

  private async billOf(c: Queryable, p: PaymentRow): Promise<PayableBill> {
    return (await readPayableBill(c, this.connectors, p.bill_id))!;
  }

  /**
   * Keeps a payment PROCESS with what the provider said that was not final: the payer's action
   * (kept until another replaces it), its reference, and when to ask next. The connector that
   * has it is on record since it was called.
   */
  private async keep_(c: Queryable, paymentId: string, o: PaymentOutcome, attempts: number): Promise<Deferred | null> {
    const row = await repo.keepHeard(c, paymentId, {
      ref: 'ref' in o ? o.ref : null,
      action: o.status === 'action' ? JSON.stringify(o.action) : null,
      attempts, nextCheckMs: nextCheckDelayMs(this.config, attempts), unanswered: o.status === 'unknown',
      // Two-stage: what the provider holds, recorded when it first says so (docs/adr/0073-two-stage-payments.md).
      held: o.status === 'authorized' ? round2(o.amount).toFixed(2) : null,
      // A card saved before the payment is final (T-Bank: RebillId on AUTHORIZED), kept for its finish.
      savedCard: o.status === 'pending' && o.saved
        ? JSON.stringify({ provider_id_enc: encrypt(this.config.tokenEncryptionKey, o.saved.providerId), mask: o.saved.mask, expiry: o.saved.expiry }) : null,
      data: o.data ? JSON.stringify(o.data) : null,
    });
    // A payment is handed to its connector when it is opened: its deadline runs from then.
    return row ? { merchantId: row.merchant_id, connector: row.connector, ref: row.provider_ref, sentAt: row.created_at } : null;
  }

  /**
   * The payer's first call, outside any transaction. Routing (PROVIDERS.md): the first
   * candidate was written with the payment (pay_open); the next one is tried ONLY after a
   * refusal before money could move, and is written first, so reconciliation always asks the
   * connector that may have the money (`op.connector` follows it).
   */
  private async firstSendFromProvider_(op: PaymentSend, opened: OpenedPayment): Promise<PaymentOutcome> {
    const { input: pay, paymentId } = opened;
    const method = pay.method === 'SBP' ? 'sbp' : 'card';
    let last: PaymentOutcome | null = null;
    for (const [i, c] of opened.candidates.entries()) {
      if (i > 0) await repo.setConnector(this.pool, paymentId, c.name);
      op.connector = c.name;
      last = await this.connectors.call<PaymentOutcome>(c, 'create_payment', (cc) => c.createPayment({
        paymentId, method, amount: opened.quote.dueRub, card: c.capabilities.hostsCardForm ? undefined : pay.card,
        // What an SBP payer sends is chosen on the sandbox bank's page only (a test instrument):
        // a real provider is asked for the amount due, whatever the request said.
        sbpAmount: c.kind === 'sandbox' ? pay.sbpAmount : undefined,
        returnUrl: `${this.config.publicBaseUrl}/pay/${opened.bill.id}/payments/${paymentId}`,
        receipt: opened.receipt ?? undefined,
        ...(opened.bill.expiresAt ? { payableUntil: opened.bill.expiresAt } : {}),
        ...(opened.bill.capture ? {} : { capture: false }),
        ...(opened.saveConsent && c.capabilities.savedCards ? { savePaymentMethod: true } : {}),
        ...(opened.charge ? { savedMethod: { providerId: opened.charge.providerId } } : {}),
      }, cc));
      if (last.status !== 'refused') return last;
    }
    // Every connector the payment could go to refused before any money moved (down, a 5xx, a
    // refusal on creation): the payer's card is not at fault and the merchant is told the method
    // was unavailable; the provider's own code and words stay in failure_message for the operator.
    const refused = (last ?? { status: 'refused', code: 'no_connector', message: `No enabled connector can take payment_${method}.` }) as Extract<PaymentOutcome, { status: 'refused' }>;
    return { status: 'declined', code: PROVIDER_UNAVAILABLE, message: `${refused.code}: ${refused.message}`.slice(0, 500), ref: null };
  }

  /** A held payment's capture or cancellation, asked of the connector that holds it, outside any transaction. */
  private async holdFromProvider_(op: PaymentSend, h: HoldCall): Promise<PaymentOutcome> {
    const connector = op.connector ? await this.connectors.get(op.connector) : null;
    const call = h.kind === 'capture' ? connector?.capturePayment : connector?.cancelPayment;
    if (!connector || !call) return { status: 'unknown', ref: op.ref, reason: `connector ${op.connector ?? '(none)'} cannot ${h.kind} a held payment now` };
    return this.connectors.call<PaymentOutcome>(connector, h.kind === 'capture' ? 'capture_payment' : 'cancel_payment',
      (cc) => call.call(connector, { paymentId: op.id, ref: op.ref, amount: h.amount, held: h.held, ...(h.receipt ? { receipt: h.receipt } : {}), data: op.data ?? null }, cc));
  }

  /**
   * A saved card's charge whose creation answer was lost (no reference): YooKassa cannot be asked
   * by our id, so the creation is sent again exactly as it was, under the same idempotency key
   * (our payment id) with when it was first sent; the provider answers the payment it made, or
   * makes it now, never a second one (docs/adr/0074-saved-cards-and-recurring-charges.md). Null
   * for a payment that is no charge.
   */
  private async repeatChargeFromProvider_(c: Connector, paymentId: string): Promise<PaymentOutcome | null> {
    const x = await repo.chargeToRepeat(this.pool, paymentId);
    if (!x) return null;
    const bill = (await readPayableBill(this.pool, this.connectors, x.bill_id))!;
    const quote = storedQuote(bill, x);
    // The receipt the first sending carried, as kept with the payment: a repeat is the same request (docs/adr/0087).
    const receipt = receiptFromJson(x.receipt)?.receipt;
    return this.connectors.call<PaymentOutcome>(c, 'create_payment', (cc) => c.createPayment({
      paymentId, method: 'card', amount: quote.dueRub, returnUrl: `${this.config.publicBaseUrl}/pay/${bill.id}/payments/${paymentId}`, receipt,
      savedMethod: { providerId: decrypt(this.config.tokenEncryptionKey, x.provider_id_enc) }, firstSentAt: x.created_at,
    }, cc));
  }

  /**
   * A provider's final answer about a payment final already that contradicts it (a payment we
   * failed that the provider charged, one we credited that it declined), in the lifecycle's
   * transaction with the payment locked: the money follows the provider (PAYMENT_CONFLICT_CREDIT
   * as the PAYMENT_CREDIT would have been, or PAYMENT_CONFLICT_DEBIT reversing the credit, which
   * may take available below zero) and a second postback carries the provider's status. The
   * payment's status stays (final states never change). Once per payment.
   */
  private async recordConflict_(c: Queryable, p: PaymentRow, bill: PayableBill, outcome: PaymentOutcome, word: ProviderWord, log: ConflictLog): Promise<boolean> {
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
      const legs: Leg[] = (await repo.creditLegsOf(c, paymentId))
        .map((l) => ({ from: l.debit_account, to: l.credit_account, amount: new Decimal(l.amount), currency: l.currency }));
      // A payment credited without a ledger transfer (none: every money status is credited) has nothing to reverse.
      if (legs.length === 0) return false;
      transfer = paymentNotReceivedAfterAll({ paymentId, merchantId: bill.merchantId, credit: legs });
      fields = { ...base, OutSum: '0.00', Commission: '0.00', Status: 'FAIL' };
    }
    const recorded = await recordConflict(c, {
      objectType: 'payment', objectId: paymentId, merchantId: bill.merchantId, connector, providerRef: p.provider_ref, ours: p.status,
      provider: word, transfer,
    }, log);
    // The merchant learns what the provider did: a postback of its own (the first one's
    // (kind, aggregate) is taken), TrsId the payment, Status the provider's.
    if (recorded) await enqueueEvent(c, { merchantId: bill.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: `${paymentId}:conflict`, url: bill.resultUrl, fields });
    return recorded;
  }
}
