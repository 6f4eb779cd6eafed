import { createHash } from 'node:crypto';
import {
  EmulatorServer, MisbehaviourQueue, Notifier, escapeHtml, hex, html, isNotificationSwitch, json, parseForm, redirect,
  type Answer, type Misbehaviour, type Req,
} from './common.js';

/**
 * An emulator of YooKassa API v3 (payments, refunds, payouts, notifications), written from the
 * public documentation. Sources, cited as [n] next to each rule:
 * [1] https://yookassa.ru/developers/using-api/basics (HTTP Basic shopId:secretKey, JSON, Idempotence-Key on POST)
 * [2] https://yookassa.ru/developers/using-api/response-handling/http-codes (400 invalid_request,
 *     401 invalid_credentials, 403 forbidden, 404 not_found, 429 too_many_requests, 500 internal_server_error)
 * [3] https://yookassa.ru/developers/payment-acceptance/after-the-payment/declined-payments
 *     (cancellation_details.party: merchant | yoo_money | payment_network; reasons)
 * [4] https://yookassa.ru/developers/payment-acceptance/integration-scenarios/manual-integration/other/sbp
 *     (type sbp; confirmation Redirect and QR code; pay within 1 hour; no two-stage; full and partial refunds)
 * [5] https://yookassa.ru/developers/payouts/making-payouts/sbp (payout by phone + SBP participant; 1..500 000 RUB)
 * [6] https://yookassa.ru/developers/payouts/scenario-extensions/recipient-check (reason recipient_check_failed)
 * [7] yoomoney/yookassa-sdk-php lib/Client.php and yookassa-sdk-python (request shapes: confirmation
 *     {type: redirect, return_url}, capture, payment_method_data, payout_destination_data.card.number)
 * [11] GET /me, the shop's settings (account_id, test, fiscalization_enabled, payment_methods, status): what the
 *     official SDKs call after configuring the credentials ("проверить корректность данных", docs/examples/01-configuration.md)
 * [9] the error body {type: "error", id, code, description, parameter}: a real answer quoted in a
 *     public Java DTO (ErrorYooKassaResponse) and SijyKijy/YooKassa-Prototype Models/Error.cs
 * [8] an answer example on [2]: {"id":"29f31de9-000f-5000-a000-...","status":"pending","amount":{"value":"2.00","currency":"RUB"},
 *     "recipient":{"account_id","gateway_id"},...} and a real answer quoted on pravtreba.ru
 *     (confirmation {type: redirect, confirmation_url}, test, paid, refundable, metadata)
 * [10] yookassa.ru/developers/payment-acceptance/receipts/54fz/yoomoney/basics and
 *     .../receipts/54fz/parameters-values: with 54-FZ on in the shop's settings a payment and a refund
 *     carry `receipt` {customer {email | phone}, items [{description <= 128, quantity, amount {value,
 *     currency} (the price of ONE unit), vat_code, payment_subject, payment_mode}], tax_system_code};
 *     tax_system_code 1..6, vat_code 1..12 (7..10 the 5 % and 7 % rates of 2025, 11 and 12 the 22 % and
 *     22/122 of 2026: .../parameters-values, "Ставка НДС", checked 2026-11-28); with an FFD 1.2
 *     register every item carries `measure` (.../parameters-values, "Единица измерения": piece, gram,
 *     kilogram, ton, centimeter, decimeter, meter, square_centimeter, square_decimeter, square_meter,
 *     milliliter, liter, cubic_meter, kilowatt_hour, gigacalorie, day, hour, minute, second, kilobyte,
 *     megabyte, gigabyte, terabyte, another); with "Чеки от ЮKassa" (.../receipts/54fz/yoomoney/basics:
 *     "пока есть только один способ доставки чека пользователю — на электронную почту. Отправка чека
 *     в смс недоступна") the customer needs an e-mail (EMULATOR: refused without one, the stricter
 *     reading); the receipt's total (sum of amount x quantity) equals the
 *     payment's (refund's) amount. A missing or wrong receipt is 400 invalid_request with
 *     description "Receipt is missing or illegal" and parameter "receipt" (the refusal named in
 *     issue 29, in the error body of [2][9]).
 * [11] HTTP 202: the request is accepted and still processing; repeat it with the same data and
 *     Idempotence-Key after `retry_after` ms from the body. yoomoney/yookassa-sdk-php
 *     lib/Client/BaseClient.php execute() repeats a request answered 202 (or 500) with the same
 *     headers, waiting delay(): the body's `retry_after` in ms; yookassa-sdk-python
 *     src/yookassa/domain/exceptions/response_processing_error.py names the 202 answer. The
 *     operation goes on: a repeat with the same key gets its result; one with a new key makes a
 *     second object (a double payout). EMULATOR: the body's `type` "processing" and description.
 * [12] [2]: 429 too_many_requests, the request is refused for the rate and not processed; Retry-After
 *     is not documented (EMULATOR: sent only when a test asks for it).
 * [13] https://yookassa.ru/developers/payouts/making-payouts/bank-card/using-raw-data: payouts by
 *     card number need the gateway owner's PCI DSS certificate and YooKassa enabling it ("Если у вас
 *     нет сертификата PCI DSS, используйте виджет для выплат"); .../testing-and-going-live/testing/bank-card:
 *     raw numbers only on a gateway the manager configured for them. Which error a gateway not
 *     enabled answers is not documented: EMULATOR 403 forbidden ([2]: "Не хватает прав для
 *     совершения операции"), parameter payout_destination_data.card.number.
 * [14] https://yookassa.ru/developers/payouts/making-payouts/bank-card/using-payout-widget/implementing-widget
 *     and .../basics: the payout widget, script https://yookassa.ru/payouts-data/3.1.0/widget.js,
 *     `new window.PayoutsData({type: 'payout', account_id: <agentId>, success_callback, error_callback})`,
 *     `render(<container id>)` (a Promise) and `clearListeners()`; the card number stays with
 *     YooKassa, success_callback gets the card's synonym `payout_token`, its mask (first6, last4)
 *     and details for display (card_type, issuer_name, issuer_country); a synonym may be used for
 *     several payouts. .../making-payouts-with-synonym: POST /v3/payouts with `payout_token`.
 *     yoomoney/yookassa-sdk-python src/yookassa/domain/request/payout_request.py validate():
 *     exactly one of payout_token and payout_destination_data. EMULATOR: the widget is a stand-in
 *     (an iframe of this server posting the result to its parent); an unknown synonym is 400
 *     invalid_request, parameter payout_token.
 * [15] https://yookassa.ru/developers/payment-acceptance/scenario-extensions/recurring-payments/save-payment-method/save-during-payment
 *     (saving while paying: `save_payment_method: true` on POST /v3/payments; once the payment succeeds its
 *     `payment_method.saved` is true and `payment_method.id` is what later charges use) and .../pay-without-saving
 *     (`save_payment_method: false`, or absent: nothing is saved). yookassa-sdk-python
 *     src/yookassa/domain/request/payment_request.py: save_payment_method a bool.
 * [16] https://yookassa.ru/developers/payment-acceptance/scenario-extensions/recurring-payments/pay-with-saved
 *     (an autopayment: POST /v3/payments with `amount`, `capture`, `payment_method_id` and no confirmation; it
 *     needs no payer, and `payment_method` of the answer shows the saved method). yookassa-sdk-php
 *     lib/Request/Payments/CreatePaymentRequest.php validate(): payment_method_id and payment_method_data are
 *     never sent together. EMULATOR: an unknown (or never saved) payment_method_id is 400 invalid_request,
 *     parameter payment_method_id; the saved card's outcome follows the card table.
 * [17] yoomoney/yookassa-sdk-php lib/Client/BaseClient.php execute(): a 500 is repeated like a 202, with
 *     the same request and Idempotence-Key ([2]: 500 "the result is unknown"); YooKassa may have
 *     applied it. EMULATOR switch `status5xxAfterApply`: the creation is applied (and notified) and
 *     answered 500 to it and to a number of repeats, then the stored result.
 * [18] [2] 429 too_many_requests; the wait YooKassa asks for is the body's `retry_after` (ms), which
 *     the PHP SDK's delay() reads from any answer it repeats, or a Retry-After header (EMULATOR: the
 *     test chooses which are sent).
 * [19] https://yookassa.ru/developers/payment-acceptance/after-the-payment/declined-payments:
 *     cancellation_details.reason `permission_revoked`, "the user revoked the permission for
 *     autopayments": an autopayment with that payment_method_id is canceled. EMULATOR: party
 *     yoo_money; revokePermission(id) is the payer's withdrawal.
 * Anything marked EMULATOR is this emulator's own choice where the documentation is silent.
 */

