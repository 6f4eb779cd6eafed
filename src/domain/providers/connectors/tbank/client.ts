import { randomUUID } from 'node:crypto';
import type { BlockList } from 'node:net';
import { Decimal } from 'decimal.js';
import {
  ConnectorRefusedError, NEEDS_OPERATOR, PAYMENT_METHOD_REVOKED, type CallContext, type Capabilities, type ConnectionCheck, type Connector, type ConnectorMode, type CreatePayment, type CreateRefund,
  type InboundNotification, type OperationOutcome, type ParsedNotification, type PaymentOutcome, type ProviderData, type SettleHold,
} from '../../connector.js';
import { parseAllowList, providerFetch, rubOfRefund, type ProviderAnswer, type ProviderNet } from '../../provider-http.js';
import {
  CHARGE_REFUSALS, CONFIG_CODES, IN_PROGRESS, INITIATOR, ORDER_NOT_FOUND, PAID, REFUND_DONE, REFUND_RUNNING, TRANSIENT_CODES, answered, kopecks,
  paymentOutcome, reasonFollows, redirectDueDate, refundOutcome, refundRef, tbReceipt, type TbAnswer,
} from './mapping.js';
import { parseTBankNotification, tbankToken } from './notifications.js';
import type { TBankSettings } from './settings.js';

/** What a two-stage payment's answers keep (ProviderData): T-Bank's PayType it was made with. */
const HELD = { payType: 'T' } as const;

/** The acquiring API takes payments and refunds; it has no payouts (routing skips it for those). */
export const TBANK_CAPABILITIES: Capabilities = {
  payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: false, sbp: false }, hostsCardForm: true,
  twoStage: true,
  savedCards: true,
  // GetState and CheckOrder read a decline without its reason; the notification carries it (reasonFollows in mapping.ts).
  declineReasonFollows: true,
};

/**
 * A T-Bank terminal (internet acquiring API v2), written from developer.tbank.ru/eacq and the
 * public SDKs (docs/connectors/tbank.md). One-stage payments (`PayType: "O"`): Init answers
 * the `PaymentURL` of T-Bank's card form; SBP takes Init and then GetQr (the payload our page
 * draws). `OrderId` is our payment id: Init has no idempotency key, so a payment whose Init
 * answer was lost is found by `CheckOrder`, never created twice. Refunds are `Cancel` with
 * `ExternalRequestId` = our refund id. Every request carries a `Token`, every notification's
 * Token is checked.
 */
export class TBankConnector implements Connector {
  readonly kind = 'tbank' as const;
  readonly capabilities = TBANK_CAPABILITIES;
  private readonly allowList: BlockList | null;

  /**
   * `amountReading`: how GetState's `Amount` reads after a refund as a rehearsal at this API
   * address found it (docs/adr/0135); null: open, and only documented statuses decide (0091).
   */
  constructor(
    readonly name: string, readonly mode: ConnectorMode, private readonly s: TBankSettings, private readonly publicBaseUrl: string, private readonly net: ProviderNet,
    private readonly amountReading: () => Promise<'left' | 'paid' | null> = async () => null,
  ) {
    this.allowList = s.allowedIps ? parseAllowList(s.allowedIps) : null;
  }

  /** Where T-Bank posts this connector's notifications (sent as NotificationURL in every Init). */
  get notificationUrl(): string { return `${this.publicBaseUrl}/providers/${this.name}/notifications`; }

