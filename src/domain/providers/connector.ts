import type { Decimal } from 'decimal.js';
import type { Receipt } from '../receipt/receipt.js';
import type { OperationType } from '../operation-type.js';

export type ConnectorMode = 'live' | 'test';

/** The operations a call is timed and counted under (metrics label `operation`). */
export type ConnectorOperation =
  | 'create_payment' | 'get_payment' | 'capture_payment' | 'cancel_payment' | 'refund' | 'get_refund' | 'create_payout' | 'get_payout' | 'notification'
  | 'remove_saved_method';

/** What a connector's provider can do; routing skips a connector that cannot take the method. */
export interface Capabilities {
  payment: { card: boolean; sbp: boolean };
  refunds: boolean;
  partialRefunds: boolean;
  payout: { card: boolean; sbp: boolean };
  /** The provider shows its own card form: the card number never reaches this service. */
  hostsCardForm: boolean;
  /**
   * How a card payout may name its card (docs/adr/0070): `number`, the full card number (a
   * connector whose provider needs a certificate for numbers says false without it); `tokens`,
   * the issuers whose payout card tokens it takes (a plugin's `payoutTokens.issuer`), or `any`
   * for a test instrument that pays every token as a good card. Absent: the number whenever
   * `payout.card`, no tokens.
   */
  payoutCardBy?: { number: boolean; tokens: readonly CardTokenProvider[] | 'any' };
  /**
   * Two-stage card payments (docs/adr/0073-two-stage-payments.md): the payment is authorized
   * and held (`CreatePayment.capture: false`), then `capturePayment` (full or partial) or
   * `cancelPayment`. Absent: one-stage only; a two-stage bill is never routed to it.
   */
  twoStage?: boolean;
  /**
   * Saved cards (docs/adr/0074-saved-cards-and-recurring-charges.md): saves a card when asked
   * (`CreatePayment.savePaymentMethod`) and charges a saved one (`CreatePayment.savedMethod`).
   */
  savedCards?: boolean;
  /**
   * The provider may read a payment as declined before it says why, and sends the reason later
   * in its notification (docs/adr/0025): such a `declined` answer carries `reasonFollows`, and the
   * payment waits for the reason a while. Absent: every decline it answers is final as it is.
   */
  declineReasonFollows?: boolean;
}

/**
 * Who issued a payout card token: a connector kind's provider that collects payout cards in its
 * own widget and answers a token for each (its plugin's `payoutTokens.issuer`, docs/adr/0133).
 * A payout account's `token_provider` holds it.
 */
export type CardTokenProvider = string;

/**
 * A card payout's destination as `CreatePayout.account` carries it: the card digits, or
 * `token:<issuer>:<token>` for an account whose card only its issuer knows (a card number is
 * digits only, so the two never meet). Connectors read it with cardDestination and pay a token
 * only of an issuer their `payoutCardBy.tokens` names (takesCard).
 */
export type CardDestination = { kind: 'number'; number: string } | { kind: 'token'; provider: CardTokenProvider; token: string };

export function tokenAccount(provider: CardTokenProvider, token: string): string {
  return `token:${provider}:${token}`;
}

export function cardDestination(account: string): CardDestination {
  const m = /^token:([a-z0-9-]+):(.+)$/s.exec(account);
  if (!m) return { kind: 'number', number: account };
  return { kind: 'token', provider: m[1]!, token: m[2]! };
}

/** Whether a connector may pay out to a card named this way (by number, or by an issuer's token). */
export function takesCard(c: Capabilities, by: 'number' | CardTokenProvider): boolean {
  if (!c.payout.card) return false;
  const how = c.payoutCardBy ?? { number: true, tokens: [] };
  if (by === 'number') return how.number;
  return how.tokens === 'any' || how.tokens.includes(by);
}

/** An issuer's card-collecting widget for payout accounts, as a connector offers it. */
export interface PayoutWidget {
  /** Whose tokens the widget answers (its plugin's `payoutTokens.issuer`). */
  provider: CardTokenProvider;
  /** What the widget is initialised with (the provider's id of the payout account it pays from). */
  accountId: string;
  /** The widget's script. */
  scriptUrl: string;
}

/** Card data as the payer typed it; lives only in memory for the call (our own form: sandbox only). */
export interface CardData {
  /** Digits only. */
  number: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  cvc: string;
}

/** What the payer must do next, shown by the payment page (PROVIDERS.md "Payment lifecycle"). */
export type PayerAction =
  | { type: 'redirect'; url: string }
  | { type: '3ds'; url: string }
  | { type: 'sbp_qr'; payload: string; links: { name: string; url: string }[] };

