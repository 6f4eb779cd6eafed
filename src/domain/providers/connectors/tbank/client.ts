import { createHash, timingSafeEqual } from 'node:crypto';
import type { BlockList } from 'node:net';
import { Decimal } from 'decimal.js';
import {
  ConnectorRefusedError, type CallContext, type Capabilities, type Connector, type ConnectorMode, type CreatePayment, type CreateRefund,
  type InboundNotification, type OperationOutcome, type ParsedNotification, type PaymentOutcome,
} from '../../connector.js';
import { ipAllowed, parseAllowList, providerFetch, rubOfRefund, type ProviderAnswer } from '../../provider-http.js';
import type { Receipt } from '../../../receipt/receipt.js';

/** T-Bank internet acquiring API v2 in production (test terminals: https://rest-api-test.tinkoff.ru/v2). */
export const TBANK_BASE_URL = 'https://securepay.tinkoff.ru/v2';

export interface TBankSettings {
  baseUrl: string;
  terminalKey: string;
  /** Used only to compute and check Tokens; never sent. */
  password: string;
  /** Source networks notifications may come from (comma separated); any source when absent. */
  allowedIps?: string;
}

/** The acquiring API takes payments and refunds; it has no payouts (routing skips it for those). */
export const TBANK_CAPABILITIES: Capabilities = {
  payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: false, sbp: false }, hostsCardForm: true,
};

/**
 * The `Token` of a request or a notification (developer.tbank.ru/eacq/intro/developer/token):
 * the values of the ROOT scalar fields plus `Password`, sorted by key, concatenated, SHA-256 as
 * lower-case hex. Nested objects and arrays (DATA, Receipt, Shops) and Token itself are left out.
 */
export function tbankToken(params: Record<string, unknown>, password: string): string {
  const pairs: [string, string][] = Object.entries(params)
    .filter(([k, v]) => k !== 'Token' && v !== undefined && v !== null && typeof v !== 'object')
    .map(([k, v]) => [k, String(v)]);
  pairs.push(['Password', password]);
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(pairs.map(([, v]) => v).join(''), 'utf8').digest('hex');
}

interface TbAnswer {
  Success?: boolean; ErrorCode?: string; Message?: string; Details?: string;
  Status?: string; PaymentId?: string | number; OrderId?: string; Amount?: number; PaymentURL?: string; Data?: string;
  OriginalAmount?: number; NewAmount?: number;
  Payments?: { PaymentId: string | number; Amount: number; Status: string }[];
}

/** Statuses of a payment still on its way (developer.tbank.ru/eacq/intro/developer/operation-statuses). */
const IN_PROGRESS = new Set([
  'NEW', 'FORM_SHOWED', 'PREAUTHORIZING', 'AUTHORIZING', '3DS_CHECKING', '3DS_CHECKED', 'PAY_CHECKING', 'AUTHORIZED',
  'CONFIRMING', 'CONFIRM_CHECKING',
]);
/** Final statuses in which nothing was charged. */
const DECLINED = new Set(['REJECTED', 'AUTH_FAIL', 'DEADLINE_EXPIRED', 'ATTEMPTS_EXPIRED', 'CANCELED', 'REVERSED']);
/** Statuses a Cancel (our refund) leads to: applied, or still running. */
const REFUND_DONE = new Set(['REFUNDED', 'PARTIAL_REFUNDED', 'PARTIAL_REVERSED']);
const REFUND_RUNNING = new Set(['REFUNDING', 'ASYNC_REFUNDING', 'REVERSING']);
/** Payment statuses after a refund: the payment itself was paid. */
const PAID = new Set(['CONFIRMED', 'REFUNDED', 'PARTIAL_REFUNDED', 'PARTIAL_REVERSED', 'REFUNDING', 'ASYNC_REFUNDING']);