/** [10]: payment_subject values (FFD 1.05 and 1.2) and payment_mode values. */
/** [10]: `measure` (FFD 1.2), YooKassa's list. */
const YK_MEASURES = new Set([
  'piece', 'gram', 'kilogram', 'ton', 'centimeter', 'decimeter', 'meter', 'square_centimeter', 'square_decimeter', 'square_meter',
  'milliliter', 'liter', 'cubic_meter', 'kilowatt_hour', 'gigacalorie', 'day', 'hour', 'minute', 'second', 'kilobyte', 'megabyte',
  'gigabyte', 'terabyte', 'another',
]);
const YK_PAYMENT_SUBJECTS = new Set([
  'commodity', 'excise', 'job', 'service', 'payment', 'casino', 'gambling_bet', 'gambling_prize', 'lottery', 'lottery_prize',
  'intellectual_activity', 'agent_commission', 'property_right', 'non_operating_gain', 'insurance_premium', 'sales_tax', 'resort_fee',
  'composite', 'another', 'marked', 'non_marked', 'marked_excise', 'non_marked_excise', 'fine', 'tax', 'lien', 'cost', 'agent_withdrawals',
  'pension_insurance_without_payouts', 'pension_insurance_with_payouts', 'health_insurance_without_payouts', 'health_insurance_with_payouts',
  'health_insurance', 'casino_chips', 'casino_payment',
]);
const YK_PAYMENT_MODES = new Set(['full_prepayment', 'partial_prepayment', 'advance', 'full_payment', 'partial_payment', 'credit', 'credit_payment']);

export type Money = { value: string; currency: string };
export type PaymentStatus = 'pending' | 'waiting_for_capture' | 'succeeded' | 'canceled';
export interface CancellationDetails { party: 'merchant' | 'yoo_money' | 'payment_network' | 'payout_network'; reason: string }

export interface YkPayment {
  id: string;
  status: PaymentStatus;
  amount: Money;
  description?: string;
  recipient: { account_id: string; gateway_id: string };
  payment_method?: Record<string, unknown>;
  captured_at?: string;
  created_at: string;
  expires_at?: string;
  confirmation?: Record<string, unknown>;
  test: boolean;
  refunded_amount?: Money;
  paid: boolean;
  refundable: boolean;
  metadata: Record<string, string>;
  cancellation_details?: CancellationDetails;
  authorization_details?: Record<string, unknown>;
  // Emulator state, never answered (stripped in view()).
  _capture: boolean;
  _method?: 'bank_card' | 'sbp';
  _returnUrl?: string;
  _threeDs?: boolean;
  /** [15]: save_payment_method was true: the method is saved when the payment succeeds. */
  _save?: boolean;
}

export interface YkRefund {
  id: string; payment_id: string; status: 'pending' | 'succeeded' | 'canceled'; amount: Money;
  created_at: string; description?: string; cancellation_details?: CancellationDetails;
}

export interface YkPayout {
  id: string; amount: Money; status: 'pending' | 'succeeded' | 'canceled'; payout_destination: Record<string, unknown>;
  description?: string; created_at: string; succeeded_at?: string; test: boolean; metadata: Record<string, string>;
  cancellation_details?: CancellationDetails;
  /** Emulator state, never answered: how the request named the card (or `sbp`). */
  _by: 'payout_token' | 'card_number' | 'sbp';
}

/**
 * EMULATOR card table (YooKassa's test shop has its own; 5555 5555 5555 4477 and 4444 are the
 * Mastercard test numbers its SDK docs and integrators quote [7]; the 4000... numbers are the
 * ones our own sandbox uses, so one table works for both).
 */
export const YK_CARDS: Record<string, { outcome: 'success' | '3ds' | 'decline'; reason?: string }> = {
  '5555555555554444': { outcome: 'success' },
  '4242424242424242': { outcome: 'success' },
  '5555555555554477': { outcome: '3ds' },
  '4000002760003184': { outcome: '3ds' },
  '4000000000000002': { outcome: 'decline', reason: 'general_decline' },
  '4000000000009995': { outcome: 'decline', reason: 'insufficient_funds' },
};

/** EMULATOR payout table: a card or SBP phone that the payout network refuses. */
export const YK_PAYOUT_FAILS: Record<string, string> = {
  '4000000000000002': 'general_decline',
  '79000000002': 'recipient_not_found',
};

/** EMULATOR: a few SBP participants for GET /v3/sbp_banks [5] (ids are 12 digits in SBP). */
export const YK_SBP_BANKS = [
  { bank_id: '100000000111', name: 'Сбербанк', bic: '044525225' },
  { bank_id: '100000000004', name: 'Т-Банк', bic: '044525974' },
  { bank_id: '100000000008', name: 'Альфа-Банк', bic: '044525593' },
];

export interface YooKassaOptions {
  notifyUrl?: string;
  shopId?: string;
  secretKey?: string;
  payoutAgentId?: string;
  payoutSecretKey?: string;
  /** Payouts settle by themselves after this many ms (default 0: on the next tick); null: only settlePayout(). */
  payoutSettleMs?: number | null;
  retryBaseMs?: number;
  maxAttempts?: number;
  /** [10]: the shop sends receipts through YooKassa (54-FZ on): payments and refunds need `receipt`. */
  fiscalization?: boolean;
  /** [10]: the shop's register works to FFD 1.2: every receipt item needs `measure`. */
  ffd12?: boolean;
  /** [10]: the shop's receipts are "Чеки от ЮKassa": e-mail only. */
  ownReceipts?: boolean;
  /** [13]: the payout gateway takes card numbers (its owner is PCI DSS certified); default false: payout_token only. */
  payoutPciDss?: boolean;
}

/** [14]: what the payout widget hands the page for a card (its synonym and what to show). */
export interface YkCardSynonym { payout_token: string; first6: string; last4: string; card_type: string; issuer_name: string; issuer_country: string }

export type PayerAction = 'pay' | 'decline' | '3ds-confirm' | '3ds-fail' | 'sbp-confirm' | 'cancel' | 'expire';

// [1]: "the API returns the result of the original request" for a repeated key with the same body;
// keys live 24 h. The key is at most 64 characters (SDK docs; EMULATOR: longer is refused).
// `processing`: [11] 202 answers still owed to repeats of this key before the stored result.
// `failing`: [17] 500 answers still owed to repeats of this key before the stored result.
interface IdemRecord { hash: string; answer: Answer; processing: number; retryAfterMs: number; failing: number }

const MONEY_RE = /^\d{1,17}(\.\d{1,2})?$/;