/**
 * The provider's own state of one operation (docs/adr/0118-each-operation-keeps-its-provider-state.md):
 * what its connector must remember between calls and its provider's answers do not say (T-Bank:
 * that a payment was made to be held). Opaque to everything but the connector that answered it:
 * the lifecycle stores it with the operation and hands it back to every later call about it.
 */
export type ProviderData = Record<string, unknown>;

/** What any outcome may carry: `data`, the provider's state of the operation to keep (replacing what was kept); absent, what was kept stays. */
export interface CarriesData { data?: ProviderData }

/**
 * The answer to a payment call. `refused`: the provider did not take the operation (connection
 * refused, 5xx, a refusal on creation), so no money can have moved and routing may try the next
 * connector. `unknown`: no answer (a timeout): the money may have moved, nothing is guessed.
 * `declined` is the payer's bank saying no to this payment: final, never retried elsewhere.
 */
export type PaymentOutcome = CarriesData & (
  /** `saved`: the provider saved the card for later charges, as it was asked (CreatePayment.savePaymentMethod). */
  | { status: 'paid'; amountReceived: Decimal; ref: string; saved?: SavedCard }
  /**
   * Two-stage: the payer's bank holds `amount` for us (YooKassa `waiting_for_capture`, T-Bank
   * `AUTHORIZED`); nothing is received until it is captured. Not final: the payment stays PROCESS.
   */
  | { status: 'authorized'; amount: Decimal; ref: string }
  /**
   * `reasonFollows`: the provider said "declined" without saying why, and sends the reason in its
   * notification; the payment waits for it a while (DECLINE_REASON_WAIT_MS). Only from a
   * connector whose capabilities declare `declineReasonFollows` (the call wrapper drops it otherwise).
   */
  | { status: 'declined'; code: string; message: string; ref: string | null; reasonFollows?: boolean }
  | { status: 'action'; action: PayerAction; ref: string }
  /** `saved`: the provider said so before the payment is final (T-Bank's RebillId on AUTHORIZED); kept until it is. */
  | { status: 'pending'; ref: string; saved?: SavedCard }
  | { status: 'refused'; code: string; message: string }
  | { status: 'unknown'; ref: string | null; reason: string });

/**
 * A card the provider saved for later charges (docs/adr/0074-saved-cards-and-recurring-charges.md):
 * its id there (YooKassa `payment_method.id`, T-Bank `RebillId`, the sandbox's token), the card
 * as first 6 / last 4 (`123456******7890`) and its expiry (`MM/YY`) when the provider gives them.
 */
export interface SavedCard { providerId: string; mask: string | null; expiry: string | null }

export interface CreatePayment {
  /** Our payment id: the provider's idempotency key, so a retried call charges once. */
  paymentId: string;
  method: 'card' | 'sbp';
  /** What the payer must pay, in RUB. */
  amount: Decimal;
  description?: string;
  /** Where the provider sends the payer back (our payment page). */
  returnUrl?: string;
  /** Our own card form only (a connector that hosts its form gets none). */
  card?: CardData;
  /** Sandbox only: what the SBP payer sends (to make UNDERPAID / OVERPAID). */
  sbpAmount?: Decimal;
  /** The 54-FZ receipt when the bill's shop fiscalizes (its lines add up to `amount`). */
  receipt?: Receipt;
  /** The bill's own deadline (its ttl): the provider's page or QR must not take a payment after it. */
  payableUntil?: Date;
  /** See CreateRefund.firstSentAt. */
  firstSentAt?: Date | null;
  /** false: two-stage, authorize and hold only (only to a connector with `capabilities.twoStage`). */
  capture?: boolean;
  /** The payer consented: ask the provider to save the card (the answer's `paid.saved`). */
  savePaymentMethod?: boolean;
  /**
   * A charge of a saved card (`capabilities.savedCards`): the provider's id of it, in memory for
   * the call only. No payer takes part: the answer is final, pending or unknown, never an action.
   */
  savedMethod?: { providerId: string };
}

/** A held payment's capture (`amount` at most what is held) or cancellation; our payment id is the idempotency key. */
export interface SettleHold {
  paymentId: string;
  ref: string | null;
  amount: Decimal;
  /** A capture: what the provider holds (RUB); `amount` below it is a partial capture. */
  held?: Decimal;
  /**
   * A capture for a shop that fiscalizes: the 54-FZ receipt of the captured amount (its lines add
   * up to `amount`). Each connector sends it where its provider requires it (docs/adr/0075).
   */
  receipt?: Receipt;
  /** What the connector's answers kept of this payment (ProviderData); null when nothing. */
  data?: ProviderData | null;
}