  async createPayment(req: CreatePayment, ctx: CallContext): Promise<PaymentOutcome> {
    if (req.savedMethod) return this.chargeSaved(req, ctx);
    const back = req.returnUrl ?? `${this.publicBaseUrl}/`;
    const init = await this.send('Init', {
      Amount: kopecks(req.amount), OrderId: req.paymentId, Description: (req.description ?? `Payment ${req.paymentId}`).slice(0, 140),
      // Two-stage (docs/adr/0073-two-stage-payments.md): PayType "T" holds the money (AUTHORIZED)
      // until Confirm (Amount: a partial one releases the rest) or Cancel (REVERSED)
      // (developer.tbank.ru/eacq/api/init "PayType", .../confirm, .../cancel).
      PayType: req.capture === false ? 'T' : 'O', NotificationURL: this.notificationUrl, SuccessURL: back, FailURL: back,
      // With the payer's consent only: a parent payment whose notification carries RebillId once paid
      // (developer.tbank.ru/eacq/api/charge: Init with Recurrent "Y" and CustomerKey). The customer is
      // this payment (one saved card per customer key; nothing else of the payer is sent).
      ...(req.savePaymentMethod ? { Recurrent: 'Y', CustomerKey: req.paymentId } : {}),
      ...(req.payableUntil ? { RedirectDueDate: redirectDueDate(req.payableUntil) } : {}),
      // Who initiates it (mapping.ts INITIATOR): the payer, saving the card or not.
      DATA: { OperationInitiatorType: req.savePaymentMethod ? INITIATOR.saving : INITIATOR.standard },
      ...(req.receipt ? { Receipt: tbReceipt(req.receipt) } : {}),
    }, ctx);
    // A NEW payment moves no money until the payer acts on T-Bank's page or the QR, which the
    // payer reaches only from this answer: a refusal here, a 5xx included, is safe to route on.
    const a = answered(init, 'Init');
    const ref = String(a.PaymentId);
    if (req.method === 'card') {
      if (!a.PaymentURL) throw new ConnectorRefusedError('tbank:no_payment_url', 'tbank: Init answered no PaymentURL');
      // GetState never says a payment is two-stage: kept with the payment (held: AUTHORIZED is a hold).
      // Only this answer gives the payer T-Bank's form, so a payment that can be AUTHORIZED has it.
      return { status: 'action', action: { type: 'redirect', url: a.PaymentURL }, ref, ...(req.capture === false ? { data: HELD } : {}) };
    }
    // The NEW payment of a refused GetQr is left to expire at RedirectDueDate: no payer has it.
    const qr = answered(await this.send('GetQr', { PaymentId: ref, DataType: 'PAYLOAD' }, ctx), 'GetQr');
    if (!qr.Data) throw new ConnectorRefusedError('tbank:no_qr', 'tbank: GetQr answered no Data');
    return { status: 'action', action: { type: 'sbp_qr', payload: qr.Data, links: [{ name: 'SBP', url: qr.Data }] }, ref };
  }