export class YooKassaEmulator {
  readonly payments = new Map<string, YkPayment>();
  /** [15]: methods saved by payments (by payment_method.id), with the card they hold. */
  readonly savedMethods = new Map<string, { id: string; card: string; payment: string }>();
  /** EMULATOR state: the card number a payer paid a payment with (what a saved method charges). */
  private readonly cardOf = new Map<string, string>();
  readonly refunds = new Map<string, YkRefund>();
  readonly payouts = new Map<string, YkPayout>();
  readonly requests: { method: string; path: string; status: number; at: number }[] = [];
  /** [10]: whether the shop is fiscalized (settable by tests). */
  fiscalization: boolean;
  /** [13]: whether the payout gateway takes card numbers (settable by tests). */
  payoutPciDss: boolean;
  /** [14]: the payout widget's synonyms and the card numbers behind them (never answered by the API). */
  readonly payoutTokens = new Map<string, { number: string } & YkCardSynonym>();
  /** Every receipt accepted, with the object it came with (what the online cash register got). */
  readonly receipts: { object: 'payment' | 'refund' | 'capture'; id: string; receipt: Record<string, unknown> }[] = [];
  /** Every POST received with its Idempotence-Key and raw body, repeats included (what a repeat sent, byte for byte). */
  readonly posts: { path: string; key: string; raw: string }[] = [];
  readonly shopId: string;
  readonly secretKey: string;
  readonly payoutAgentId: string;
  readonly payoutSecretKey: string;
  notifyUrl?: string;
  private readonly http: EmulatorServer;
  private readonly mis = new MisbehaviourQueue();
  readonly notifier: Notifier;
  private readonly idem = new Map<string, IdemRecord>();
  /** When each 429 of a rate-limit switch was answered (a test measures the client's wait after it). */
  readonly limitedAt: number[] = [];
  /** [19]: saved methods whose payer withdrew the permission to charge them. */
  readonly revokedPermissions = new Set<string>();
  private readonly opts: YooKassaOptions;
  private timers = new Set<NodeJS.Timeout>();

  private constructor(opts: YooKassaOptions) {
    this.opts = opts;
    this.shopId = opts.shopId ?? '100500';
    this.secretKey = opts.secretKey ?? 'test_secret_key';
    this.payoutAgentId = opts.payoutAgentId ?? '505050';
    this.payoutSecretKey = opts.payoutSecretKey ?? 'test_payout_secret';
    this.notifyUrl = opts.notifyUrl;
    this.fiscalization = opts.fiscalization ?? false;
    this.payoutPciDss = opts.payoutPciDss ?? false;
    // YooKassa repeats a notification until it gets HTTP 200 (webhooks page; EMULATOR: bounded attempts).
    this.notifier = new Notifier({ accepts: (s) => s === 200, retryBaseMs: opts.retryBaseMs, maxAttempts: opts.maxAttempts });
    this.http = new EmulatorServer((r) => this.route(r));
  }

  static async start(opts: YooKassaOptions = {}) {
    const e = new YooKassaEmulator(opts);
    await e.http.start();
    return e;
  }

  get baseUrl() { return this.http.baseUrl; }
  /** What a connector puts in settings.base_url. */
  get apiUrl() { return `${this.http.baseUrl}/v3`; }

  async stop() {
    this.notifier.stop();
    for (const t of this.timers) clearTimeout(t);
    await this.http.stop();
  }

  misbehave(m: Misbehaviour) {
    if (isNotificationSwitch(m)) this.notifier.set(m); else this.mis.add(m);
  }

  clearMisbehaviour() { this.mis.clear(); this.notifier.mode = 'normal'; }

  /** [19]: the payer withdraws the permission to charge a saved method. */
  revokePermission(methodId: string) { this.revokedPermissions.add(methodId); }

  flushNotifications() { this.notifier.flushNotifications(); }

  idle() { return this.notifier.idle(); }

  /** The object as the API answers it. */
  view<T extends object>(o: T): Record<string, unknown> {
    return Object.fromEntries(Object.entries(o).filter(([k, v]) => !k.startsWith('_') && v !== undefined));
  }

  // ---------------------------------------------------------------- routing

  private async route(r: Req): Promise<Answer | null> {
    const a = await this.dispatch(r);
    if (a) this.requests.push({ method: r.method, path: r.path, status: a.status, at: Date.now() });
    return a;
  }

