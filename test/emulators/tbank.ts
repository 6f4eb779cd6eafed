import { createHash, timingSafeEqual } from 'node:crypto';
import QRCode from 'qrcode';
import {
  EmulatorServer, MisbehaviourQueue, Notifier, escapeHtml, hex, html, isNotificationSwitch, json, maskPan, parseForm, redirect,
  type Answer, type Misbehaviour, type Req,
} from './common.js';

/**
 * An emulator of T-Bank (Tinkoff) internet acquiring API v2, written from the public
 * documentation and SDKs. Sources, cited as [n] next to each rule:
 * [1] developer.tbank.ru/eacq/intro/developer/token: Token = SHA-256 (UTF-8, lower-case hex) of the
 *     values of the root scalar parameters plus Password, sorted by key; nested objects (DATA,
 *     Receipt, Shops) and Token itself left out; booleans as "true"/"false". Worked example:
 *     Amount 19200, Description "Подарочная карта на 1000 рублей", OrderId "00000",
 *     Password "11111111111111", TerminalKey "MerchantTerminalKey" -> 72dd466f...426db2.
 *     The same algorithm in kravetsone/t-kassa-api src/utils.ts (generateSignature) and vectors
 *     in ai-iskuzhin/TBankAcquiringNet tests (TBankPaymentsClientTests.cs).
 * [2] developer.tbank.ru/eacq/api/init, get-state, cancel, confirm, check-order, get-qr, sbp-pay-test
 *     (fields and answers; Cancel: NEW -> CANCELED, AUTHORIZED -> REVERSED, CONFIRMED ->
 *     REFUNDED | PARTIAL_REFUNDED; ExternalRequestId is Cancel's idempotency key; GetQr DataType
 *     PAYLOAD (payload) | IMAGE (SVG), default PAYLOAD; SbpPayTest IsDeadlineExpired / IsRejected,
 *     not both).
 * [3] developer.tbank.ru/eacq/intro/developer/operation-statuses (NEW, FORM_SHOWED, AUTHORIZING,
 *     3DS_CHECKING, 3DS_CHECKED, AUTHORIZED, CONFIRMING, CONFIRMED, REVERSING, PARTIAL_REVERSED,
 *     REVERSED, REFUNDING, PARTIAL_REFUNDED, REFUNDED, CANCELED, DEADLINE_EXPIRED, AUTH_FAIL, REJECTED)
 * [4] developer.tbank.ru/eacq/intro/developer/notification: POST JSON to NotificationURL (from
 *     Init or the terminal), fields TerminalKey, OrderId, Success, Status, PaymentId, ErrorCode,
 *     Amount, CardId, Pan, ExpDate, Token; answer HTTP 200 with the body "OK", otherwise
 *     repeated (hourly for 24 h, then daily for a month).
 * [5] developer.tbank.ru/eacq/intro/errors/error-codes: answers are HTTP 200 with
 *     {Success: false, ErrorCode (a string), Message, Details}; 8 "Неверный статус транзакции",
 *     101 3-D Secure failed, 204 wrong Token ("Неверный токен. Проверьте пару TerminalKey/SecretKey."),
 *     331 wrong terminal, 1051 insufficient funds on the card. 9999 "Неверные параметры." is the
 *     generic code in older SDK docstrings (e.g. the Python tinkoff acquiring clients).
 * [6] developer.tbank.ru/eacq/scenarios/payments/PCI_DSS/sbp: SBP is one-stage only, at least
 *     10 RUB; after the QR: CONFIRMED (payer sent to SuccessURL) | REJECTED | DEADLINE_EXPIRED.
 * [7] test cards quoted by T-Bank's SDK examples (tinkoff acquiring Flutter/Dart SDK examples):
 *     4300 0000 0000 0777 pays without 3-D Secure, 5411 4200 0000 0002 asks for 3-D Secure.
 * [8] a real notification quoted in a public repository: {"TerminalKey","OrderId","Success":true,
 *     "Status":"CONFIRMED","PaymentId":3372975894,"ErrorCode":"0","Amount":150,"CardId":357089169,
 *     "Pan":"528041******0988","ExpDate":"1029","Token":...} (PaymentId and CardId as numbers).
 * [9] kravetsone/t-kassa-api modern-openapi.json (T-Bank's specification): schemas Receipt_FFD_105
 *     (required Items and Taxation osn | usn_income | usn_income_outcome | envd | esn | patent; Email
 *     or Phone, one of them required) and Items_FFD_105 (required Name <= 128, Price in kopecks,
 *     Quantity (at most 3 decimals), Amount in kopecks = Price x Quantity, Tax none | vat0 | vat10 |
 *     vat20 | vat110 | vat120; PaymentMethod full_prepayment | prepayment | advance | full_payment |
 *     partial_payment | credit | credit_payment; PaymentObject commodity ... another); the section
 *     "Частичный возврат при подключенной онлайн-кассе": with an online cash register Cancel carries
 *     Amount and Receipt. Receipt is nested, so it is never part of the Token ([1]; the Android
 *     SDK's AcquiringRequest.kt leaves DATA, Receipt, Receipts, Shops out of it).
 * [10] a terminal with an online cash register refusing an Init without Receipt, as answered by
 *     T-Bank and quoted in tinkoff-asdk-android issue 194: {"Success":false,"ErrorCode":"309",
 *     "Message":"Неверные параметры.","Details":"{request.validate.expected.receipt}"} (the maintainer:
 *     "Поле Receipt не должно быть пустым"); and 308 when the receipt's sum and the payment's differ,
 *     "The amount in the check and in the payment do not match." (tinkoff-asdk-ios-old issue 21).
 * [11] T-Bank's specification (modern-openapi.json, Cancel, as read in issue 29): ExternalRequestId
 *     "does not work for SBP": a repeated Cancel of an SBP payment is a new refund while money is
 *     left. The card case: a Cancel with a known ExternalRequestId answers the payment's current
 *     state ("если такой запрос уже есть, то в ответе вернется текущее состояние платежной операции",
 *     T-Bank's PDF API reference, Cancel, table 2.10.2).
 * [12] [3] and the SBP section of modern-openapi.json: ASYNC_REFUNDING, "Обработка возврата денежных
 *     средств по QR", an intermediate status between an SBP Cancel and PARTIAL_REFUNDED / REFUNDED.
 *     EMULATOR: Cancel answers ASYNC_REFUNDING and settles after `sbpRefundSettleMs` (or
 *     settleSbpRefunds()); only the final status is notified (the notification statuses of
 *     modern-openapi.json list no ASYNC_REFUNDING); a Cancel during ASYNC_REFUNDING is 8.
 * [13] CheckOrder of an OrderId T-Bank never saw: Success false, ErrorCode 335 (T-Bank's error list
 *     as read in issue 29), not a success with an empty Payments list. EMULATOR: the message text.
 * [14] developer.tbank.ru/eacq/api/charge and T-Bank's SDK docs (tinkoff_acquiring ChargeRequest): a
 *     parent payment is Init'ed with Recurrent "Y" and CustomerKey; once paid, its notification on
 *     AUTHORIZED carries RebillId. A later charge: Init (no Recurrent), then Charge {PaymentId, RebillId}
 *     without sending the payer to PaymentURL; the payment is paid with the saved card's details.
 *     RebillId is carried by the AUTHORIZED notification only (EMULATOR: the stricter reading; the
 *     CONFIRMED one that follows has none); Recurrent other than "Y", or "Y" without CustomerKey (1..36 characters), is 9999; an
 *     unknown RebillId is 104 with a detail (EMULATOR, see charge()).
 * [15] a real Charge answer quoted in a public gist (a Charge of a payment not in NEW): {"Success":false,
 *     "ErrorCode":"4","Message":"Запрашиваемое состояние транзакции является неверным.","Details":
 *     "Изменение статуса недопустимо."}.
 * [16] kravetsone/t-kassa-api modern-openapi.json (T-Bank's specification, info.version 1.28): section
 *     "Передача признака инициатора операции" (Init's DATA.OperationInitiatorType: 0 the payer, nothing
 *     saved, Recurrent N; 1 the payer, card saved, Recurrent Y; 2 the payer with a saved card; R a
 *     merchant's recurring charge; I installments; 2, R and I are charged with RebillId) and its
 *     "Коды ошибок": 1125 "Некорректное значение OperationInitiatorType", 1126 "Несопоставимые
 *     значения rebillId или Recurrent с переданным значением OperationInitiatorType", 10 "Метод
 *     Charge заблокирован для данного терминала", 262 "Истек срок действия родительского платежа";
 *     kravetsone/t-kassa-api src/index.ts (Charge): "По умолчанию метод Charge отключен", and a
 *     mismatch with the table is 1126. EMULATOR: Charge is on unless `chargeEnabled` is false (the
 *     tests' terminals were enabled); an Init without DATA.OperationInitiatorType is accepted (older
 *     integrations) unless `requireInitiatorType`, and then its Charge is 1126.
 * [17] GetCardList {CustomerKey} -> the customer's cards [{CardId, Pan, Status A | I | D, RebillId,
 *     ExpDate}], "включая удаленные"; RemoveCard {CustomerKey, CardId} -> {Success, Status: D,
 *     CustomerKey, CardId} (T-Bank's operations GetCardList and RemoveCard, kravetsone/t-kassa-api
 *     src/index.ts). EMULATOR: a parent payment paid with Recurrent Y and CustomerKey adds its card;
 *     a removed card's RebillId charges no more (answered as an unknown RebillId).
 * [18] GetState's `Amount` is described only as "Сумма в копейках": whether it is what the payment
 *     was or what is left after refunds is not documented. EMULATOR switch `stateAmount`: 'left'
 *     (default) or 'payment' (the payment's original amount, in GetState and in notifications).
 * [19] modern-openapi.json as it stands (v1.80, read 2026-11-28): Receipt_FFD_105 and Receipt_FFD_12
 *     `Taxation` osn | usn_income | usn_income_outcome | esn | patent (`envd` is gone); `FfdVersion`
 *     "1.05" | "1.2"; Items_FFD_105/Items_FFD_12 `Tax` none | vat0 | vat5 | vat7 | vat10 | vat20 | vat105 |
 *     vat107 | vat110 | vat120 (5 % and 7 % added in v1.47), and vat22 | vat122 from 1 January 2026
 *     (integrators' T-Bank SDKs; PROVIDERS.md "Receipts and rates as they stand"); Items_FFD_12 requires
 *     `MeasurementUnit` ("обязателен, если версия ФД онлайн-кассы — 1.2") and its PaymentObject list has
 *     no `composite`. Cancel.Receipt: "При полной отмене структура чека не передается, при частичной —
 *     передаются товары, которые нужно отменить" (EMULATOR: a Receipt on a full Cancel is 309, the
 *     stricter reading). NotificationFiscalization: Status "RECEIPT", OrderId, PaymentId, Amount,
 *     ErrorCode ("0" on success), ErrorMessage, Type (Income | IncomeReturn), FiscalNumber,
 *     ShiftNumber, ReceiptDatetime, FnNumber, EcrRegNumber, FiscalDocumentNumber,
 *     FiscalDocumentAttribute, Receipt (nested, outside the Token), Token.
 * Anything marked EMULATOR is this emulator's own choice where the documentation is silent.
 */