  /**
   * A saved card's charge (developer.tbank.ru/eacq/api/charge): Init (no Recurrent, no payer sent
   * to PaymentURL), then Charge with the PaymentId and the RebillId. Init has no idempotency key:
   * a repeat (`firstSentAt`) first asks CheckOrder for our OrderId, charges a payment of it still
   * NEW (its Charge never applied), answers one that moved on, and makes one only when there is none.
   */
  private async chargeSaved(req: CreatePayment, ctx: CallContext): Promise<PaymentOutcome> {
    let ref: string | null = null;
    if (req.firstSentAt) {
      const r = await this.send('CheckOrder', { OrderId: req.paymentId }, ctx);
      const body = r.body as TbAnswer | null;
      const none = r.status === 200 && body?.Success === false && body.ErrorCode === ORDER_NOT_FOUND;
      if (!none) {
        const list = answered(r, 'CheckOrder', true).Payments ?? [];
        const p = list.find((x) => x.Status !== 'NEW') ?? list[0];
        if (p && p.Status !== 'NEW') return paymentOutcome(String(p.PaymentId), p.Status, p.Amount, '0', undefined);
        if (p) ref = String(p.PaymentId);
      }
    }
    if (ref === null) {
      const sent = await this.send('Init', {
        Amount: kopecks(req.amount), OrderId: req.paymentId, Description: (req.description ?? `Payment ${req.paymentId}`).slice(0, 140),
        PayType: 'O', NotificationURL: this.notificationUrl,
        // A merchant's recurring charge of a saved card (MIT COF R): T-Bank answers 1126 to a Charge otherwise.
        DATA: { OperationInitiatorType: INITIATOR.recurring },
        ...(req.receipt ? { Receipt: tbReceipt(req.receipt) } : {}),
      }, ctx);
      const refused = sent.body as TbAnswer | null;
      if (sent.status === 200 && refused?.Success === false) {
        const code = refused.ErrorCode ?? 'unknown';
        // Init has no idempotency key: after an answer that decides nothing, reconciliation repeats
        // this with firstSentAt, and CheckOrder of our OrderId finds the payment it may have made.
        if (TRANSIENT_CODES.has(code)) return { status: 'unknown', ref: null, reason: `tbank: Init answered ${code}; repeated after CheckOrder` };
        const known = CHARGE_REFUSALS[code];
        if (known) return { status: 'declined', code: known.reason, message: known.message, ref: null };
      }
      // A 5xx or no answer: Init may have made a NEW payment, which moves no money; CheckOrder finds it.
      if (sent.status >= 500) return { status: 'unknown', ref: null, reason: `tbank: Init answered HTTP ${sent.status} (result unknown)` };
      ref = String(answered(sent, 'Init').PaymentId);
    }
    const r = await this.send('Charge', { PaymentId: ref, RebillId: req.savedMethod!.providerId }, ctx);
    // No answer: the Charge may have applied; reconciliation repeats this with firstSentAt.
    // Every unknown outcome below keeps `ref: null` on purpose, though Init gave a PaymentId: with a
    // reference on record reconciliation would only read the payment (GetState, still NEW for a
    // Charge that never applied) and never charge it; without one it repeats this method, whose
    // CheckOrder finds the NEW payment and charges it once (test/providers/saved-cards-providers.test.ts, 9001).
    if (r.status !== 200 || !r.body) return { status: 'unknown', ref: null, reason: `tbank: Charge answered HTTP ${r.status} (result unknown)` };
    const a = r.body as TbAnswer;
    // A decline is answered with its Status (and the reason's code).
    if (typeof a.Status === 'string' && a.Status !== '') return paymentOutcome(ref, a.Status, a.Amount, a.ErrorCode ?? '0', a.Message);
    // A refusal without a Status does not say whether the charge began: the payment's own state
    // decides (as before repeating a Cancel, docs/adr/0063). Moved on: what it says. Still NEW:
    // nothing was charged; a code that decides nothing (TRANSIENT_CODES) leaves it to
    // reconciliation, which charges the same NEW payment again; 10, 1126 and 262 are refusals
    // with our own reason (CHARGE_REFUSALS); any other code is a final refusal.
    const code = a.ErrorCode ?? 'unknown';
    const state = await this.send('GetState', { PaymentId: ref }, ctx);
    const st = state.status === 200 ? state.body as TbAnswer | null : null;
    if (!st || st.Success !== true || typeof st.Status !== 'string') {
      return { status: 'unknown', ref: null, reason: `tbank: Charge refused ${code}, and GetState did not say the payment's state` };
    }
    if (st.Status !== 'NEW') return reasonFollows(paymentOutcome(ref, st.Status, st.Amount, '0', st.Message));
    const said = [a.Message, a.Details].filter(Boolean).join(' ');
    if (TRANSIENT_CODES.has(code)) return { status: 'unknown', ref: null, reason: `tbank: Charge answered ${code} (${said || 'retry later'}); nothing charged yet` };
    const known = CHARGE_REFUSALS[code];
    if (known) return { status: 'declined', code: known.reason, message: `${known.message}${said ? ` ${said}` : ''}`, ref };
    return { status: 'declined', code: `tbank:${code}`, message: `T-Bank: Charge refused ${code}: ${said}`, ref };
  }