  private async dispatch(r: Req): Promise<Answer | null> {
    const p = r.path;
    if (p.startsWith('/checkout/') || p.startsWith('/qr/')) return this.page(r);
    if (p.startsWith('/payouts-data/')) return this.payoutWidget(r);
    if (!p.startsWith('/v3/')) return this.error(404, 'not_found', 'Unknown path');
    const rest = p.slice(4).split('/');
    const isPayout = rest[0] === 'payouts' || rest[0] === 'sbp_banks';
    // [1]: HTTP Basic with the shop's id and secret key; payouts use the gateway's agentId and its own key.
    const auth = this.auth(r, isPayout);
    if (auth) return auth;
    // [12]: a rate limit refuses before anything is looked at or applied.
    const limited = this.mis.take(this.opName(r.method, rest), (x) => !!x.status429);
    if (limited) {
      const l = limited.status429!;
      // [18]: the wait asked for, as the body's retry_after (ms) and/or the Retry-After header.
      const a = l.retryAfterMs === undefined ? this.error(429, 'too_many_requests', 'Too many requests. Reduce the request rate')
        : json(429, { type: 'error', id: uuidLike('0000'), code: 'too_many_requests', description: 'Too many requests. Reduce the request rate', retry_after: l.retryAfterMs });
      this.limitedAt.push(Date.now());
      return l.retryAfter === undefined ? a : { ...a, headers: { 'retry-after': String(l.retryAfter) } };
    }
    if (r.method === 'POST') {
      // [1]: every POST carries Idempotence-Key.
      const key = r.headers['idempotence-key'];
      if (typeof key !== 'string' || key === '') return this.error(400, 'invalid_request', 'Idempotence key isn\'t specified. Specify the Idempotence-Key header', 'Idempotence-Key');
      if (key.length > 64) return this.error(400, 'invalid_request', 'Idempotence key is too long. Maximum length is 64 characters', 'Idempotence-Key');
      this.posts.push({ path: r.path, key, raw: r.raw });
      const scope = `${isPayout ? this.payoutAgentId : this.shopId}:${key}`;
      const hash = createHash('sha256').update(`${r.path}\n${r.raw}`).digest('hex');
      const seen = this.idem.get(scope);
      if (seen) {
        if (seen.hash === hash) {
          // [11]: still processing: the repeat is answered 202 again until the result is ready.
          if (seen.processing > 0) { seen.processing -= 1; return this.processing(seen.retryAfterMs); }
          // [17]: applied, and still answered "result unknown" to this repeat.
          if (seen.failing > 0) { seen.failing -= 1; return this.error(500, 'internal_server_error', 'Internal server error'); }
          return seen.answer;
        }
        // [1] promises the original result only for the same parameters; EMULATOR (unconfirmed):
        // another body under the same key is 400 invalid_request.
        return this.error(400, 'invalid_request', 'Idempotence key duplicated. The request with this key was made with other parameters', 'Idempotence-Key');
      }
      let body: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(r.raw || 'null');
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        body = parsed as Record<string, unknown>;
      } catch {
        return this.error(400, 'invalid_request', 'Request body is not valid JSON');
      }
      const op = this.opName(r.method, rest);
      const m = this.mis.take(op, (x) => !x.status429);
      const answer = await this.http.guarded(r, m, (s) => this.error(s, 'internal_server_error', 'Internal server error'), () => {
        const applied = this.post(rest, body);
        // Stored before the answer leaves, so a retry after a lost answer replays it.
        // [2]: a 5xx means "the result is unknown" and is not kept; a 4xx or 200 is final.
        if (applied.status >= 500) return applied;
        const rec: IdemRecord = { hash, answer: applied, processing: 0, retryAfterMs: m?.processing?.retryAfterMs ?? 50, failing: 0 };
        this.idem.set(scope, rec);
        // [17]: applied (and notified), but answered 500; the first of `answers` 500s is this one.
        if (m?.status5xxAfterApply && applied.status === 200) {
          rec.failing = (m.status5xxAfterApply.answers ?? 1) - 1;
          return this.error(500, 'internal_server_error', 'Internal server error');
        }
        // [11]: applied, but answered "processing"; the first of `answers` 202s is this one.
        if (m?.processing && applied.status === 200) { rec.processing = (m.processing.answers ?? 1) - 1; return this.processing(rec.retryAfterMs); }
        return applied;
      });
      return answer;
    }
    if (r.method === 'GET') {
      const op = this.opName(r.method, rest);
      const m = this.mis.take(op, (x) => !x.status429);
      return this.http.guarded(r, m, (s) => this.error(s, 'internal_server_error', 'Internal server error'), () => this.get(rest));
    }
    return { status: 405, body: '' };
  }

  private opName(method: string, rest: string[]) {
    const [res, id, verb] = rest;
    if (method === 'GET') return `${res}.get`;
    if (verb) return `${res}.${verb}`;
    return id ? `${res}.${id}` : `${res}.create`;
  }

  private auth(r: Req, payout: boolean): Answer | null {
    const h = r.headers.authorization ?? '';
    const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(h);
    const [user, pass] = m ? Buffer.from(m[1]!, 'base64').toString('utf8').split(':', 2) : [];
    const ok = payout
      ? user === this.payoutAgentId && pass === this.payoutSecretKey
      : user === this.shopId && pass === this.secretKey;
    if (ok) return null;
    // [2]: 401 invalid_credentials.
    return this.error(401, 'invalid_credentials', 'Error in shopId or secret key. Check their validity. You can reissue the key in the Merchant Profile', 'Authorization');
  }

  /** [11]: 202, processing; repeat with the same key after `retry_after` ms. */
  private processing(retryAfterMs: number): Answer {
    return json(202, { type: 'processing', description: 'Request accepted and is being processed. Repeat it with the same Idempotence-Key', retry_after: retryAfterMs });
  }

  /** [2][9]: the error body is {type: "error", id, code, description, parameter?}. */
  private error(status: number, code: string, description: string, parameter?: string): Answer {
    return json(status, { type: 'error', id: uuidLike('0000'), code, description, ...(parameter ? { parameter } : {}) });
  }

  private post(rest: string[], b: Record<string, unknown>): Answer {
    const [res, id, verb] = rest;
    if (res === 'payments' && !id) return this.createPayment(b);
    if (res === 'payments' && id && verb === 'capture') return this.capture(id, b);
    if (res === 'payments' && id && verb === 'cancel') return this.cancel(id);
    if (res === 'refunds' && !id) return this.createRefund(b);
    if (res === 'payouts' && !id) return this.createPayout(b);
    return this.error(404, 'not_found', 'Unknown path');
  }

  private get(rest: string[]): Answer {
    const [res, id] = rest;
    if (res === 'payments' && id) {
      const p = this.payments.get(id);
      // [2]: an unknown object is 404 not_found.
      return p ? json(200, this.view(p)) : this.error(404, 'not_found', 'Incorrect payment_id. Payment doesn\'t exist or access denied. Specify the payment ID created in your store.', 'payment_id');
    }
    if (res === 'refunds' && id) {
      const x = this.refunds.get(id);
      return x ? json(200, this.view(x)) : this.error(404, 'not_found', 'Incorrect refund_id. Refund doesn\'t exist or access denied.', 'refund_id');
    }
    if (res === 'payouts' && id) {
      const x = this.payouts.get(id);
      return x ? json(200, this.view(x)) : this.error(404, 'not_found', 'Incorrect payout_id. Payout doesn\'t exist or access denied.', 'payout_id');
    }
    if (res === 'sbp_banks') return json(200, { type: 'list', items: YK_SBP_BANKS });
    // [11] GET /me: the shop's own settings (what the SDKs call to check credentials); a test shop here.
    if (res === 'me' && !id) return json(200, { account_id: this.shopId, test: true, fiscalization_enabled: false, payment_methods: ['bank_card', 'sbp'], status: 'enabled' });
    return this.error(404, 'not_found', 'Unknown path');
  }

  // ---------------------------------------------------------------- validation

  /** amount {value: "100.00", currency: "RUB"}: value a decimal string, point separator, 2 places at most [8]. */
  private money(v: unknown, param: string, min = 0.01): Money | Answer {
    if (!v || typeof v !== 'object') return this.error(400, 'invalid_request', `Parameter ${param} is missing or invalid`, param);
    const { value, currency } = v as Record<string, unknown>;
    // EMULATOR (brief): a JSON number is refused; the docs show the value as a string everywhere.
    if (typeof value !== 'string' || !MONEY_RE.test(value)) {
      return this.error(400, 'invalid_request', `Invalid ${param}.value: a string with a point and at most 2 decimals is expected, e.g. "100.00"`, `${param}.value`);
    }
    if (Number(value) < min) return this.error(400, 'invalid_request', `Invalid ${param}.value: the amount is too small`, `${param}.value`);
    if (currency !== 'RUB') return this.error(400, 'invalid_request', `Invalid ${param}.currency: only RUB is supported by this shop`, `${param}.currency`);
    return { value: toMoney(value), currency: 'RUB' };
  }

  /**
   * [10]: with 54-FZ on, a payment or refund without a valid receipt is refused, 400
   * invalid_request "Receipt is missing or illegal" (parameter receipt). Checked: a customer
   * e-mail or phone, 1..100 items (EMULATOR: the count bound), each with description 1..128,
   * a positive quantity (a JSON number; EMULATOR: the stricter reading of the OpenAPI type),
   * amount as money, vat_code 1..12, `measure` on an FFD 1.2 register, an e-mail for YooKassa's own receipts, payment_subject and payment_mode from [10]'s lists,
   * tax_system_code 1..6 when given, and the total equal to the operation's amount to the kopeck.
   * Without 54-FZ a receipt sent is ignored (EMULATOR: not checked).
   */
  private receiptRefusal(raw: unknown, amount: Money): Answer | null {
    if (!this.fiscalization) return null;
    const illegal = () => this.error(400, 'invalid_request', 'Receipt is missing or illegal', 'receipt');
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return illegal();
    const r = raw as Record<string, unknown>;
    const c = r.customer as Record<string, unknown> | undefined;
    const email = c && typeof c.email === 'string' && /^[^\s@]+@[^\s@]+$/.test(c.email);
    const phone = c && typeof c.phone === 'string' && /^\d{10,15}$/.test(c.phone);
    if (!email && !phone) return illegal();
    if (this.opts.ownReceipts && !email) return illegal();
    if (r.tax_system_code !== undefined && !(Number.isInteger(r.tax_system_code) && (r.tax_system_code as number) >= 1 && (r.tax_system_code as number) <= 6)) return illegal();
    const items = r.items;
    if (!Array.isArray(items) || items.length === 0 || items.length > 100) return illegal();
    let total = 0;
    for (const it of items as Record<string, unknown>[]) {
      if (!it || typeof it !== 'object') return illegal();
      if (typeof it.description !== 'string' || it.description === '' || it.description.length > 128) return illegal();
      if (typeof it.quantity !== 'number' || !(it.quantity > 0)) return illegal();
      const price = this.money(it.amount, 'receipt.items.amount');
      if ('status' in price) return illegal();
      if (!Number.isInteger(it.vat_code) || (it.vat_code as number) < 1 || (it.vat_code as number) > 12) return illegal();
      if (this.opts.ffd12 && !YK_MEASURES.has(it.measure as string)) return illegal();
      if (!YK_PAYMENT_SUBJECTS.has(it.payment_subject as string) || !YK_PAYMENT_MODES.has(it.payment_mode as string)) return illegal();
      // The line's total in kopecks: price x quantity, quantity with at most 3 decimals
      // (EMULATOR: a line whose total is not whole kopecks is refused, the stricter reading).
      const milli = Math.round(it.quantity * 1000);
      if (Math.abs(it.quantity * 1000 - milli) > 1e-6 || (cents(price.value) * milli) % 1000 !== 0) return illegal();
      total += (cents(price.value) * milli) / 1000;
    }
    return total === cents(amount.value) ? null : illegal();
  }

  // ---------------------------------------------------------------- payments

  private createPayment(b: Record<string, unknown>): Answer {
    const amount = this.money(b.amount, 'amount');
    if ('status' in amount) return amount;
    const pmd = b.payment_method_data as Record<string, unknown> | undefined;
    // [15]: save_payment_method is a boolean.
    if (b.save_payment_method !== undefined && typeof b.save_payment_method !== 'boolean') {
      return this.error(400, 'invalid_request', 'Invalid save_payment_method: a boolean is expected', 'save_payment_method');
    }
    if (b.payment_method_id !== undefined) return this.chargeSaved(b, amount);
    let method: 'bank_card' | 'sbp' | undefined;
    if (pmd !== undefined) {
      if (!pmd || typeof pmd !== 'object' || (pmd.type !== 'bank_card' && pmd.type !== 'sbp')) {
        return this.error(400, 'invalid_request', 'Invalid payment_method_data.type: bank_card and sbp are supported', 'payment_method_data.type');
      }
      method = pmd.type;
    }
    const capture = b.capture === true;
    if (b.capture !== undefined && typeof b.capture !== 'boolean') return this.error(400, 'invalid_request', 'Invalid capture: a boolean is expected', 'capture');
    // [4]: SBP cannot be paid in two stages.
    if (method === 'sbp' && !capture) return this.error(400, 'invalid_request', 'Two-stage payments are not available for payment method sbp. Pass capture: true', 'capture');
    const c = b.confirmation as Record<string, unknown> | undefined;
    if (!c || typeof c !== 'object') return this.error(400, 'invalid_request', 'Parameter confirmation is missing', 'confirmation');
    if (c.type !== 'redirect' && c.type !== 'qr') return this.error(400, 'invalid_request', 'Invalid confirmation.type: redirect and qr are supported', 'confirmation.type');
    // [4]: the QR confirmation exists for SBP, not for cards.
    if (c.type === 'qr' && method !== 'sbp') return this.error(400, 'invalid_request', 'Confirmation type qr is available for payment method sbp only', 'confirmation.type');
    if (c.type === 'redirect' && (typeof c.return_url !== 'string' || !/^https?:\/\//.test(c.return_url))) {
      return this.error(400, 'invalid_request', 'Invalid confirmation.return_url', 'confirmation.return_url');
    }
    if (b.description !== undefined && (typeof b.description !== 'string' || b.description.length > 128)) {
      return this.error(400, 'invalid_request', 'Invalid description: a string of at most 128 characters', 'description');
    }
    const refused = this.receiptRefusal(b.receipt, amount);
    if (refused) return refused;
    const metadata = (b.metadata && typeof b.metadata === 'object' ? b.metadata : {}) as Record<string, string>;
    const id = uuidLike('000f');
    if (b.receipt !== undefined) this.receipts.push({ object: 'payment', id, receipt: b.receipt as Record<string, unknown> });
    const now = new Date();
    const p: YkPayment = {
      id,
      status: 'pending',
      amount,
      description: b.description as string | undefined,
      recipient: { account_id: this.shopId, gateway_id: '2179531' },
      created_at: now.toISOString(),
      test: true,
      paid: false,
      refundable: false,
      metadata,
      _capture: capture,
      _method: method,
      _returnUrl: c.return_url as string | undefined,
      _save: b.save_payment_method === true,
    };
    if (method) p.payment_method = this.methodView(p, undefined);
    p.confirmation = c.type === 'qr'
      // [4]: QR confirmation gives the data to draw (EMULATOR: a link to the emulator's stand-in of qr.nspk.ru).
      ? { type: 'qr', confirmation_data: `${this.baseUrl}/qr/${id}` }
      : { type: 'redirect', confirmation_url: `${this.baseUrl}/checkout/${id}`, return_url: c.return_url };
    // [4]: SBP must be paid within 1 hour.
    if (method === 'sbp') p.expires_at = new Date(now.getTime() + 3600_000).toISOString();
    this.payments.set(id, p);
    return json(200, this.view(p));
  }

  /**
   * [16]: an autopayment by a saved method: no confirmation, no payer; decided at once by the
   * saved card (the card table), answered and notified as any payment.
   */
  private chargeSaved(b: Record<string, unknown>, amount: Money): Answer {
    const id = b.payment_method_id;
    if (typeof id !== 'string' || id === '') return this.error(400, 'invalid_request', 'Invalid payment_method_id', 'payment_method_id');
    if (b.payment_method_data !== undefined) {
      return this.error(400, 'invalid_request', 'Both payment_method_id and payment_method_data are set: send one of them', 'payment_method_id');
    }
    if (b.save_payment_method === true) return this.error(400, 'invalid_request', 'The payment method is already saved', 'save_payment_method');
    const saved = this.savedMethods.get(id);
    if (!saved) return this.error(400, 'invalid_request', 'Payment method with this payment_method_id does not exist or is not saved', 'payment_method_id');
    if (b.description !== undefined && (typeof b.description !== 'string' || b.description.length > 128)) {
      return this.error(400, 'invalid_request', 'Invalid description: a string of at most 128 characters', 'description');
    }
    const refused = this.receiptRefusal(b.receipt, amount);
    if (refused) return refused;
    const p: YkPayment = {
      id: uuidLike('000f'), status: 'pending', amount, description: b.description as string | undefined,
      recipient: { account_id: this.shopId, gateway_id: '2179531' }, created_at: new Date().toISOString(), test: true, paid: false,
      refundable: false, metadata: (b.metadata && typeof b.metadata === 'object' ? b.metadata : {}) as Record<string, string>,
      _capture: b.capture === true, _method: 'bank_card',
    };
    p.payment_method = { ...this.methodView(p, saved.card), id: saved.id, saved: true };
    if (b.receipt !== undefined) this.receipts.push({ object: 'payment', id: p.id, receipt: b.receipt as Record<string, unknown> });
    this.payments.set(p.id, p);
    const rule = YK_CARDS[saved.card] ?? { outcome: 'success' as const };
    // [19]: the payer revoked the permission: the autopayment is canceled, reason permission_revoked.
    if (this.revokedPermissions.has(id)) this.cancelPayment(p, 'yoo_money', 'permission_revoked');
    else if (rule.outcome === 'decline') this.cancelPayment(p, 'payment_network', rule.reason ?? 'general_decline');
    else this.authorize(p);
    return json(200, this.view(p));
  }

  private methodView(p: YkPayment, card: string | undefined): Record<string, unknown> {
    const base = { type: p._method, id: p.payment_method?.id ?? uuidLike('000f'), saved: false };
    if (p._method === 'bank_card' && card) {
      return { ...base, title: `Bank card *${card.slice(-4)}`, card: { first6: card.slice(0, 6), last4: card.slice(-4), expiry_year: '2030', expiry_month: '12', card_type: card.startsWith('4') ? 'Visa' : 'MasterCard', issuer_country: 'RU' } };
    }
    return base;
  }

  private capture(id: string, b: Record<string, unknown>): Answer {
    const p = this.payments.get(id);
    if (!p) return this.error(404, 'not_found', 'Incorrect payment_id. Payment doesn\'t exist or access denied.', 'payment_id');
    if (p.status !== 'waiting_for_capture') return this.error(400, 'invalid_request', `Payment in status ${p.status} can't be captured. Capture is possible for payments in status waiting_for_capture`, 'payment_id');
    if (b.amount !== undefined) {
      const amt = this.money(b.amount, 'amount');
      if ('status' in amt) return amt;
      // EMULATOR (docs: a partial capture may be less than the authorised amount, never more).
      if (cents(amt.value) > cents(p.amount.value)) return this.error(400, 'invalid_request', 'Capture amount is greater than the payment amount', 'amount.value');
    }
    // [10] and yookassa.ru/developers/payment-acceptance/receipts/54fz/yoomoney/payments ("Платеж в
    // две стадии"): a partial capture of a fiscalized shop's payment carries the receipt of what is
    // taken (refused as any missing receipt: 400 invalid_request, parameter receipt); a full
    // capture needs none, and one sent anyway must be valid (EMULATOR: the stricter reading).
    const taken = b.amount !== undefined ? this.money(b.amount, 'amount') as Money : p.amount;
    if (cents(taken.value) !== cents(p.amount.value) || b.receipt !== undefined) {
      const refused = this.receiptRefusal(b.receipt, taken);
      if (refused) return refused;
    }
    if (b.receipt !== undefined) this.receipts.push({ object: 'capture', id, receipt: b.receipt as Record<string, unknown> });
    p.amount = taken;
    this.succeed(p);
    return json(200, this.view(p));
  }

  private cancel(id: string): Answer {
    const p = this.payments.get(id);
    if (!p) return this.error(404, 'not_found', 'Incorrect payment_id. Payment doesn\'t exist or access denied.', 'payment_id');
    // [3]: canceled_by_merchant is "payment canceled via API during a two-stage payment".
    if (p.status !== 'waiting_for_capture') return this.error(400, 'invalid_request', `Payment in status ${p.status} can't be canceled. Cancel is possible for payments in status waiting_for_capture`, 'payment_id');
    this.cancelPayment(p, 'merchant', 'canceled_by_merchant');
    return json(200, this.view(p));
  }

  private succeed(p: YkPayment) {
    p.status = 'succeeded';
    p.paid = true;
    p.refundable = true;
    p.captured_at = new Date().toISOString();
    p.refunded_amount = { value: '0.00', currency: p.amount.currency };
    delete p.confirmation;
    delete p.expires_at;
    this.emit('payment.succeeded', p);
  }

  private authorize(p: YkPayment) {
    p.authorization_details = { rrn: String(Date.now()).slice(-12), auth_code: hex(3), three_d_secure: { applied: !!p._threeDs } };
    // [15]: saved only when asked, once the payer paid: payment_method.saved and its id.
    if (p._save && p.payment_method && p._method === 'bank_card') {
      p.payment_method = { ...p.payment_method, saved: true };
      const card = p.payment_method.card as { first6: string; last4: string } | undefined;
      this.savedMethods.set(p.payment_method.id as string, { id: p.payment_method.id as string, card: this.cardOf.get(p.id) ?? `${card?.first6 ?? '555555'}000000${card?.last4 ?? '4444'}`, payment: p.id });
    }
    if (p._capture) { this.succeed(p); return; }
    p.status = 'waiting_for_capture';
    p.paid = true;
    delete p.confirmation;
    // EMULATOR: cards may be held 7 days before capture (the docs give the term per method).
    p.expires_at = new Date(Date.now() + 7 * 86400_000).toISOString();
    this.emit('payment.waiting_for_capture', p);
  }

  private cancelPayment(p: YkPayment, party: CancellationDetails['party'], reason: string) {
    p.status = 'canceled';
    p.paid = false;
    p.refundable = false;
    p.cancellation_details = { party, reason };
    delete p.confirmation;
    delete p.expires_at;
    this.emit('payment.canceled', p);
  }

  /** The webhook body: {type: "notification", event, object} (webhooks page; the object as the API answers it). */
  private emit(event: string, o: object) {
    this.notifier.notify(this.notifyUrl, { type: 'notification', event, object: structuredClone(this.view(o)) });
  }

  // ---------------------------------------------------------------- the payer

  /**
   * What the payer does on the hosted page, without HTTP. 'pay' takes a card for card
   * payments; SBP payments are paid with 'sbp-confirm' (or 'pay').
   */
  payerAction(id: string, action: PayerAction, opts: { card?: string; method?: 'bank_card' | 'sbp' } = {}): YkPayment {
    const p = this.payments.get(id);
    if (!p) throw new Error(`unknown payment ${id}`);
    if (action === 'expire') {
      // [3]: expired_on_confirmation (payer never confirmed), expired_on_capture (merchant never captured).
      if (p.status === 'pending') this.cancelPayment(p, 'yoo_money', 'expired_on_confirmation');
      else if (p.status === 'waiting_for_capture') this.cancelPayment(p, 'yoo_money', 'expired_on_capture');
      return p;
    }
    if (p.status !== 'pending') throw new Error(`payment ${id} is ${p.status}, the payer can no longer act`);
    if (action === 'cancel') {
      // EMULATOR: the payer leaving the page is seen by YooKassa only at expiry; the page's "cancel"
      // stands for that outcome at once.
      this.cancelPayment(p, 'yoo_money', 'expired_on_confirmation');
      return p;
    }
    if (action === '3ds-confirm' || action === '3ds-fail') {
      if (!p._threeDs) throw new Error(`payment ${id} is not waiting for 3-D Secure`);
      if (action === '3ds-fail') this.cancelPayment(p, 'payment_network', '3d_secure_failed');
      else this.authorize(p);
      return p;
    }
    const method = p._method ?? opts.method ?? (opts.card ? 'bank_card' : action === 'sbp-confirm' ? 'sbp' : 'bank_card');
    if (!p._method) {
      if (method === 'sbp' && !p._capture) throw new Error('SBP cannot be paid in two stages');
      p._method = method;
    }
    if (action === 'decline') {
      p.payment_method = this.methodView(p, opts.card);
      this.cancelPayment(p, 'payment_network', 'general_decline');
      return p;
    }
    if (method === 'sbp') {
      p.payment_method = this.methodView(p, undefined);
      this.authorize(p);
      return p;
    }
    const card = (opts.card ?? '5555555555554444').replace(/\s+/g, '');
    this.cardOf.set(p.id, card);
    p.payment_method = this.methodView(p, card);
    const rule = YK_CARDS[card] ?? { outcome: 'success' as const };
    if (rule.outcome === 'decline') this.cancelPayment(p, 'payment_network', rule.reason ?? 'general_decline');
    else if (rule.outcome === '3ds') p._threeDs = true;
    else this.authorize(p);
    return p;
  }

  // ---------------------------------------------------------------- hosted pages

  private async page(r: Req): Promise<Answer> {
    const [, kind, id, step] = r.path.split('/');
    const p = id ? this.payments.get(id) : undefined;
    if (!p) return html('<h1>Payment not found</h1>', 404);
    const form = parseForm(r.raw);
    if (kind === 'qr') {
      // The emulator's stand-in for the bank app opened from the SBP QR code.
      if (r.method === 'POST' && p.status === 'pending') this.payerAction(p.id, form.action === 'cancel' ? 'cancel' : 'sbp-confirm');
      return html(page(`SBP: ${p.amount.value} ₽`, p.status === 'pending'
        ? `<form method="post"><button name="action" value="confirm" id="confirm">Confirm in the bank app</button><button name="action" value="cancel" id="cancel">Cancel</button></form>`
        : `<p id="status">${p.status}</p>`));
    }
    if (r.method === 'POST') {
      try {
        if (step === 'pay') this.payerAction(p.id, form.method === 'sbp' ? 'sbp-confirm' : 'pay', { card: form.card, method: form.method === 'sbp' ? 'sbp' : undefined });
        else if (step === 'cancel') this.payerAction(p.id, 'cancel');
        else if (step === '3ds') this.payerAction(p.id, form.result === 'fail' ? '3ds-fail' : '3ds-confirm');
      } catch (e) {
        return html(page('Error', `<p>${escapeHtml((e as Error).message)}</p>`), 409);
      }
      if (p.status === 'pending' && p._threeDs) return redirect(`${this.baseUrl}/checkout/${p.id}/3ds`);
      return redirect(p._returnUrl ?? `${this.baseUrl}/checkout/${p.id}`);
    }
    if (step === '3ds' && p.status === 'pending') {
      return html(page('3-D Secure', `<p>Bank confirmation for ${p.amount.value} ₽</p><form method="post" action="/checkout/${p.id}/3ds"><button name="result" value="confirm" id="confirm">Confirm</button><button name="result" value="fail" id="fail">Fail</button></form>`));
    }
    if (p.status !== 'pending') return html(page('Payment', `<p id="status">${p.status}</p>${p._returnUrl ? `<a id="return" href="${escapeHtml(p._returnUrl)}">Back to the shop</a>` : ''}`));
    const cardForm = `<form method="post" action="/checkout/${p.id}/pay"><input name="card" id="card" placeholder="Card number" autocomplete="cc-number"><button id="pay">Pay</button></form>`;
    const sbpForm = `<p>Scan the QR code: <a id="qr" href="/qr/${p.id}">${this.baseUrl}/qr/${p.id}</a></p><form method="post" action="/checkout/${p.id}/pay"><input type="hidden" name="method" value="sbp"><button id="sbp">I paid in the bank app</button></form>`;
    const body = p._method === 'sbp' ? sbpForm : p._method === 'bank_card' ? cardForm : cardForm + (p._capture ? sbpForm : '');
    return html(page(`Pay ${p.amount.value} ₽`, `${body}<form method="post" action="/checkout/${p.id}/cancel"><button id="cancel">Cancel</button></form>`));
  }

  // ---------------------------------------------------------------- refunds

  private createRefund(b: Record<string, unknown>): Answer {
    if (typeof b.payment_id !== 'string') return this.error(400, 'invalid_request', 'Parameter payment_id is missing', 'payment_id');
    const amount = this.money(b.amount, 'amount');
    if ('status' in amount) return amount;
    const p = this.payments.get(b.payment_id);
    if (!p) return this.error(404, 'not_found', 'Incorrect payment_id. Payment doesn\'t exist or access denied.', 'payment_id');
    if (p.status !== 'succeeded') return this.error(400, 'invalid_request', `Payment in status ${p.status} can't be refunded`, 'payment_id');
    const refunded = cents(p.refunded_amount?.value ?? '0');
    // Refunds are bounded by the payment: the sum of refunds never exceeds what was paid.
    if (refunded + cents(amount.value) > cents(p.amount.value)) {
      return this.error(400, 'invalid_request', 'Refund amount is greater than the amount available for refund', 'amount.value');
    }
    const refused = this.receiptRefusal(b.receipt, amount);
    if (refused) return refused;
    const id = uuidLike('0015');
    if (b.receipt !== undefined) this.receipts.push({ object: 'refund', id, receipt: b.receipt as Record<string, unknown> });
    const x: YkRefund = { id, payment_id: p.id, status: 'succeeded', amount, created_at: new Date().toISOString(), description: b.description as string | undefined };
    this.refunds.set(id, x);
    p.refunded_amount = { value: fromCents(refunded + cents(amount.value)), currency: 'RUB' };
    // EMULATOR: refunds succeed at once (the docs allow pending first; [4] "refund on the next day" for SBP settles later).
    p.refundable = cents(p.refunded_amount.value) < cents(p.amount.value);
    this.emit('refund.succeeded', x);
    return json(200, this.view(x));
  }

  // ---------------------------------------------------------------- payouts

  private createPayout(b: Record<string, unknown>): Answer {
    const amount = this.money(b.amount, 'amount', 1);
    if ('status' in amount) return amount;
    // [5]: at most 500 000 RUB per payout.
    if (cents(amount.value) > 500_000_00) return this.error(400, 'invalid_request', 'Payout amount exceeds the one-time limit', 'amount.value');
    const d = b.payout_destination_data as Record<string, unknown> | undefined;
    // [14] (the SDK's validate()): exactly one of payout_token and payout_destination_data.
    if (b.payout_token !== undefined && d !== undefined) return this.error(400, 'invalid_request', 'Both payout_token and payout_destination_data are specified. Specify one of them', 'payout_token');
    let dest: Record<string, unknown>;
    let failKey: string;
    let by: YkPayout['_by'];
    if (b.payout_token !== undefined) {
      const syn = typeof b.payout_token === 'string' ? this.payoutTokens.get(b.payout_token) : undefined;
      if (!syn) return this.error(400, 'invalid_request', 'Invalid payout_token. Get a new one with the payout widget', 'payout_token');
      dest = { type: 'bank_card', card: { first6: syn.first6, last4: syn.last4, card_type: syn.card_type, issuer_country: syn.issuer_country, issuer_name: syn.issuer_name } };
      failKey = syn.number;
      by = 'payout_token';
    } else if (!d || typeof d !== 'object') {
      return this.error(400, 'invalid_request', 'Parameter payout_destination_data or payout_token is missing', 'payout_destination_data');
    } else if (d.type === 'bank_card') {
      // [13]: a card number only to a gateway enabled for it (its owner PCI DSS certified).
      if (!this.payoutPciDss) {
        return this.error(403, 'forbidden', 'Payouts by card number are not available for this gateway: a PCI DSS certificate is required. Use the payout widget\'s payout_token', 'payout_destination_data.card.number');
      }
      const number = (d.card as Record<string, unknown> | undefined)?.number;
      // [7]: card.number digits only, no spaces.
      if (typeof number !== 'string' || !/^\d{16,19}$/.test(number) || !luhn(number)) {
        return this.error(400, 'invalid_request', 'Invalid payout_destination_data.card.number', 'payout_destination_data.card.number');
      }
      dest = { type: 'bank_card', card: { first6: number.slice(0, 6), last4: number.slice(-4), card_type: cardType(number), issuer_country: 'RU' } };
      failKey = number;
      by = 'card_number';
    } else if (d.type === 'sbp') {
      // [5]: a phone linked to an account at an SBP participant, and that participant's id.
      if (typeof d.phone !== 'string' || !/^7\d{10}$/.test(d.phone)) return this.error(400, 'invalid_request', 'Invalid payout_destination_data.phone: 11 digits starting with 7', 'payout_destination_data.phone');
      if (typeof d.bank_id !== 'string' || !YK_SBP_BANKS.some((x) => x.bank_id === d.bank_id)) return this.error(400, 'invalid_request', 'Invalid payout_destination_data.bank_id: not an SBP participant', 'payout_destination_data.bank_id');
      dest = { type: 'sbp', phone: d.phone, bank_id: d.bank_id, recipient_checked: false };
      failKey = d.phone;
      by = 'sbp';
    } else {
      return this.error(400, 'invalid_request', 'Invalid payout_destination_data.type: bank_card and sbp are supported', 'payout_destination_data.type');
    }
    const id = `po-${uuidLike('0003')}`;
    const x: YkPayout = {
      id, amount, status: 'pending', payout_destination: dest, description: b.description as string | undefined,
      created_at: new Date().toISOString(), test: true, metadata: (b.metadata ?? {}) as Record<string, string>, _by: by,
    };
    this.payouts.set(id, x);
    const settle = this.opts.payoutSettleMs === undefined ? 0 : this.opts.payoutSettleMs;
    if (settle !== null) {
      const reason = YK_PAYOUT_FAILS[failKey];
      const t = setTimeout(() => { this.timers.delete(t); if (x.status === 'pending') this.settlePayout(id, reason ? 'canceled' : 'succeeded', reason); }, settle);
      this.timers.add(t);
    }
    return json(200, this.view(x));
  }

  /** [14]: what the payout widget answers for a card typed into it (tests without a browser use it too). */
  tokenize(number: string): YkCardSynonym {
    const syn: YkCardSynonym = {
      payout_token: `pt-${uuidLike('0022')}`, first6: number.slice(0, 6), last4: number.slice(-4), card_type: cardType(number),
      issuer_name: 'EMULATOR BANK', issuer_country: 'RU',
    };
    this.payoutTokens.set(syn.payout_token, { number, ...syn });
    return syn;
  }

  /**
   * [14] The payout widget's stand-in: `/payouts-data/widget.js` defines `window.PayoutsData`,
   * whose render() puts this server's card form in an iframe; the form posts the number here (the
   * page that embeds the widget never sees it), and the answer page posts the synonym to the
   * parent page, which hands it to success_callback. A form for another gateway's agentId fails
   * (error_callback, EMULATOR code `invalid_account_id`).
   */
  private payoutWidget(r: Req): Answer {
    if (r.method === 'GET' && r.path === '/payouts-data/widget.js') {
      return { status: 200, body: PAYOUT_WIDGET_JS, contentType: 'text/javascript; charset=utf-8' };
    }
    if (r.path !== '/payouts-data/form') return { status: 404, body: '' };
    const q: Record<string, string> = r.method === 'POST' ? parseForm(r.raw) : Object.fromEntries(r.query);
    const accountId = q.account_id ?? '';
    const form = (error = '') => html(widgetPage(`<form method="post" action="/payouts-data/form">
<input type="hidden" name="account_id" value="${escapeHtml(accountId)}">
<label for="card_number">Номер карты</label>
<input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" placeholder="0000 0000 0000 0000">
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ''}<button type="submit">Продолжить</button></form>`));
    if (r.method === 'GET') return form();
    if (r.method !== 'POST') return { status: 405, body: '' };
    if (accountId !== this.payoutAgentId) return html(widgetPage('<p role="alert">Ошибка</p>', { error: 'invalid_account_id' }));
    const number = (q.card_number ?? '').replace(/[\s-]/g, '');
    if (!/^\d{16,19}$/.test(number) || !luhn(number)) return form('Проверьте номер карты');
    const syn = this.tokenize(number);
    return html(widgetPage(`<p>Карта ${escapeHtml(syn.first6)}******${escapeHtml(syn.last4)} сохранена в ЮKassa</p>`, { result: syn }));
  }

  /** Finishes a pending payout (the payout network answered). */
  settlePayout(id: string, outcome: 'succeeded' | 'canceled', reason = 'general_decline') {
    const x = this.payouts.get(id);
    if (!x) throw new Error(`unknown payout ${id}`);
    if (x.status !== 'pending') return x;
    if (outcome === 'succeeded') { x.status = 'succeeded'; x.succeeded_at = new Date().toISOString(); this.emit('payout.succeeded', x); }
    // [6]: payout cancellation parties are yoo_money and payout_network.
    else { x.status = 'canceled'; x.cancellation_details = { party: 'payout_network', reason }; this.emit('payout.canceled', x); }
    return x;
  }

  // ---------------------------------------------------------------- forged notifications

  /**
   * Posts a notification the API would contradict, once, and returns what the receiver said:
   * 'unknown-object' names a payment id the API does not know; 'contradicting-status' says
   * payment.succeeded for a payment the API still has in another status.
   */
  async forgeNotification(kind: 'unknown-object' | 'contradicting-status', paymentId?: string) {
    if (!this.notifyUrl) throw new Error('no notifyUrl');
    let object: Record<string, unknown>;
    if (kind === 'unknown-object') {
      object = { id: uuidLike('000f'), status: 'succeeded', paid: true, amount: { value: '100.00', currency: 'RUB' }, created_at: new Date().toISOString(), test: true, refundable: true, metadata: {} };
    } else {
      const p = paymentId ? this.payments.get(paymentId) : undefined;
      if (!p) throw new Error('contradicting-status needs a known paymentId');
      object = { ...this.view(p), status: 'succeeded', paid: true };
    }
    return this.notifier.postOnce(this.notifyUrl, { type: 'notification', event: 'payment.succeeded', object });
  }
}