/** [19]: envd left the specification. */
const TB_TAXATION = new Set(['osn', 'usn_income', 'usn_income_outcome', 'esn', 'patent']);
/** [19]: the 2025 and 2026 rates included. */
const TB_TAX = new Set(['none', 'vat0', 'vat5', 'vat7', 'vat10', 'vat20', 'vat105', 'vat107', 'vat110', 'vat120', 'vat22', 'vat122']);
/** [19]: Items_FFD_12.PaymentObject (no `composite`; the marked-goods values besides). */
const TB_PAYMENT_OBJECTS_12 = new Set([
  'commodity', 'excise', 'job', 'service', 'gambling_bet', 'gambling_prize', 'lottery', 'lottery_prize', 'intellectual_activity',
  'payment', 'agent_commission', 'contribution', 'property_rights', 'unrealization', 'tax_reduction', 'trade_fee', 'resort_tax', 'pledge',
  'income_decrease', 'ie_pension_insurance_without_payments', 'ie_pension_insurance_with_payments', 'ie_medical_insurance_without_payments',
  'ie_medical_insurance_with_payments', 'social_insurance', 'casino_chips', 'agent_payment', 'excisable_goods_without_marking_code',
  'excisable_goods_with_marking_code', 'goods_without_marking_code', 'goods_with_marking_code', 'another',
]);
const TB_PAYMENT_METHODS = new Set(['full_prepayment', 'prepayment', 'advance', 'full_payment', 'partial_payment', 'credit', 'credit_payment']);
const TB_PAYMENT_OBJECTS = new Set([
  'commodity', 'excise', 'job', 'service', 'gambling_bet', 'gambling_prize', 'lottery', 'lottery_prize', 'intellectual_activity',
  'payment', 'agent_commission', 'composite', 'another',
]);

export type TbStatus =
  | 'NEW' | 'FORM_SHOWED' | 'AUTHORIZING' | '3DS_CHECKING' | 'AUTHORIZED' | 'CONFIRMING' | 'CONFIRMED'
  | 'REVERSING' | 'PARTIAL_REVERSED' | 'REVERSED' | 'REFUNDING' | 'ASYNC_REFUNDING' | 'PARTIAL_REFUNDED' | 'REFUNDED'
  | 'REJECTED' | 'AUTH_FAIL' | 'DEADLINE_EXPIRED' | 'CANCELED';

export interface TbPayment {
  PaymentId: string;
  OrderId: string;
  /** What is held or charged now, in kopecks (lowered by Confirm with a smaller amount and by Cancel). */
  Amount: number;
  OriginalAmount: number;
  Status: TbStatus;
  PayType: 'O' | 'T';
  Description?: string;
  ErrorCode: string;
  Message?: string;
  SuccessURL?: string;
  FailURL?: string;
  NotificationURL?: string;
  DueAt: number;
  Data?: Record<string, unknown>;
  card?: { pan: string; cardId: number };
  sbp: boolean;
  formCode: string;
  history: TbStatus[];
  /** [14]: a parent payment (Recurrent Y) and its customer; the RebillId it got once paid. */
  Recurrent?: boolean;
  CustomerKey?: string;
  RebillId?: string;
  /** [16]: Init's DATA.OperationInitiatorType, when sent. */
  Initiator?: string;
}