/** ErrorCodes that are the same decline as the sandbox's codes (developer.tbank.ru/eacq/intro/errors). */
const DECLINE_CODES: Record<string, string> = { '1051': 'insufficient_funds', '101': '3d_secure_failed', '1001': 'card_declined' };
/** ErrorCodes that say our own configuration is wrong (a Cancel refused for them is asked again, not failed). */
const CONFIG_CODES = new Set(['204', '331']);

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

  constructor(readonly name: string, readonly mode: ConnectorMode, private readonly s: TBankSettings, private readonly publicBaseUrl: string) {
    this.allowList = s.allowedIps ? parseAllowList(s.allowedIps) : null;
  }

  /** Where T-Bank posts this connector's notifications (sent as NotificationURL in every Init). */
  get notificationUrl(): string { return `${this.publicBaseUrl}/providers/${this.name}/notifications`; }

  async createPayment(req: CreatePayment, ctx: CallContext): Promise<PaymentOutcome> {
    const back = req.returnUrl ?? `${this.publicBaseUrl}/`;
    const init = await this.send('Init', {
      Amount: kopecks(req.amount), OrderId: req.paymentId, Description: (req.description ?? `Payment ${req.paymentId}`).slice(0, 140),
      PayType: 'O', NotificationURL: this.notificationUrl, SuccessURL: back, FailURL: back,
      ...(req.receipt ? { Receipt: tbReceipt(req.receipt) } : {}),
    }, ctx);
    // A NEW payment moves no money until the payer acts on T-Bank's page or the QR, which the
    // payer reaches only from this answer: a refusal here, a 5xx included, is safe to route on.
    const a = answered(init, 'Init');
    const ref = String(a.PaymentId);
    if (req.method === 'card') {
      if (!a.PaymentURL) throw new ConnectorRefusedError('tbank:no_payment_url', 'tbank: Init answered no PaymentURL');
      return { status: 'action', action: { type: 'redirect', url: a.PaymentURL }, ref };
    }
    // The NEW payment of a refused GetQr is left to expire at RedirectDueDate: no payer has it.
    const qr = answered(await this.send('GetQr', { PaymentId: ref, DataType: 'PAYLOAD' }, ctx), 'GetQr');
    if (!qr.Data) throw new ConnectorRefusedError('tbank:no_qr', 'tbank: GetQr answered no Data');
    return { status: 'action', action: { type: 'sbp_qr', payload: qr.Data, links: [{ name: 'SBP', url: qr.Data }] }, ref };
  }

  async getPayment(q: { paymentId: string; ref: string | null }, ctx: CallContext): Promise<PaymentOutcome> {
    if (q.ref) {
      const a = answered(await this.send('GetState', { PaymentId: q.ref }, ctx), 'GetState', true);
      return reasonFollows(paymentOutcome(q.ref, a.Status ?? '', a.Amount, '0', a.Message));
    }
    // The Init answer was lost: the order (our payment id) tells whether it created a payment.
    const a = answered(await this.send('CheckOrder', { OrderId: q.paymentId }, ctx), 'CheckOrder', true);
    const list = a.Payments ?? [];
    // No payment for the order: Init never applied, and no payer ever had a form to pay on.
    if (list.length === 0) return { status: 'declined', code: 'tbank:not_found', message: 'T-Bank has no payment for this order.', ref: null };
    const p = list.find((x) => PAID.has(x.Status)) ?? list.find((x) => IN_PROGRESS.has(x.Status)) ?? list[list.length - 1]!;
    return reasonFollows(paymentOutcome(String(p.PaymentId), p.Status, p.Amount, '0', undefined));
  }

  async refund(req: CreateRefund, ctx: CallContext): Promise<OperationOutcome> {
    if (!req.paymentRef) return { status: 'failed', code: 'no_provider_ref', message: 'tbank: the payment has no PaymentId', ref: null };
    // The terminal took roubles: Cancel gives back the RUB share of the refund, in kopecks. A refund
    // of another currency admitted before that share was kept has none: failed, never guessed.
    const rub = rubOfRefund(req);
    if (!rub) return { status: 'failed', code: 'tbank:currency_not_supported', message: `tbank: no RUB amount for a refund in ${req.currency}`, ref: null };
    const r = await this.send('Cancel', {
      PaymentId: req.paymentRef, Amount: kopecks(rub), ExternalRequestId: req.refundId,
      // With an online cash register a refund goes by the receipt's lines (modern-openapi.json,
      // "Частичный возврат при подключенной онлайн-кассе": Cancel carries Amount and Receipt).
      ...(req.receipt ? { Receipt: tbReceipt(req.receipt) } : {}),
    }, ctx);
    // No answer, or a 5xx: the Cancel may have applied; asked again with the same ExternalRequestId.
    if (r.status !== 200 || !r.body) throw new Error(`tbank: Cancel answered HTTP ${r.status} (result unknown)`);
    const a = r.body as TbAnswer;
    if (a.Success !== true) {
      const code = a.ErrorCode ?? 'unknown';
      if (CONFIG_CODES.has(code)) throw new ConnectorRefusedError(`tbank:${code}`, `tbank: Cancel refused ${code} ${a.Message ?? ''} ${a.Details ?? ''}`.trim());
      return { status: 'failed', code: `tbank:${code}`, message: [a.Message, a.Details].filter(Boolean).join(' ') || 'T-Bank refused the refund.', ref: null };
    }
    return refundOutcome(refundRef(req.paymentRef, a.NewAmount), a.Status ?? '');
  }

  /**
   * T-Bank keeps no refund object: a refund's ref is `<PaymentId>:<NewAmount>`, its payment and
   * what its Cancel left of it (kopecks), which no other refund of the payment shares (what is
   * left only shrinks). A running one (REFUNDING) is followed through the payment's status: done
   * once the payment is refunded down to what this Cancel left, or below.
   */
  async getRefund(q: { refundId: string; ref: string | null }, ctx: CallContext): Promise<OperationOutcome> {
    if (!q.ref) throw new ConnectorRefusedError('tbank:no_ref', 'tbank: no PaymentId; repeat the Cancel with the same ExternalRequestId');
    const [paymentId, left] = q.ref.split(':');
    const a = answered(await this.send('GetState', { PaymentId: paymentId }, ctx), 'GetState', true);
    const done = left === undefined || (typeof a.Amount === 'number' && a.Amount <= Number(left));
    return done ? refundOutcome(q.ref, a.Status ?? '') : { status: 'pending', ref: q.ref };
  }

  async createPayout(): Promise<OperationOutcome> {
    throw new ConnectorRefusedError('tbank:no_payouts', 'tbank: the acquiring API makes no payouts');
  }

  async getPayout(): Promise<OperationOutcome> {
    throw new ConnectorRefusedError('tbank:no_payouts', 'tbank: the acquiring API makes no payouts');
  }

  /**
   * A notification is believed when its Token, recomputed over every root scalar field received
   * with this terminal's password, matches (constant time), and it names this terminal. Dedupe:
   * PaymentId and Status (and Amount for refunds, so two partial refunds differ). Answered `OK`.
   */
  async parseNotification(n: InboundNotification): Promise<ParsedNotification> {
    if (this.allowList && !ipAllowed(this.allowList, n.ip)) return { ok: false, reason: `source ${n.ip} is not in allowed_ips` };
    const b = n.body as Record<string, unknown> | null;
    if (!b || typeof b !== 'object' || Array.isArray(b)) return { ok: false, reason: 'not a T-Bank notification' };
    const expected = Buffer.from(tbankToken(b, this.s.password));
    const got = Buffer.from(typeof b.Token === 'string' ? b.Token.toLowerCase() : '');
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) return { ok: false, reason: 'wrong Token' };
    if (b.TerminalKey !== this.s.terminalKey) return { ok: false, reason: 'another terminal' };
    const status = typeof b.Status === 'string' ? b.Status : '';
    const id = b.PaymentId;
    if (status === '' || (typeof id !== 'string' && typeof id !== 'number') || typeof b.Amount !== 'number') return { ok: false, reason: 'no PaymentId, Status or Amount' };
    const ref = String(id);
    const reply = { status: 200, body: 'OK' };
    if (REFUND_DONE.has(status) || REFUND_RUNNING.has(status)) {
      // The refund itself: by our id when T-Bank echoes Cancel's ExternalRequestId, else by the
      // payment and what is left of it (`Amount`), which is what that refund's Cancel answered as
      // NewAmount. Never by the payment alone: two partial refunds of it may be in flight.
      const own = typeof b.ExternalRequestId === 'string' && b.ExternalRequestId !== '' ? b.ExternalRequestId : null;
      const rref = refundRef(ref, b.Amount);
      return { ok: true, eventKey: `${ref}:${status}:${b.Amount}`, object: 'refund', ref: rref, ourId: own, outcome: refundOutcome(rref, status), reply };
    }
    const outcome = paymentOutcome(ref, status, b.Amount, typeof b.ErrorCode === 'string' ? b.ErrorCode : '0', typeof b.Message === 'string' ? b.Message : undefined);
    return { ok: true, eventKey: `${ref}:${status}`, object: 'payment', ref, ourId: typeof b.OrderId === 'string' ? b.OrderId : null, outcome, reply };
  }

  // ---------------------------------------------------------------- HTTP

  private send(method: string, params: Record<string, unknown>, ctx: CallContext): Promise<ProviderAnswer> {
    const body = { TerminalKey: this.s.terminalKey, ...params };
    const signed = { ...body, Token: tbankToken(body, this.s.password) };
    return providerFetch('tbank', `${this.s.baseUrl.replace(/\/+$/, '')}/${method}`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(signed),
    }, ctx.signal);
  }
}