/** [14] The stand-in of https://yookassa.ru/payouts-data/3.1.0/widget.js (see payoutWidget). */
const PAYOUT_WIDGET_JS = `(function () {
  var origin = new URL(document.currentScript.src).origin;
  function PayoutsData(o) {
    if (!o || o.type !== 'payout' || !o.account_id || typeof o.success_callback !== 'function' || typeof o.error_callback !== 'function') {
      throw new Error('PayoutsData: type "payout", account_id, success_callback and error_callback are required');
    }
    var self = this;
    this.o = o;
    this.l = function (e) {
      if (e.origin !== origin || !e.data || e.data.source !== 'yookassa-payouts-data') return;
      if (e.data.result) self.o.success_callback(e.data.result); else self.o.error_callback(e.data.error);
    };
    window.addEventListener('message', this.l);
  }
  PayoutsData.prototype.render = function (id) {
    var el = document.getElementById(id);
    if (!el) return Promise.reject(new Error('PayoutsData: no element #' + id));
    var f = document.createElement('iframe');
    f.src = origin + '/payouts-data/form?account_id=' + encodeURIComponent(this.o.account_id);
    f.title = 'ЮKassa';
    f.width = '100%';
    f.height = '220';
    f.setAttribute('frameborder', '0');
    el.appendChild(f);
    return new Promise(function (resolve) { f.addEventListener('load', function () { resolve(); }, { once: true }); });
  };
  PayoutsData.prototype.clearListeners = function () { window.removeEventListener('message', this.l); };
  window.PayoutsData = PayoutsData;
})();
`;