/**
 * Why a connector answers `unknown` without sending: the provider's idempotency key of a
 * creation handed to it before is past its documented life (YooKassa: 24 h), so a repeat could
 * create a second object. Nothing is sent; the lifecycle hands the operation to an operator
 * (docs/connectors/README.md "Outcomes the lifecycle must honour").
 */
export const IDEMPOTENCE_KEY_EXPIRED = 'idempotence_key_expired';

/**
 * The start of an `unknown` reason the provider's own word cannot decide (docs/adr/0091): its
 * state is final and does not say whether this operation was made. Asking again would learn
 * nothing, so the lifecycle hands it to an operator at once; the rest of the reason carries the
 * provider's raw answers for them.
 */
export const NEEDS_OPERATOR = 'needs_operator: ';

/**
 * A charge of a saved method refused because the method is gone at the provider (the payer
 * revoked it, YooKassa `permission_revoked`; T-Bank 262, its parent payment expired): the
 * `declined` code every connector answers for it, and the method is revoked here too
 * (docs/adr/0092-saved-methods-follow-the-payer.md).
 */
export const PAYMENT_METHOD_REVOKED = 'payment_method_revoked';

/** A refund or payout: final answers, or still running at the provider, or as for payments. */
export type OperationOutcome = CarriesData & (
  | { status: 'succeeded'; ref: string | null }
  | { status: 'failed'; code: string; message: string; ref: string | null }
  | { status: 'pending'; ref: string }
  | { status: 'refused'; code: string; message: string }
  | { status: 'unknown'; ref: string | null; reason: string });

export interface CreateRefund {
  /** Our refund id: the provider's idempotency key. */
  refundId: string;
  paymentId: string;
  /** The provider's reference of the payment (null for the sandbox's older payments). */
  paymentRef: string | null;
  /** In the payment's account currency (the bill's: what the merchant's balance gives back). */
  amount: Decimal;
  currency: string;
  /**
   * What the provider gives back in RUB (the payer paid roubles): `amount` for a RUB payment,
   * its share of the RUB paid otherwise; null for a refund admitted before this was kept.
   */
  amountRub: Decimal | null;
  /** The payer's masked card (first 6, stars, last 4), null for SBP payments. */
  fromCard: string | null;
  /** The 54-FZ refund receipt when the payment's shop fiscalizes (its lines add up to the RUB refunded). */
  receipt?: Receipt;
  /**
   * The refund gives back everything its payment took, nothing having been refunded before: the
   * register reverses the payment's own receipt (T-Bank's full Cancel carries no `Receipt`).
   */
  whole?: boolean;
  /**
   * When this operation was first handed to the provider (its `sent_at`); null or absent: this
   * is the first send. A repeat after a lost answer carries it for the connectors that need it
   * (every one gets it; each reads it as its provider requires): one refuses to repeat a creation
   * whose idempotency key is past its life, one whose provider does not deduplicate a repeat reads
   * the provider's state before repeating.
   */
  firstSentAt?: Date | null;
  /**
   * What this service knows of the payment's other refunds, in RUB, for a connector whose
   * provider's state shows only the payment, so a repeat is decided from it and these: `succeeded`,
   * those the provider confirmed; `open`, those handed to it whose outcome is not known yet;
   * `paidRub`, what the payer paid the provider for the payment. Absent: not known.
   */
  siblings?: { succeededRub: Decimal; openRub: Decimal; paidRub: Decimal | null };
}

export interface CreatePayout {
  /** Our payout id: the provider's idempotency key. */
  payoutId: string;
  accountType: 'CARD' | 'SBP';
  /**
   * Card digits, a card token (`token:<provider>:<token>`, read with cardDestination) or
   * +7XXXXXXXXXX, in clear only for the duration of the call.
   */
  account: string;
  cardHolder: string | null;
  bankMemberId: string | null;
  amount: Decimal;
  currency: string;
  /** See CreateRefund.firstSentAt. */
  firstSentAt?: Date | null;
}

/** An inbound notification as received (PROVIDERS.md "Inbound"). */
export interface InboundNotification {
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  ip: string;
}