/**
 * A 200 answer with `Success: true`; anything else is a refusal with T-Bank's ErrorCode
 * (`tbank:204`), or `tbank:http_<status>` for an answer that is not T-Bank's JSON.
 */
function answered(r: ProviderAnswer, method: string, read = false): TbAnswer {
  const a = r.body as TbAnswer | null;
  if (r.status !== 200 || !a || typeof a !== 'object') throw new ConnectorRefusedError(`tbank:http_${r.status}`, `tbank: ${method} answered HTTP ${r.status}`);
  if (a.Success !== true) {
    const code = a.ErrorCode ?? 'unknown';
    throw new ConnectorRefusedError(`tbank:${code}`, `tbank: ${method}${read ? ' (read)' : ''} refused ${code}: ${[a.Message, a.Details].filter(Boolean).join(' ')}`);
  }
  return a;
}

function paymentOutcome(ref: string, status: string, amount: number | undefined, errorCode: string, message: string | undefined): PaymentOutcome {
  if (PAID.has(status)) return { status: 'paid', amountReceived: new Decimal(amount ?? 0).div(100), ref };
  if (DECLINED.has(status)) {
    const code = errorCode !== '0' && errorCode !== ''
      ? DECLINE_CODES[errorCode] ?? `tbank:${errorCode}`
      : status === 'DEADLINE_EXPIRED' || status === 'ATTEMPTS_EXPIRED' ? 'expired' : `tbank:${status.toLowerCase()}`;
    return { status: 'declined', code, message: message ? `T-Bank: ${status} (${message})` : `T-Bank: ${status}`, ref };
  }
  // In progress, or a status this version does not know: nothing is guessed.
  return { status: 'pending', ref };
}