  async getPayment(q: { paymentId: string; ref: string | null; data?: ProviderData | null }, ctx: CallContext): Promise<PaymentOutcome> {
    if (q.ref) {
      const a = answered(await this.send('GetState', { PaymentId: q.ref }, ctx), 'GetState', true);
      // A two-stage payment held (Init's answer kept HELD): AUTHORIZED waits for our Confirm or
      // Cancel (one-stage, it is a step the bank finishes itself).
      if (q.data?.payType === HELD.payType && a.Status === 'AUTHORIZED') return { status: 'authorized', amount: new Decimal(a.Amount ?? 0).div(100), ref: q.ref };
      return reasonFollows(paymentOutcome(q.ref, a.Status ?? '', a.Amount, '0', a.Message));
    }
    // The Init answer was lost: the order (our payment id) tells whether it created a payment.
    const r = await this.send('CheckOrder', { OrderId: q.paymentId }, ctx);
    // 335, "order not found": T-Bank never saw the OrderId, so Init never applied (no payment, no
    // form, nothing a payer could pay): the same as an order with no payment.
    const body = r.body as TbAnswer | null;
    if (r.status === 200 && body?.Success === false && body.ErrorCode === ORDER_NOT_FOUND) {
      return { status: 'declined', code: 'tbank:not_found', message: 'T-Bank never saw this order (CheckOrder 335).', ref: null };
    }
    const a = answered(r, 'CheckOrder', true);
    const list = a.Payments ?? [];
    // No payment for the order: Init never applied, and no payer ever had a form to pay on.
    if (list.length === 0) return { status: 'declined', code: 'tbank:not_found', message: 'T-Bank has no payment for this order.', ref: null };
    const p = list.find((x) => PAID.has(x.Status)) ?? list.find((x) => IN_PROGRESS.has(x.Status)) ?? list[list.length - 1]!;
    return reasonFollows(paymentOutcome(String(p.PaymentId), p.Status, p.Amount, '0', undefined));
  }

  /**
   * Two-stage: Confirm with `Amount` in kopecks (less than held: the rest is released) -> CONFIRMED.
   * A refusal (code 8: not AUTHORIZED any more) is answered by the payment's state now, so a
   * Confirm repeated after the first applied reads CONFIRMED; one still AUTHORIZED is a refusal.
   */
  async capturePayment(req: SettleHold, ctx: CallContext): Promise<PaymentOutcome> {
    if (!req.ref) throw new ConnectorRefusedError('tbank:no_ref', 'tbank: no PaymentId to confirm');
    // With an online cash register Confirm carries the receipt of what is taken ("Receipt: обязателен,
    // если подключена онлайн-касса": T-Bank's specification, schema Confirm, as kravetsone/t-kassa-api
    // src/api-types.ts carries it); without one T-Bank answers 309 (docs/adr/0075).
    const r = await this.send('Confirm', {
      PaymentId: req.ref, Amount: kopecks(req.amount), ...(req.receipt ? { Receipt: tbReceipt(req.receipt) } : {}),
    }, ctx);
    return this.settled(r, req, 'Confirm', ctx);
  }

  /** Two-stage: Cancel of a held payment (no Amount: all of it) -> REVERSED, a `declined` with code `canceled`. */
  async cancelPayment(req: SettleHold, ctx: CallContext): Promise<PaymentOutcome> {
    if (!req.ref) throw new ConnectorRefusedError('tbank:no_ref', 'tbank: no PaymentId to cancel');
    const r = await this.send('Cancel', { PaymentId: req.ref }, ctx);
    return this.settled(r, req, 'Cancel', ctx);
  }

  private async settled(r: ProviderAnswer, req: SettleHold, method: 'Confirm' | 'Cancel', ctx: CallContext): Promise<PaymentOutcome> {
    const ref = req.ref!;
    if (r.status !== 200 || !r.body) return { status: 'unknown', ref, reason: `tbank: ${method} answered HTTP ${r.status} (result unknown)` };
    const a = r.body as TbAnswer;
    const state = a.Success === true ? a : answered(await this.send('GetState', { PaymentId: ref }, ctx), 'GetState', true);
    if (state.Status === 'AUTHORIZED') {
      // "Try again later" or a technical error with the hold still there: nothing decided, asked again.
      if (a.Success !== true && TRANSIENT_CODES.has(a.ErrorCode ?? '')) return { status: 'unknown', ref, reason: `tbank: ${method} answered ${a.ErrorCode}; the payment is still AUTHORIZED` };
      if (a.Success !== true) throw new ConnectorRefusedError(`tbank:${a.ErrorCode ?? 'unknown'}`, `tbank: ${method} refused ${a.ErrorCode ?? ''}: ${[a.Message, a.Details].filter(Boolean).join(' ')}`);
      return { status: 'authorized', amount: new Decimal(state.Amount ?? 0).div(100), ref };
    }
    if (state.Status === 'REVERSED') return { status: 'declined', code: 'canceled', message: 'T-Bank: REVERSED (the hold was cancelled)', ref };
    return paymentOutcome(ref, state.Status ?? '', state.Amount, '0', state.Message);
  }