/** What a verified notification says: the object, our id when known, and its new outcome. */
export type ParsedNotification =
  | {
    ok: true;
    /** Dedupe key (provider event or object id with its status). */
    eventKey: string;
    object: OperationType;
    ref: string;
    ourId: string | null;
    outcome: PaymentOutcome | OperationOutcome;
    /** What the provider expects as the answer body (T-Bank: `OK`). */
    reply: { status: number; body: string };
  }
  | {
    ok: true;
    eventKey: string;
    /** A register's report on a receipt (T-Bank's `RECEIPT` notification): no state changes; a failure is shown to an operator. */
    object: 'receipt';
    ref: string;
    ourId: string | null;
    receipt: RegisterReport;
    reply: { status: number; body: string };
  }
  | { ok: false; reason: string };

/**
 * What a provider's cash register said of one receipt: whose it was (the payment's, or a
 * refund's: `amount` RUB, which names the refund), and whether it failed, with the register's
 * own code and message.
 */
export interface RegisterReport { of: 'payment' | 'refund'; amount: Decimal | null; failed: boolean; code: string; message: string }

/** Call context: every call is made outside any database transaction and can be aborted. */
export interface CallContext { signal: AbortSignal }

/**
 * One configured provider account. Implementations talk to their provider only; they never open
 * a database transaction, and report a refusal before money could move as `refused`.
 */
export interface Connector {
  readonly name: string;
  /** Its plugin's kind (connectors/index.ts lists them; a test may add one). */
  readonly kind: string;
  readonly mode: ConnectorMode;
  readonly capabilities: Capabilities;
  createPayment(req: CreatePayment, ctx: CallContext): Promise<PaymentOutcome>;
  /** `data`: what this connector's answers kept of the payment (ProviderData); null or absent when nothing. */
  getPayment(q: { paymentId: string; ref: string | null; data?: ProviderData | null }, ctx: CallContext): Promise<PaymentOutcome>;
  /** Two-stage (`capabilities.twoStage`): captures `amount` of a held payment; `paid` with what was captured when done. */
  capturePayment?(req: SettleHold, ctx: CallContext): Promise<PaymentOutcome>;
  /** Two-stage: releases a held payment; `declined` (code `canceled`) when done. */
  cancelPayment?(req: SettleHold, ctx: CallContext): Promise<PaymentOutcome>;
  refund(req: CreateRefund, ctx: CallContext): Promise<OperationOutcome>;
  getRefund(q: { refundId: string; ref: string | null; data?: ProviderData | null }, ctx: CallContext): Promise<OperationOutcome>;
  createPayout(req: CreatePayout, ctx: CallContext): Promise<OperationOutcome>;
  getPayout(q: { payoutId: string; ref: string | null; data?: ProviderData | null }, ctx: CallContext): Promise<OperationOutcome>;
  parseNotification(n: InboundNotification, ctx: CallContext): Promise<ParsedNotification>;
  /**
   * A saved method revoked here is removed at the provider too (T-Bank `RemoveCard`), so nothing
   * can charge it; `customerKey` is what the saving payment was sent with (its payment id).
   * Absent: the provider has no such call (YooKassa keeps its token; we never use it again).
   */
  removeSavedMethod?(q: { providerId: string; customerKey: string }, ctx: CallContext): Promise<{ status: 'removed' | 'refused'; message: string }>;
  /**
   * The operator's "test connection": one harmless read with the connector's credentials (it
   * creates, changes and charges nothing), answering whether the provider accepted them.
   * A connector without it cannot be tested (the console says so).
   */
  checkConnection?(ctx: CallContext): Promise<ConnectionCheck>;
  /** The provider's widget that collects a payout card and gives a token for it, when this connector has one. */
  readonly payoutWidget?: PayoutWidget;
}

/** What a "test connection" learnt: `ok` when the provider answered and accepted the credentials. */
export interface ConnectionCheck { ok: boolean; message: string }

/** A connector class throws this for a refusal before money could move (e.g. ECONNREFUSED, 5xx). */
export class ConnectorRefusedError extends Error {
  constructor(readonly code: string, message: string) { super(message); }
}

/** Payment methods and payout destinations, as routing names them. */
export type Route = 'payment_card' | 'payment_sbp' | 'payout_card' | 'payout_sbp';
export const ROUTES: readonly Route[] = ['payment_card', 'payment_sbp', 'payout_card', 'payout_sbp'];

export function supports(c: Capabilities, route: Route): boolean {
  switch (route) {
    case 'payment_card': return c.payment.card;
    case 'payment_sbp': return c.payment.sbp;
    case 'payout_card': return c.payout.card;
    case 'payout_sbp': return c.payout.sbp;
  }
}