/**
 * GetState's and CheckOrder's ErrorCode is their own request's ("0"): T-Bank sends a decline's
 * reason (1001, 1051...) only in the notification. A decline read there, other than an expiry,
 * waits for it (docs/decisions.md "A T-Bank decline waits for its reason").
 */
function reasonFollows(o: PaymentOutcome): PaymentOutcome {
  return o.status === 'declined' && o.code !== 'expired' ? { ...o, reasonFollows: true } : o;
}

function refundOutcome(ref: string, status: string): OperationOutcome {
  if (REFUND_DONE.has(status) || status === 'REVERSED' || status === 'CANCELED') return { status: 'succeeded', ref };
  return { status: 'pending', ref };
}

/** A refund's reference: its payment and what its Cancel left of it (just the PaymentId when T-Bank did not say). */
function refundRef(paymentId: string, left: unknown): string {
  return typeof left === 'number' && Number.isSafeInteger(left) ? `${paymentId}:${left}` : paymentId;
}

/** YooKassa's tax_system_code 1..6 as T-Bank's `Taxation` (the same six systems, in that order). */
const TAXATION: Record<number, string> = { 1: 'osn', 2: 'usn_income', 3: 'usn_income_outcome', 4: 'envd', 5: 'esn', 6: 'patent' };
/** YooKassa's vat_code 1..6 as T-Bank's `Tax` (none, 0 %, 10 %, 20 %, 10/110, 20/120). */
const TAX: Record<number, string> = { 1: 'none', 2: 'vat0', 3: 'vat10', 4: 'vat20', 5: 'vat110', 6: 'vat120' };

/**
 * The receipt as T-Bank takes it in Init and Cancel (kravetsone/t-kassa-api modern-openapi.json,
 * schemas Receipt_FFD_105 and Items_FFD_105): `Email` or `Phone` (+{digits}), `Taxation`, `Items`
 * [{Name (<= 128), Price (kopecks), Quantity, Amount (kopecks, = Price x Quantity), Tax,
 * PaymentMethod, PaymentObject}]. The Items' Amounts add up to the operation's `Amount`. Nested:
 * never part of the Token (tbankToken; tinkoff-asdk-android AcquiringRequest.kt ignores DATA,
 * Receipt, Receipts and Shops when signing).
 */
export function tbReceipt(r: Receipt): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (r.customer.email) out.Email = r.customer.email;
  if (r.customer.phone) out.Phone = r.customer.phone.startsWith('+') ? r.customer.phone : `+${r.customer.phone}`;
  out.Taxation = TAXATION[r.taxSystemCode];
  out.Items = r.lines.map((l) => ({
    Name: l.name, Price: kopecks(l.price), Quantity: l.quantity.toNumber(), Amount: kopecks(l.amount), Tax: TAX[l.vatCode],
    PaymentMethod: l.paymentMode === 'partial_prepayment' ? 'prepayment' : l.paymentMode, PaymentObject: l.paymentSubject,
  }));
  return out;
}

/** Kopecks as T-Bank's integer `Amount`, from the Decimal (never through a float). */
function kopecks(d: Decimal): number {
  const k = d.mul(100);
  if (!k.isInteger() || k.lte(0) || !Number.isSafeInteger(k.toNumber())) {
    throw new ConnectorRefusedError('tbank:invalid_amount', `tbank: ${d.toString()} is not an amount in kopecks`);
  }
  return k.toNumber();
}