/** The widget iframe's page; `message` is posted to the embedding page when given. */
function widgetPage(body: string, message?: { result?: YkCardSynonym; error?: string }) {
  const post = message ? `<script>parent.postMessage(${JSON.stringify({ source: 'yookassa-payouts-data', ...message }).replace(/</g, '\\u003c')}, '*');</script>` : '';
  return `<!doctype html><html lang="ru"><head><meta charset="utf-8"><title>ЮKassa</title>
<style>body{font:16px system-ui,sans-serif;margin:8px}input{display:block;width:100%;box-sizing:border-box;font-size:18px;padding:8px;margin:6px 0 12px}button{font-size:16px;padding:8px 16px}</style></head>
<body>${body}${post}</body></html>`;
}

/** [14]: the card type the widget names (EMULATOR: by the first digit). */
function cardType(number: string) {
  return number.startsWith('4') ? 'Visa' : number.startsWith('2') ? 'Mir' : 'MasterCard';
}

function page(title: string, body: string) {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/** Ids shaped like YooKassa's ([8]: "29f31de9-000f-5000-a000-109987b98a6a"). */
function uuidLike(kind: string) {
  return `${hex(4)}-${kind}-5000-8000-${hex(6)}`;
}

function cents(v: string) {
  const [i, f = ''] = v.split('.');
  return Number(i) * 100 + Number((f + '00').slice(0, 2));
}

function fromCents(c: number) {
  return `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
}

function toMoney(v: string) { return fromCents(cents(v)); }

function luhn(n: string) {
  let sum = 0;
  for (let i = 0; i < n.length; i += 1) {
    let d = Number(n[n.length - 1 - i]);
    if (i % 2 === 1) { d *= 2; if (d > 9) d -= 9; }
    sum += d;
  }
  return sum % 10 === 0;
}