/** EMULATOR card table: [7]'s two test cards plus our sandbox's numbers, so one table serves both. */
export const TB_CARDS: Record<string, { outcome: 'success' | '3ds' | 'decline'; errorCode?: string; message?: string }> = {
  '4300000000000777': { outcome: 'success' },
  '4242424242424242': { outcome: 'success' },
  '5411420000000002': { outcome: '3ds' },
  '4000002760003184': { outcome: '3ds' },
  '4000000000000002': { outcome: 'decline', errorCode: '1001', message: 'Свяжитесь с банком' },
  '4000000000009995': { outcome: 'decline', errorCode: '1051', message: 'Недостаточно средств на карте' },
};

export interface TBankOptions {
  notifyUrl?: string;
  terminalKey?: string;
  password?: string;
  /** The terminal's default PayType when Init sends none [2] (EMULATOR default: one-stage). */
  defaultPayType?: 'O' | 'T';
  retryBaseMs?: number;
  maxAttempts?: number;
  /** [9][10]: the terminal has an online cash register: Init, Confirm and Cancel need Receipt. */
  fiscalization?: boolean;
  /** [19]: the register works to FFD 1.2: a receipt must say FfdVersion "1.2" and give each item's MeasurementUnit. */
  ffd12?: boolean;
  /** [12]: an SBP refund settles (ASYNC_REFUNDING -> PARTIAL_REFUNDED | REFUNDED) after this many ms (default 0); null: only settleSbpRefunds(). */
  sbpRefundSettleMs?: number | null;
  /** [18]: what GetState's and the notifications' Amount are (default 'left'). */
  stateAmount?: 'left' | 'payment';
}

export type TbPayerAction = 'pay' | 'decline' | '3ds-confirm' | '3ds-fail' | 'sbp-confirm' | 'sbp-reject' | 'expire';

/** [1]: the Token of a request or a notification. */
export function tbankToken(params: Record<string, unknown>, password: string): string {
  const flat: [string, string][] = Object.entries(params)
    .filter(([k, v]) => k !== 'Token' && v !== undefined && v !== null && typeof v !== 'object')
    .map(([k, v]) => [k, String(v)]);
  flat.push(['Password', password]);
  flat.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(flat.map(([, v]) => v).join(''), 'utf8').digest('hex');
}

export class TBankEmulator {
  readonly payments = new Map<string, TbPayment>();
  /** Every API call answered: its method, the PaymentId it named (if any), when, and the answer. */
  readonly requests: { op: string; paymentId?: string; at: number; errorCode?: string; status: number }[] = [];
  readonly terminalKey: string;
  readonly password: string;
  /** [9][10]: the terminal is fiscalized (settable by tests). */
  fiscalization: boolean;
  /** Every Cancel applied: its payment, amount (kopecks), whether it was full, and whether it carried a Receipt. */
  readonly cancelsSeen: { paymentId: string; amount: number; full: boolean; receipt: boolean }[] = [];
  /** Every Receipt accepted: the method, the payment, and the Receipt as received. */
  readonly receipts: { op: 'Init' | 'Confirm' | 'Cancel'; paymentId: string; receipt: Record<string, unknown> }[] = [];
  notifyUrl?: string;
  readonly notifier: Notifier;
  private readonly http: EmulatorServer;
  private readonly mis = new MisbehaviourQueue();
  private readonly opts: TBankOptions;
  private readonly cancels = new Map<string, { hash: string; answer: Answer }>();
  private nextId = 3_000_000_000 + Math.floor(Math.random() * 1_000_000);
  private nextCardId = 350_000_000;
  private nextRebillId = 1_700_000_000_000;
  /** [14]: RebillIds issued, with the card each one charges. */
  readonly rebills = new Map<string, { pan: string; parent: string }>();
  /** [17]: each customer's saved cards. */
  readonly cards = new Map<string, { CardId: string; Pan: string; Status: 'A' | 'I' | 'D'; RebillId: string; ExpDate: string }[]>();
  /** [16]: the Charge method is enabled on this terminal (settable by tests). */
  chargeEnabled = true;
  /** [16]: a Charge of a payment whose Init named no OperationInitiatorType is 1126 (settable by tests). */
  requireInitiatorType = false;
  /** [16]: RebillIds whose parent payment expired: a Charge with one is 262. */
  readonly expiredRebills = new Set<string>();
  /** [18]: what GetState's and the notifications' Amount are (settable by tests). */
  stateAmount: 'left' | 'payment';

  private constructor(opts: TBankOptions) {
    this.opts = opts;
    this.terminalKey = opts.terminalKey ?? '1234567890DEMO';
    this.password = opts.password ?? 'emulator-password';
    this.fiscalization = opts.fiscalization ?? false;
    this.stateAmount = opts.stateAmount ?? 'left';
    this.notifyUrl = opts.notifyUrl;
    // [4]: delivered again until the answer is HTTP 200 with exactly "OK".
    this.notifier = new Notifier({ accepts: (s, t) => s === 200 && t === 'OK', retryBaseMs: opts.retryBaseMs, maxAttempts: opts.maxAttempts });
    this.http = new EmulatorServer((r) => this.route(r));
  }

  static async start(opts: TBankOptions = {}) {
    const e = new TBankEmulator(opts);
    await e.http.start();
    return e;
  }

  get baseUrl() { return this.http.baseUrl; }
  /** What a connector puts in settings.base_url (production: https://securepay.tinkoff.ru/v2). */
  get apiUrl() { return `${this.http.baseUrl}/v2`; }

  async stop() {
    this.notifier.stop();
    await this.http.stop();
  }

  misbehave(m: Misbehaviour) {
    if (isNotificationSwitch(m)) this.notifier.set(m); else this.mis.add(m);
  }

  clearMisbehaviour() { this.mis.clear(); this.notifier.mode = 'normal'; }

  flushNotifications() { this.notifier.flushNotifications(); }

  idle() { return this.notifier.idle(); }

  /** Signs a request body as a client must ([1]); for tests that speak the API directly. */
  sign<T extends Record<string, unknown>>(body: T): T & { Token: string } {
    return { ...body, Token: tbankToken(body, this.password) };
  }

  // ---------------------------------------------------------------- routing

  private async route(r: Req): Promise<Answer | null> {
    if (r.path.startsWith('/new/') || r.path.startsWith('/acs/') || r.path.startsWith('/sbp/')) return this.page(r);
    const m = /^\/v2\/([A-Za-z]+)$/.exec(r.path);
    if (!m || r.method !== 'POST') return { status: 404, body: 'Not Found', contentType: 'text/plain' };
    const op = m[1]!;
    const a = await this.api(op, r);
    if (a) {
      let code: string | undefined;
      let paymentId: string | undefined;
      try { code = (JSON.parse(a.body) as { ErrorCode?: string }).ErrorCode; } catch { /* a 5xx page */ }
      try {
        const id = (JSON.parse(r.raw) as { PaymentId?: unknown }).PaymentId;
        if (typeof id === 'string' || typeof id === 'number') paymentId = String(id);
      } catch { /* not JSON */ }
      this.requests.push({ op, paymentId, at: Date.now(), errorCode: code, status: a.status });
    }
    return a;
  }

  /** [5]: failures are HTTP 200 with Success false and a string ErrorCode. */
  private fail(code: string, message: string, details = '', extra: Record<string, unknown> = {}): Answer {
    return json(200, { Success: false, ErrorCode: code, Message: message, Details: details, ...extra });
  }