  async refund(req: CreateRefund, ctx: CallContext): Promise<OperationOutcome> {
    if (!req.paymentRef) return { status: 'failed', code: 'no_provider_ref', message: 'tbank: the payment has no PaymentId', ref: null };
    // The terminal took roubles: Cancel gives back the RUB share of the refund, in kopecks. A refund
    // of another currency admitted before that share was kept has none: failed, never guessed.
    const rub = rubOfRefund(req);
    if (!rub) return { status: 'failed', code: 'tbank:currency_not_supported', message: `tbank: no RUB amount for a refund in ${req.currency}`, ref: null };
    // A repeat after a lost answer: T-Bank's ExternalRequestId does not deduplicate an SBP
    // Cancel, so the payment's state decides first whether this refund was already made.
    if (req.firstSentAt) {
      const decided = await this.beforeRepeat(req.paymentRef, req.siblings, ctx);
      if (decided) return decided;
    }
    const r = await this.send('Cancel', {
      PaymentId: req.paymentRef, Amount: kopecks(rub), ExternalRequestId: req.refundId,
      // With an online cash register a partial refund lists the returned lines (modern-openapi.json,
      // "Частичный возврат при подключенной онлайн-кассе": Cancel carries Amount and Receipt); a full
      // one carries none: the register reverses the payment's own receipt (the specification's
      // Cancel.Receipt: "При полной отмене структура чека не передается, при частичной — передаются
      // товары, которые нужно отменить").
      ...(req.receipt && !req.whole ? { Receipt: tbReceipt(req.receipt) } : {}),
    }, ctx);
    // No answer, or a 5xx: the Cancel may have applied; asked again with the same ExternalRequestId.
    if (r.status !== 200 || !r.body) throw new Error(`tbank: Cancel answered HTTP ${r.status} (result unknown)`);
    const a = r.body as TbAnswer;
    if (a.Success !== true) {
      const code = a.ErrorCode ?? 'unknown';
      if (CONFIG_CODES.has(code)) throw new ConnectorRefusedError(`tbank:${code}`, `tbank: Cancel refused ${code} ${a.Message ?? ''} ${a.Details ?? ''}`.trim());
      // "Retry later" and technical errors: not a no to the refund (it may have applied);
      // reconciliation decides from the payment's state (GetState) before anything is repeated.
      if (TRANSIENT_CODES.has(code)) {
        return { status: 'unknown', ref: null, reason: `tbank: Cancel answered ${code} (${[a.Message, a.Details].filter(Boolean).join(' ') || 'retry later'}); asked again after reading the payment` };
      }
      return { status: 'failed', code: `tbank:${code}`, message: [a.Message, a.Details].filter(Boolean).join(' ') || 'T-Bank refused the refund.', ref: null };
    }
    return refundOutcome(refundRef(req.paymentRef, a.NewAmount), a.Status ?? '');
  }