  private async api(op: string, r: Req): Promise<Answer | null> {
    let b: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(r.raw || 'null');
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      b = parsed as Record<string, unknown>;
    } catch {
      return this.fail('9999', 'Неверные параметры.', 'Тело запроса не является JSON-объектом');
    }
    if (b.TerminalKey !== this.terminalKey) return this.fail('331', 'Неверный терминал', 'Терминал не найден');
    // [1][5]: the Token is checked before anything else is looked at.
    const expected = tbankToken(b, this.password);
    const got = typeof b.Token === 'string' ? b.Token : '';
    if (got.length !== expected.length || !timingSafeEqual(Buffer.from(got), Buffer.from(expected))) {
      return this.fail('204', 'Неверные параметры.', 'Неверный токен. Проверьте пару TerminalKey/SecretKey.');
    }
    const handler = ({
      Init: () => this.init(b),
      GetState: () => this.getState(b),
      Confirm: () => this.confirm(b),
      Cancel: () => this.cancel(b),
      GetQr: () => this.getQr(b),
      SbpPayTest: () => this.sbpPayTest(b),
      CheckOrder: () => this.checkOrder(b),
      Charge: () => this.charge(b),
      GetCardList: () => this.getCardList(b),
      RemoveCard: () => this.removeCard(b),
    } as Record<string, () => Answer | Promise<Answer>>)[op];
    if (!handler) return this.fail('9999', 'Неверные параметры.', `Метод ${op} не поддерживается эмулятором`);
    // A T-Bank error before anything is applied (tests: 9001 "retry later", 9999, 3...).
    const failing = this.mis.take(op, (x) => !!x.errorCode);
    if (failing) return this.fail(failing.errorCode!, failing.errorCode === '9001' ? 'Повторите попытку позже' : 'Внутренняя ошибка', 'EMULATOR: an error asked for by the test');
    // Applied, then an error without a Status: what it did is known only from GetState.
    const late = this.mis.take(op, (x) => !!x.errorAfterApply);
    if (late) {
      await handler();
      return this.fail(late.errorAfterApply!, 'Внутренняя ошибка', 'EMULATOR: applied, then an error asked for by the test');
    }
    const m = this.mis.take(op, (x) => !x.errorCode && !x.errorAfterApply);
    return this.http.guarded(r, m, (s) => ({ status: s, body: `<html><body><h1>${s}</h1></body></html>`, contentType: 'text/html' }), handler);
  }

  private payment(b: Record<string, unknown>): TbPayment | Answer {
    const id = b.PaymentId;
    if ((typeof id !== 'string' && typeof id !== 'number') || String(id) === '') return this.fail('9999', 'Неверные параметры.', 'Поле PaymentId не должно быть пустым');
    const p = this.payments.get(String(id));
    // EMULATOR: the code for an unknown PaymentId is not in [5]; 9999 with a detail.
    return p ?? this.fail('9999', 'Неверные параметры.', `Платеж ${String(id)} не найден`);
  }

  private amountParam(v: unknown, required: boolean): number | Answer | undefined {
    if (v === undefined && !required) return undefined;
    // [2]: Amount is a Number in kopecks ("3 руб. 12 коп. — это число 312").
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) return this.fail('9999', 'Неверные параметры.', 'Поле Amount должно быть целым положительным числом копеек');
    return v;
  }

  /**
   * [9][10]: on a fiscalized terminal the operation needs a Receipt: none is 309 (T-Bank's own
   * answer); its Items' Amounts not adding up to the operation's amount (kopecks) is 308. A receipt
   * that breaks [9]'s schema (no Email and no Phone, a Taxation, Tax, PaymentMethod or
   * PaymentObject outside its list, Name empty or over 128, Price or Amount not whole kopecks,
   * Amount != Price x Quantity, Quantity not positive or over 3 decimals) is 309 with Details naming
   * the field (EMULATOR: the code for a malformed receipt is not documented; 309 is the stricter
   * reading). Without an online cash register a Receipt is not checked (EMULATOR).
   */
  private receiptRefusal(raw: unknown, amount: number): Answer | null {
    if (!this.fiscalization) return null;
    const bad = (detail: string) => this.fail('309', 'Неверные параметры.', detail);
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return bad('{request.validate.expected.receipt}');
    const r = raw as Record<string, unknown>;
    const email = typeof r.Email === 'string' && /^[^\s@]+@[^\s@]+$/.test(r.Email) && r.Email.length <= 64;
    const phone = typeof r.Phone === 'string' && /^\+\d{10,15}$/.test(r.Phone);
    if (!email && !phone) return bad('Receipt: заполните Email или Phone');
    if (!TB_TAXATION.has(r.Taxation as string)) return bad('Receipt.Taxation: недопустимое значение');
    // [19]: FfdVersion "1.05" or "1.2"; a 1.2 register takes only 1.2 receipts (EMULATOR: the stricter reading).
    if (r.FfdVersion !== undefined && r.FfdVersion !== '1.05' && r.FfdVersion !== '1.2') return bad('Receipt.FfdVersion: 1.05 или 1.2');
    const ffd12 = r.FfdVersion === '1.2';
    if (this.opts.ffd12 && !ffd12) return bad('Receipt.FfdVersion: касса работает по ФФД 1.2');
    if (!Array.isArray(r.Items) || r.Items.length === 0) return bad('Receipt.Items не должен быть пустым');
    let total = 0;
    for (const [i, it] of (r.Items as Record<string, unknown>[]).entries()) {
      const at = `Receipt.Items[${i}]`;
      if (!it || typeof it !== 'object') return bad(`${at}: объект ожидается`);
      if (typeof it.Name !== 'string' || it.Name === '' || it.Name.length > 128) return bad(`${at}.Name`);
      if (!Number.isSafeInteger(it.Price) || (it.Price as number) < 0) return bad(`${at}.Price: целое число копеек`);
      if (typeof it.Quantity !== 'number' || !(it.Quantity > 0) || Math.abs(it.Quantity * 1000 - Math.round(it.Quantity * 1000)) > 1e-6) return bad(`${at}.Quantity`);
      if (!Number.isSafeInteger(it.Amount) || it.Amount !== Math.round((it.Price as number) * it.Quantity)) return bad(`${at}.Amount: Price x Quantity`);
      if (!TB_TAX.has(it.Tax as string)) return bad(`${at}.Tax: недопустимое значение`);
      if (it.PaymentMethod !== undefined && !TB_PAYMENT_METHODS.has(it.PaymentMethod as string)) return bad(`${at}.PaymentMethod`);
      if (it.PaymentObject !== undefined && !(ffd12 ? TB_PAYMENT_OBJECTS_12 : TB_PAYMENT_OBJECTS).has(it.PaymentObject as string)) return bad(`${at}.PaymentObject`);
      if (ffd12 && (typeof it.MeasurementUnit !== 'string' || it.MeasurementUnit === '')) return bad(`${at}.MeasurementUnit: обязателен для ФФД 1.2`);
      total += it.Amount as number;
    }
    return total === amount ? null : this.fail('308', 'The amount in the check and in the payment do not match.', `Сумма позиций чека ${total} не равна сумме ${amount}`);
  }

  // ---------------------------------------------------------------- operations

  private init(b: Record<string, unknown>): Answer {
    const amount = this.amountParam(b.Amount, true);
    if (typeof amount !== 'number') return amount as Answer;
    if (typeof b.OrderId !== 'string' || b.OrderId === '' || b.OrderId.length > 50) return this.fail('9999', 'Неверные параметры.', 'Поле OrderId должно быть строкой от 1 до 50 символов');
    if (b.Description !== undefined && (typeof b.Description !== 'string' || b.Description.length > 250)) return this.fail('9999', 'Неверные параметры.', 'Поле Description слишком длинное');
    if (b.PayType !== undefined && b.PayType !== 'O' && b.PayType !== 'T') return this.fail('9999', 'Неверные параметры.', 'Поле PayType: O или T');
    for (const k of ['SuccessURL', 'FailURL', 'NotificationURL'] as const) {
      if (b[k] !== undefined && (typeof b[k] !== 'string' || !/^https?:\/\//.test(b[k]))) return this.fail('9999', 'Неверные параметры.', `Поле ${k} должно быть URL`);
    }
    // [14]: a parent payment is Recurrent "Y" with the customer's CustomerKey.
    if (b.Recurrent !== undefined && b.Recurrent !== 'Y') return this.fail('9999', 'Неверные параметры.', 'Поле Recurrent: Y');
    if (b.Recurrent === 'Y' && (typeof b.CustomerKey !== 'string' || b.CustomerKey === '' || b.CustomerKey.length > 36)) {
      return this.fail('9999', 'Неверные параметры.', 'Для рекуррентного платежа нужен CustomerKey');
    }
    // [16]: the operation's initiator, when named, must be one of the table's and agree with Recurrent.
    const data = b.DATA && typeof b.DATA === 'object' ? b.DATA as Record<string, unknown> : undefined;
    const initiator = data?.OperationInitiatorType;
    if (initiator !== undefined) {
      if (typeof initiator !== 'string' || !['0', '1', '2', 'R', 'I'].includes(initiator)) {
        return this.fail('1125', 'Некорректное значение OperationInitiatorType. Должно быть одно из списка', '');
      }
      if ((initiator === '1') !== (b.Recurrent === 'Y')) {
        return this.fail('1126', 'Несопоставимые значения rebillId или Recurrent с переданным значением OperationInitiatorType', '');
      }
    }
    const refused = this.receiptRefusal(b.Receipt, amount);
    if (refused) return refused;
    let due = Date.now() + 24 * 3600_000; // [2]: RedirectDueDate defaults to 24 hours.
    if (b.RedirectDueDate !== undefined) {
      // [19]: `YYYY-MM-DDTHH24:MI:SS+GMT`, at least 1 minute and at most 90 days ahead (EMULATOR: 5 s of clock slack).
      const ok = typeof b.RedirectDueDate === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/.test(b.RedirectDueDate);
      const t = ok ? Date.parse(b.RedirectDueDate as string) : NaN;
      if (Number.isNaN(t)) return this.fail('9999', 'Неверные параметры.', 'Поле RedirectDueDate: формат YYYY-MM-DDTHH24:MI:SS+GMT');
      if (t < Date.now() + 55_000 || t > Date.now() + 90 * 86_400_000 + 5_000) return this.fail('9999', 'Неверные параметры.', 'Поле RedirectDueDate: от 1 минуты до 90 дней');
      due = t;
    }
    const id = String(this.nextId++);
    const p: TbPayment = {
      PaymentId: id, OrderId: b.OrderId, Amount: amount, OriginalAmount: amount, Status: 'NEW',
      PayType: (b.PayType as 'O' | 'T' | undefined) ?? this.opts.defaultPayType ?? 'O',
      Description: b.Description as string | undefined, ErrorCode: '0',
      SuccessURL: b.SuccessURL as string | undefined, FailURL: b.FailURL as string | undefined,
      NotificationURL: b.NotificationURL as string | undefined, DueAt: due,
      Data: b.DATA && typeof b.DATA === 'object' ? b.DATA as Record<string, unknown> : undefined,
      sbp: false, formCode: hex(6), history: ['NEW'],
      ...(b.Recurrent === 'Y' ? { Recurrent: true, CustomerKey: b.CustomerKey as string } : {}),
      ...(typeof initiator === 'string' ? { Initiator: initiator } : {}),
    };
    // [2]: Init does not deduplicate by OrderId; CheckOrder lists every payment of an order.
    this.payments.set(id, p);
    if (b.Receipt !== undefined) this.receipts.push({ op: 'Init', paymentId: id, receipt: b.Receipt as Record<string, unknown> });
    return json(200, {
      Success: true, ErrorCode: '0', TerminalKey: this.terminalKey, Status: p.Status, PaymentId: id,
      OrderId: p.OrderId, Amount: p.Amount, PaymentURL: `${this.baseUrl}/new/${p.formCode}`,
    });
  }

  private getState(b: Record<string, unknown>): Answer {
    const p = this.payment(b);
    if ('status' in p) return p;
    this.expireIfDue(p);
    return json(200, {
      Success: true, ErrorCode: '0', Message: 'OK', TerminalKey: this.terminalKey, Status: p.Status,
      PaymentId: p.PaymentId, OrderId: p.OrderId, Amount: this.amountOf(p),
    });
  }

  private confirm(b: Record<string, unknown>): Answer {
    const p = this.payment(b);
    if ('status' in p) return p;
    const amount = this.amountParam(b.Amount, false);
    if (amount !== undefined && typeof amount !== 'number') return amount;
    // [2]: Confirm finishes a two-stage payment held in AUTHORIZED.
    if (p.Status !== 'AUTHORIZED' && p.Status !== 'PARTIAL_REVERSED') return this.fail('8', 'Неверный статус транзакции', `Платеж в статусе ${p.Status}`);
    if (amount !== undefined && amount > p.Amount) return this.fail('9999', 'Неверные параметры.', 'Сумма подтверждения больше суммы авторизации');
    const refused = this.receiptRefusal(b.Receipt, amount ?? p.Amount);
    if (refused) return refused;
    if (b.Receipt !== undefined) this.receipts.push({ op: 'Confirm', paymentId: p.PaymentId, receipt: b.Receipt as Record<string, unknown> });
    if (amount !== undefined) p.Amount = amount;
    this.move(p, 'CONFIRMING');
    this.move(p, 'CONFIRMED', true);
    return json(200, { Success: true, ErrorCode: '0', TerminalKey: this.terminalKey, Status: p.Status, PaymentId: p.PaymentId, OrderId: p.OrderId, Amount: p.Amount });
  }

  private cancel(b: Record<string, unknown>): Answer {
    // [2]: ExternalRequestId makes a Cancel idempotent: the same one answers the same.
    // [11]: not for SBP: a repeated SBP Cancel is a new refund.
    const sbp = this.payments.get(String(b.PaymentId))?.sbp === true;
    const ext = typeof b.ExternalRequestId === 'string' && !sbp ? b.ExternalRequestId : undefined;
    const hash = createHash('sha256').update(`${String(b.PaymentId)}:${String(b.Amount)}`).digest('hex');
    if (ext) {
      const seen = this.cancels.get(ext);
      if (seen && seen.hash === hash) return seen.answer;
      if (seen) return this.fail('9999', 'Неверные параметры.', 'ExternalRequestId уже использован для другой операции');
    }
    const a = this.cancelInner(b);
    if (ext && (JSON.parse(a.body) as { Success: boolean }).Success) this.cancels.set(ext, { hash, answer: a });
    return a;
  }

  private cancelInner(b: Record<string, unknown>): Answer {
    const p = this.payment(b);
    if ('status' in p) return p;
    const amount = this.amountParam(b.Amount, false);
    if (amount !== undefined && typeof amount !== 'number') return amount;
    this.expireIfDue(p);
    const before = p.Amount;
    const ok = (status: TbStatus) => json(200, {
      Success: true, ErrorCode: '0', TerminalKey: this.terminalKey, Status: status, PaymentId: p.PaymentId, OrderId: p.OrderId,
      OriginalAmount: before, NewAmount: p.Amount, ...(b.ExternalRequestId ? { ExternalRequestId: b.ExternalRequestId } : {}),
    });
    if (p.Status === 'NEW' || p.Status === 'FORM_SHOWED') {
      p.Amount = 0;
      this.move(p, 'CANCELED', true);
      return ok('CANCELED');
    }
    // [12] EMULATOR: one SBP refund at a time.
    if (p.Status === 'ASYNC_REFUNDING') return this.fail('8', 'Неверный статус транзакции', 'Платеж в статусе ASYNC_REFUNDING');
    const authorized = p.Status === 'AUTHORIZED' || p.Status === 'PARTIAL_REVERSED';
    const confirmed = p.Status === 'CONFIRMED' || p.Status === 'PARTIAL_REFUNDED';
    if (!authorized && !confirmed) return this.fail('8', 'Неверный статус транзакции', `Платеж в статусе ${p.Status} нельзя отменить`);
    const take = amount ?? p.Amount;
    // Refunds never exceed what is left of the payment (EMULATOR: code 8; 9999 is an internal error, retried).
    if (take > p.Amount) return this.fail('8', 'Неверный статус транзакции', 'Сумма отмены больше остатка платежа');
    // [19]: a full Cancel (all of the payment, nothing refunded before) carries no receipt: the register reverses the payment's own.
    const full = take === p.Amount && (p.Status === 'CONFIRMED' || p.Status === 'AUTHORIZED');
    if (full && b.Receipt !== undefined && this.fiscalization) return this.fail('309', 'Неверные параметры.', 'Receipt: при полной отмене структура чека не передается');
    const refused = full ? null : this.receiptRefusal(b.Receipt, take);
    if (refused) return refused;
    this.cancelsSeen.push({ paymentId: p.PaymentId, amount: take, full, receipt: b.Receipt !== undefined });
    if (b.Receipt !== undefined) this.receipts.push({ op: 'Cancel', paymentId: p.PaymentId, receipt: b.Receipt as Record<string, unknown> });
    p.Amount -= take;
    if (authorized) {
      this.move(p, 'REVERSING');
      this.move(p, p.Amount === 0 ? 'REVERSED' : 'PARTIAL_REVERSED', true);
    } else if (p.sbp) {
      // [12]: an SBP refund passes through ASYNC_REFUNDING; what is left is already lowered.
      this.move(p, 'ASYNC_REFUNDING');
      const settle = this.opts.sbpRefundSettleMs === undefined ? 0 : this.opts.sbpRefundSettleMs;
      if (settle !== null) setTimeout(() => this.settleSbpRefunds(p.PaymentId), settle).unref();
    } else {
      this.move(p, 'REFUNDING');
      this.move(p, p.Amount === 0 ? 'REFUNDED' : 'PARTIAL_REFUNDED', true);
    }
    return ok(p.Status);
  }

  /** [12]: the SBP refund of a payment in ASYNC_REFUNDING is done: PARTIAL_REFUNDED or REFUNDED, notified. */
  settleSbpRefunds(paymentId: string) {
    const p = this.payments.get(paymentId);
    if (p?.Status === 'ASYNC_REFUNDING') this.move(p, p.Amount === 0 ? 'REFUNDED' : 'PARTIAL_REFUNDED', true);
  }

  private async getQr(b: Record<string, unknown>): Promise<Answer> {
    const p = this.payment(b);
    if ('status' in p) return p;
    const type = b.DataType ?? 'PAYLOAD';
    if (type !== 'PAYLOAD' && type !== 'IMAGE') return this.fail('9999', 'Неверные параметры.', 'DataType: PAYLOAD или IMAGE');
    // [6]: SBP takes one-stage payments of at least 10 RUB (EMULATOR: code 3016 is unconfirmed).
    if (p.PayType !== 'O') return this.fail('3001', 'Оплата через СБП недоступна', 'СБП: только одностадийная оплата');
    if (p.OriginalAmount < 1000) return this.fail('3016', 'Неверная сумма', 'Сумма оплаты через СБП от 10 рублей');
    if (p.Status !== 'NEW' && p.Status !== 'FORM_SHOWED') return this.fail('8', 'Неверный статус транзакции', `Платеж в статусе ${p.Status}`);
    p.sbp = true;
    if (p.Status === 'NEW') this.move(p, 'FORM_SHOWED');
    // EMULATOR: the payload is a link to the emulator's stand-in bank page (real: https://qr.nspk.ru/...).
    const payload = `${this.baseUrl}/sbp/${p.PaymentId}`;
    const data = type === 'IMAGE' ? await QRCode.toString(payload, { type: 'svg' }) : payload;
    return json(200, { TerminalKey: this.terminalKey, OrderId: p.OrderId, Success: true, Data: data, PaymentId: Number(p.PaymentId), ErrorCode: '0', Message: 'OK', RequestKey: hex(16) });
  }

  private sbpPayTest(b: Record<string, unknown>): Answer {
    const p = this.payment(b);
    if ('status' in p) return p;
    if (b.IsDeadlineExpired === true && b.IsRejected === true) return this.fail('9999', 'Неверные параметры.', 'IsDeadlineExpired и IsRejected не могут использоваться одновременно');
    if (!p.sbp || p.Status !== 'FORM_SHOWED') return this.fail('8', 'Неверный статус транзакции', 'Сначала вызовите GetQr');
    this.payerAction(p.PaymentId, b.IsDeadlineExpired === true ? 'expire' : b.IsRejected === true ? 'sbp-reject' : 'sbp-confirm');
    return json(200, { Success: true, ErrorCode: '0', Message: 'OK', Details: '0' });
  }

  /** [14]: the payment (Init'ed, NEW) paid with a saved card's details by its RebillId; [15] on a payment not NEW. */
  private charge(b: Record<string, unknown>): Answer {
    const p = this.payment(b);
    if ('status' in p) return p;
    // [16]: Charge is off unless T-Bank enabled it for the terminal.
    if (!this.chargeEnabled) return this.fail('10', 'Метод Charge заблокирован для данного терминала', '');
    const rebillId = typeof b.RebillId === 'string' || typeof b.RebillId === 'number' ? String(b.RebillId) : '';
    if (this.expiredRebills.has(rebillId)) return this.fail('262', 'Истек срок действия родительского платежа', '');
    const rebill = this.rebills.get(rebillId);
    // EMULATOR: the code for an unknown (or removed) RebillId is not documented; 104 "Ошибка выполения
    // рекуррента" of [16]'s table (9999 there is "Внутренняя ошибка системы", a technical error).
    if (!rebill) return this.fail('104', 'Ошибка выполения рекуррента', 'RebillId не найден');
    // [16]: only a payment Init'ed as charged by RebillId (2, R, I) may be charged.
    if (p.Initiator !== undefined ? !['2', 'R', 'I'].includes(p.Initiator) : this.requireInitiatorType) {
      return this.fail('1126', 'Несопоставимые значения rebillId или Recurrent с переданным значением OperationInitiatorType', '');
    }
    if (p.Status !== 'NEW') return this.fail('4', 'Запрашиваемое состояние транзакции является неверным.', 'Изменение статуса недопустимо.');
    p.card = { pan: rebill.pan, cardId: this.nextCardId++ };
    this.move(p, 'AUTHORIZING');
    const rule = TB_CARDS[rebill.pan] ?? { outcome: 'success' as const };
    if (rule.outcome === 'decline') {
      p.ErrorCode = rule.errorCode ?? '1001';
      p.Message = rule.message;
      this.move(p, 'REJECTED', true);
    } else {
      this.authorize(p);
    }
    return json(200, { Success: p.ErrorCode === '0', ErrorCode: p.ErrorCode, TerminalKey: this.terminalKey, Status: p.Status, PaymentId: p.PaymentId, OrderId: p.OrderId, Amount: p.Amount, ...(p.Message ? { Message: p.Message } : {}) });
  }

  /** [17]: the customer's cards, removed ones included. */
  private getCardList(b: Record<string, unknown>): Answer {
    if (typeof b.CustomerKey !== 'string' || b.CustomerKey === '') return this.fail('9999', 'Неверные параметры.', 'Поле CustomerKey не должно быть пустым');
    const list = this.cards.get(b.CustomerKey);
    if (!list) return this.fail('7', 'Неверный статус покупателя', `Покупатель ${b.CustomerKey} не найден`);
    return json(200, list.map((c) => ({ ...c })));
  }

  /** [17]: the card deleted (status D); its RebillId charges no more. */
  private removeCard(b: Record<string, unknown>): Answer {
    const card = typeof b.CustomerKey === 'string' ? this.cards.get(b.CustomerKey)?.find((c) => c.CardId === String(b.CardId)) : undefined;
    if (!card) return this.fail('231', 'Не найден идентификатор карты', '');
    card.Status = 'D';
    this.rebills.delete(card.RebillId);
    return json(200, { TerminalKey: this.terminalKey, Status: 'D', CustomerKey: b.CustomerKey, CardId: card.CardId, CardType: 0, Success: true, ErrorCode: '0' });
  }

  private checkOrder(b: Record<string, unknown>): Answer {
    if (typeof b.OrderId !== 'string' || b.OrderId === '') return this.fail('9999', 'Неверные параметры.', 'Поле OrderId не должно быть пустым');
    const list = [...this.payments.values()].filter((p) => p.OrderId === b.OrderId);
    // [13]: an order never seen is error 335, not an empty list.
    if (list.length === 0) return this.fail('335', 'Заказ не найден', `Заказ ${b.OrderId} не найден`);
    for (const p of list) this.expireIfDue(p);
    return json(200, {
      TerminalKey: this.terminalKey, OrderId: b.OrderId, Success: true, ErrorCode: '0', Message: 'OK', Details: 'None',
      // [2]: inside Payments[] ErrorCode is a number, outside a string.
      Payments: list.map((p) => ({ PaymentId: p.PaymentId, Amount: p.Amount, Status: p.Status, RRN: String(Number(p.PaymentId) % 1e8), Success: p.ErrorCode === '0', ErrorCode: Number(p.ErrorCode), Message: p.Message ?? 'None' })),
    });
  }

  // ---------------------------------------------------------------- state and notifications

  private move(p: TbPayment, s: TbStatus, notify = false) {
    p.Status = s;
    p.history.push(s);
    if (notify) this.emit(p);
  }

  private expireIfDue(p: TbPayment) {
    if ((p.Status === 'NEW' || p.Status === 'FORM_SHOWED') && Date.now() > p.DueAt) this.move(p, 'DEADLINE_EXPIRED', true);
  }

  /** [4][8]: the notification body, signed with the terminal's password. */
  private notificationBody(p: TbPayment, password = this.password): Record<string, unknown> {
    const body: Record<string, unknown> = {
      TerminalKey: this.terminalKey, OrderId: p.OrderId, Success: p.ErrorCode === '0',
      Status: p.Status, PaymentId: Number(p.PaymentId), ErrorCode: p.ErrorCode, Amount: this.amountOf(p),
    };
    if (p.card) Object.assign(body, { CardId: p.card.cardId, Pan: maskPan(p.card.pan), ExpDate: '1230' });
    if (p.RebillId && p.Status === 'AUTHORIZED') body.RebillId = p.RebillId;
    if (p.Data) body.Data = p.Data;
    body.Token = tbankToken(body, password);
    return body;
  }

  /** [18]: the Amount GetState and the notifications show. */
  private amountOf(p: TbPayment): number {
    return this.stateAmount === 'payment' ? p.OriginalAmount : p.Amount;
  }

  private emit(p: TbPayment) {
    this.notifier.notify(p.NotificationURL ?? this.notifyUrl, this.notificationBody(p));
  }

  /** The clock passes a payment's RedirectDueDate (the next read finds it expired). */
  passDueDate(paymentId: string) {
    const p = this.payments.get(paymentId);
    if (!p) throw new Error(`unknown payment ${paymentId}`);
    p.DueAt = Date.now() - 1;
  }

  /**
   * [19]: the register's report on a payment's receipt ("Income") or a refund's ("IncomeReturn"),
   * signed; `errorCode` other than "0" is a receipt the register did not register, with its message.
   * Delivered like any notification (until answered "OK").
   */
  notifyReceipt(paymentId: string, o: { type?: 'Income' | 'IncomeReturn'; amount?: number; errorCode?: string; errorMessage?: string; url?: string } = {}) {
    const p = this.payments.get(paymentId);
    if (!p) throw new Error(`unknown payment ${paymentId}`);
    const code = o.errorCode ?? '0';
    const body: Record<string, unknown> = {
      TerminalKey: this.terminalKey, OrderId: p.OrderId, Success: code === '0', Status: 'RECEIPT', PaymentId: Number(p.PaymentId),
      ErrorCode: code, ...(o.errorMessage ? { ErrorMessage: o.errorMessage } : {}), Amount: o.amount ?? p.OriginalAmount,
      FiscalNumber: 1, ShiftNumber: 1, ReceiptDatetime: new Date().toISOString(), FnNumber: '9999078900004792', EcrRegNumber: '0000000000045678',
      FiscalDocumentNumber: this.nextId++, FiscalDocumentAttribute: 1234567890, Type: o.type ?? 'Income',
      Receipt: { FfdVersion: '1.05', Taxation: 'osn', Items: [] },
    };
    body.Token = tbankToken(body, this.password);
    this.notifier.notify(o.url ?? p.NotificationURL ?? this.notifyUrl, body);
  }

  /**
   * Posts a notification the service must not believe, once, and returns the receiver's answer:
   * 'wrong-token' is signed with another password; 'tampered' is signed right and then has its
   * Amount raised.
   */
  async forgeNotification(paymentId: string, kind: 'wrong-token' | 'tampered' = 'wrong-token', status: TbStatus = 'CONFIRMED') {
    const p = this.payments.get(paymentId);
    if (!p) throw new Error(`unknown payment ${paymentId}`);
    const url = p.NotificationURL ?? this.notifyUrl;
    if (!url) throw new Error('no notification URL');
    const fake = { ...p, Status: status, ErrorCode: '0' };
    const body = this.notificationBody(fake, kind === 'wrong-token' ? 'not-the-password' : this.password);
    if (kind === 'tampered') body.Amount = Number(body.Amount) * 10;
    return this.notifier.postOnce(url, body);
  }

  // ---------------------------------------------------------------- the payer

  payerAction(id: string, action: TbPayerAction, opts: { card?: string } = {}): TbPayment {
    const p = this.payments.get(id);
    if (!p) throw new Error(`unknown payment ${id}`);
    if (action === 'expire') {
      if (p.Status !== 'NEW' && p.Status !== 'FORM_SHOWED' && p.Status !== '3DS_CHECKING') throw new Error(`payment ${id} is ${p.Status}`);
      this.move(p, 'DEADLINE_EXPIRED', true);
      return p;
    }
    if (action === '3ds-confirm' || action === '3ds-fail') {
      if (p.Status !== '3DS_CHECKING') throw new Error(`payment ${id} is not in 3DS_CHECKING`);
      if (action === '3ds-fail') {
        // [3][5]: AUTH_FAIL "did not pass 3-D Secure", ErrorCode 101.
        p.ErrorCode = '101';
        p.Message = 'Не пройдена идентификация 3DS';
        this.move(p, 'AUTH_FAIL', true);
      } else {
        this.authorize(p);
      }
      return p;
    }
    if (p.Status !== 'NEW' && p.Status !== 'FORM_SHOWED') throw new Error(`payment ${id} is ${p.Status}, the payer can no longer act`);
    if (action === 'sbp-confirm' || action === 'sbp-reject') {
      if (p.PayType !== 'O') throw new Error('SBP is one-stage only');
      p.sbp = true;
      // EMULATOR: the ErrorCode of a payer's bank refusing an SBP payment is not in [5].
      if (action === 'sbp-reject') { p.ErrorCode = '3019'; p.Message = 'Отказ банка'; this.move(p, 'REJECTED', true); return p; }
      // [6]: SBP goes straight to CONFIRMED (no AUTHORIZED step).
      this.move(p, 'CONFIRMED', true);
      return p;
    }
    const card = (opts.card ?? '4300000000000777').replace(/\s+/g, '');
    p.card = { pan: card, cardId: this.nextCardId++ };
    if (p.Status === 'NEW') this.move(p, 'FORM_SHOWED');
    this.move(p, 'AUTHORIZING');
    const rule = action === 'decline' ? { outcome: 'decline' as const, errorCode: '1001', message: 'Свяжитесь с банком' } : TB_CARDS[card] ?? { outcome: 'success' as const };
    if (rule.outcome === 'decline') {
      p.ErrorCode = rule.errorCode ?? '1001';
      p.Message = rule.message;
      this.move(p, 'REJECTED', true);
    } else if (rule.outcome === '3ds') {
      this.move(p, '3DS_CHECKING');
    } else {
      this.authorize(p);
    }
    return p;
  }

  private authorize(p: TbPayment) {
    // [14]: a parent payment paid: its RebillId (from the AUTHORIZED notification on).
    if (p.Recurrent && p.card && !p.RebillId) {
      p.RebillId = String(this.nextRebillId++);
      this.rebills.set(p.RebillId, { pan: p.card.pan, parent: p.PaymentId });
      // [17]: the card is the customer's saved card.
      if (p.CustomerKey) {
        const list = this.cards.get(p.CustomerKey) ?? [];
        list.push({ CardId: String(p.card.cardId), Pan: maskPan(p.card.pan), Status: 'A', RebillId: p.RebillId, ExpDate: '1230' });
        this.cards.set(p.CustomerKey, list);
      }
    }
    this.move(p, 'AUTHORIZED', true);
    if (p.PayType === 'O') {
      // One-stage: the bank confirms by itself; both AUTHORIZED and CONFIRMED are notified [4].
      this.move(p, 'CONFIRMING');
      this.move(p, 'CONFIRMED', true);
    }
  }

  // ---------------------------------------------------------------- hosted pages

  private async page(r: Req): Promise<Answer> {
    const [, kind, ref, step] = r.path.split('/');
    const p = kind === 'new' ? [...this.payments.values()].find((x) => x.formCode === ref) : this.payments.get(ref ?? '');
    if (!p) return html('<h1>Платеж не найден</h1>', 404);
    const form = parseForm(r.raw);
    this.expireIfDue(p);
    const done = () => {
      const success = p.Status === 'CONFIRMED' || p.Status === 'AUTHORIZED';
      const to = success ? p.SuccessURL : p.FailURL;
      return to ? redirect(to) : html(doc('Результат', `<p id="status">${p.Status}</p>`));
    };
    try {
      if (kind === 'sbp') {
        // The emulator's stand-in for the payer's bank app opened from the QR code.
        if (r.method === 'POST') { this.payerAction(p.PaymentId, form.action === 'reject' ? 'sbp-reject' : 'sbp-confirm'); return done(); }
        return html(doc(`СБП: ${rub(p.Amount)}`, p.Status === 'FORM_SHOWED' || p.Status === 'NEW'
          ? '<form method="post"><button name="action" value="confirm" id="confirm">Оплатить</button><button name="action" value="reject" id="reject">Отказаться</button></form>'
          : `<p id="status">${p.Status}</p>`));
      }
      if (kind === 'acs') {
        if (r.method === 'POST') { this.payerAction(p.PaymentId, form.result === 'fail' ? '3ds-fail' : '3ds-confirm'); return done(); }
        return html(doc('3-D Secure', `<form method="post"><button name="result" value="confirm" id="confirm">Подтвердить</button><button name="result" value="fail" id="fail">Ошибка</button></form>`));
      }
      if (r.method === 'POST' && step === 'pay') {
        this.payerAction(p.PaymentId, 'pay', { card: form.card });
        if (p.Status === '3DS_CHECKING') return redirect(`${this.baseUrl}/acs/${p.PaymentId}`);
        return done();
      }
    } catch (e) {
      return html(doc('Ошибка', `<p>${escapeHtml((e as Error).message)}</p>`), 409);
    }
    if (p.Status !== 'NEW' && p.Status !== 'FORM_SHOWED') return done();
    // [3]: FORM_SHOWED once the payer's browser has loaded the form.
    if (p.Status === 'NEW') this.move(p, 'FORM_SHOWED');
    return html(doc(`Оплата ${rub(p.Amount)}`, `<p>${escapeHtml(p.Description ?? '')}</p><form method="post" action="/new/${p.formCode}/pay"><input name="card" id="card" autocomplete="cc-number" placeholder="Номер карты"><button id="pay">Оплатить</button></form>${p.PayType === 'O' ? `<p><a id="sbp" href="/sbp/${p.PaymentId}">Оплатить через СБП</a></p>` : ''}`));
  }
}

function rub(kopecks: number) { return `${Math.floor(kopecks / 100)}.${String(kopecks % 100).padStart(2, '0')} ₽`; }

function doc(title: string, body: string) {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