  /**
   * Before repeating a Cancel whose answer was lost or decided nothing, the payment's state
   * (GetState's Status, a documented status transition; never its `Amount`, which the
   * specification describes only as "amount in kopecks", docs/adr/0091) says whether this
   * refund was made; null when it was not and the Cancel may be sent.
   * - a refund running (REFUNDING, ASYNC_REFUNDING for SBP, REVERSING): not decided, asked again;
   * - REFUNDED or REVERSED: everything came back, this refund included: succeeded;
   * - CONFIRMED or AUTHORIZED: nothing was refunded: sent again;
   * - PARTIAL_REFUNDED / PARTIAL_REVERSED with no other refund of the payment known here (none
   *   succeeded, none open): the only Cancel it can be is this one: succeeded; with others, the
   *   status cannot say whose it is: an operator decides (NEEDS_OPERATOR, with GetState's answer).
   */
  private async beforeRepeat(
    paymentRef: string, sib: { succeededRub: Decimal; openRub: Decimal; paidRub: Decimal | null } | undefined, ctx: CallContext,
  ): Promise<OperationOutcome | null> {
    const s = answered(await this.send('GetState', { PaymentId: paymentRef }, ctx), 'GetState', true);
    const status = s.Status ?? '';
    if (REFUND_RUNNING.has(status)) return { status: 'unknown', ref: null, reason: `tbank: refund repeat not sent: the payment is ${status} (a refund is running)` };
    if (status === 'REFUNDED' || status === 'REVERSED') return { status: 'succeeded', ref: paymentRef };
    if (status !== 'PARTIAL_REFUNDED' && status !== 'PARTIAL_REVERSED') return null;
    if (sib && sib.succeededRub.isZero() && sib.openRub.isZero()) return { status: 'succeeded', ref: paymentRef };
    return {
      status: 'unknown', ref: null,
      reason: `${NEEDS_OPERATOR}tbank: the payment is ${status} and has other refunds here, so its status cannot say whether this refund was made; GetState answered ${rawOf(s)}`,
    };
  }

  /**
   * T-Bank keeps no refund object: a refund's ref is `<PaymentId>:<NewAmount>`, its payment and
   * what its Cancel answered was left. A Cancel accepted but still running (REFUNDING, SBP's
   * ASYNC_REFUNDING) is followed through the payment's status transitions: running, pending;
   * PARTIAL_REFUNDED / REFUNDED (or the hold's REVERSED states) after it, done. A payment back in
   * a status that shows no refund at all decides nothing: an operator gets GetState's answer.
   */
  async getRefund(q: { refundId: string; ref: string | null }, ctx: CallContext): Promise<OperationOutcome> {
    if (!q.ref) throw new ConnectorRefusedError('tbank:no_ref', 'tbank: no PaymentId; repeat the Cancel with the same ExternalRequestId');
    const [paymentId] = q.ref.split(':');
    const a = answered(await this.send('GetState', { PaymentId: paymentId }, ctx), 'GetState', true);
    const status = a.Status ?? '';
    if (REFUND_RUNNING.has(status)) return { status: 'pending', ref: q.ref };
    if (REFUND_DONE.has(status) || status === 'REFUNDED' || status === 'REVERSED' || status === 'CANCELED') {
      // A rehearsal found `Amount` to be what is left: a state that still shows more than this
      // refund's Cancel left (NewAmount) contradicts its status, so an operator decides. The finding
      // only takes away a "done"; it never makes one (docs/adr/0135).
      const left = Number(q.ref.split(':')[1]);
      if (typeof a.Amount === 'number' && Number.isSafeInteger(left) && a.Amount > left && await this.amountReading() === 'left') {
        return { status: 'unknown', ref: q.ref, reason: `${NEEDS_OPERATOR}tbank: the payment is ${status} but GetState's Amount ${a.Amount} (what is left, as a rehearsal of this API found) is more than the ${left} this refund's Cancel left; GetState answered ${rawOf(a)}` };
      }
      return refundOutcome(q.ref, status);
    }
    return { status: 'unknown', ref: q.ref, reason: `${NEEDS_OPERATOR}tbank: the refund's Cancel was accepted but the payment is ${status}; GetState answered ${rawOf(a)}` };
  }

  /**
   * A saved card revoked here, removed at T-Bank: GetCardList of the customer (our saving payment's
   * id, its CustomerKey) names the card whose RebillId we hold, then RemoveCard {CustomerKey, CardId}
   * deletes it (status D). kravetsone/t-kassa-api src/index.ts, getCardList "Возвращает список всех
   * привязанных карт клиента, включая удаленные" and removeCard "Метод удаляет привязанную карту
   * клиента" (T-Bank's operations GetCardList and RemoveCard). A card no longer listed, or listed
   * deleted, is removed already.
   */
  async removeSavedMethod(q: { providerId: string; customerKey: string }, ctx: CallContext): Promise<{ status: 'removed' | 'refused'; message: string }> {
    const list = await this.send('GetCardList', { CustomerKey: q.customerKey }, ctx);
    const cards = Array.isArray(list.body) ? list.body as { CardId?: unknown; RebillId?: unknown; Status?: unknown }[] : null;
    if (list.status !== 200 || !cards) {
      const b = list.body as TbAnswer | null;
      return { status: 'refused', message: `tbank: GetCardList answered HTTP ${list.status}${b?.ErrorCode ? ` error ${b.ErrorCode}` : ''}` };
    }
    const card = cards.find((c) => String(c.RebillId ?? '') === q.providerId && c.Status !== 'D');
    if (!card) return { status: 'removed', message: 'tbank: the card is not among the customer\'s active cards' };
    const r = await this.send('RemoveCard', { CustomerKey: q.customerKey, CardId: String(card.CardId) }, ctx);
    const a = r.body as TbAnswer | null;
    if (r.status === 200 && a?.Success === true) return { status: 'removed', message: 'tbank: RemoveCard done' };
    return { status: 'refused', message: `tbank: RemoveCard refused ${a?.ErrorCode ?? `HTTP ${r.status}`}: ${[a?.Message, a?.Details].filter(Boolean).join(' ')}` };
  }

  async createPayout(): Promise<OperationOutcome> {
    throw new ConnectorRefusedError('tbank:no_payouts', 'tbank: the acquiring API makes no payouts');
  }

  async getPayout(): Promise<OperationOutcome> {
    throw new ConnectorRefusedError('tbank:no_payouts', 'tbank: the acquiring API makes no payouts');
  }

  /** Verified by its Token; a refund's amounts are read from GetState (notifications.ts). */
  async parseNotification(n: InboundNotification, ctx: CallContext): Promise<ParsedNotification> {
    return parseTBankNotification(n, {
      allowList: this.allowList, password: this.s.password, terminalKey: this.s.terminalKey,
      readState: async (paymentId) => answered(await this.send('GetState', { PaymentId: paymentId }, ctx), 'GetState', true),
    });
  }

  // ---------------------------------------------------------------- HTTP

  /**
   * "Test connection": CheckOrder of an order id no payment has (a read that creates and changes
   * nothing; T-Bank checks the TerminalKey and the request's Token before anything else).
   */
  async checkConnection(ctx: CallContext): Promise<ConnectionCheck> {
    const a = await this.send('CheckOrder', { OrderId: `connection-check-${randomUUID()}` }, ctx);
    const b = a.body as { Success?: unknown; ErrorCode?: unknown; Message?: unknown; Details?: unknown } | null;
    if (a.status !== 200 || !b || typeof b !== 'object') return { ok: false, message: `T-Bank answered HTTP ${a.status}.` };
    // An order no payment has: T-Bank answers 335 "order not found" once the terminal key and the
    // token are accepted (a wrong password is 204 first), so 335 is the expected success here.
    if (b.Success === true || String(b.ErrorCode) === '335') return { ok: true, message: 'T-Bank accepted the terminal key and the password.' };
    // Only T-Bank's numeric error code is said, never the answer's text: the console is no window onto another server's replies.
    const code = /^\d{1,4}$/.test(String(b.ErrorCode)) ? String(b.ErrorCode) : 'unknown';
    return { ok: false, message: `T-Bank refused: error ${code}.` };
  }

  private send(method: string, params: Record<string, unknown>, ctx: CallContext): Promise<ProviderAnswer> {
    const body = { TerminalKey: this.s.terminalKey, ...params };
    const signed = { ...body, Token: tbankToken(body, this.s.password) };
    return providerFetch('tbank', `${this.s.baseUrl.replace(/\/+$/, '')}/${method}`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(signed),
    }, ctx.signal, this.net);
  }
}

/** A T-Bank answer as the operator reads it on an attention item (no secrets: T-Bank answers carry none). */
function rawOf(a: TbAnswer): string {
  return JSON.stringify(a).slice(0, 600);
}
