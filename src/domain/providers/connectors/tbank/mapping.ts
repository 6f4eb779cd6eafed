import { Decimal } from 'decimal.js';
import { ConnectorRefusedError, type PaymentOutcome, type OperationOutcome } from '../../connector.js';
import type { ProviderAnswer } from '../../provider-http.js';
import type { Receipt } from '../../../receipt/receipt.js';

export interface TbAnswer {
  Success?: boolean; ErrorCode?: string; Message?: string; Details?: string;
  Status?: string; PaymentId?: string | number; OrderId?: string; Amount?: number; PaymentURL?: string; Data?: string;
  OriginalAmount?: number; NewAmount?: number;
  Payments?: { PaymentId: string | number; Amount: number; Status: string }[];
}

/** Statuses of a payment still on its way (developer.tbank.ru/eacq/intro/developer/operation-statuses). */
export const IN_PROGRESS = new Set([
  'NEW', 'FORM_SHOWED', 'PREAUTHORIZING', 'AUTHORIZING', '3DS_CHECKING', '3DS_CHECKED', 'PAY_CHECKING', 'AUTHORIZED',
  'CONFIRMING', 'CONFIRM_CHECKING',
]);
/** Final statuses in which nothing was charged. */
export const DECLINED = new Set(['REJECTED', 'AUTH_FAIL', 'DEADLINE_EXPIRED', 'ATTEMPTS_EXPIRED', 'CANCELED', 'REVERSED']);
/** Statuses a Cancel (our refund) leads to: applied, or still running. */
export const REFUND_DONE = new Set(['REFUNDED', 'PARTIAL_REFUNDED', 'PARTIAL_REVERSED']);
export const REFUND_RUNNING = new Set(['REFUNDING', 'ASYNC_REFUNDING', 'REVERSING']);
/** Payment statuses after a refund: the payment itself was paid. */
export const PAID = new Set(['CONFIRMED', 'REFUNDED', 'PARTIAL_REFUNDED', 'PARTIAL_REVERSED', 'REFUNDING', 'ASYNC_REFUNDING']);

/**
 * ErrorCodes that are the same decline as the sandbox's codes (developer.tbank.ru/eacq/intro/errors;
 * 116 and 103 as insufficient funds: T-Bank's error list as read in issue 29; docs/connectors/tbank.md).
 */
const DECLINE_CODES: Record<string, string> = {
  '1051': 'insufficient_funds', '116': 'insufficient_funds', '103': 'insufficient_funds', '101': '3d_secure_failed', '1001': 'card_declined',
};
/**
 * ErrorCodes that decide nothing (docs/adr/0090-unknown-is-unknown.md): T-Bank's "try again later"
 * and its technical errors. kravetsone/t-kassa-api modern-openapi.json (info.version 1.28), tag
 * "Коды ошибок": 3 "Внутренняя ошибка системы интернет эквайринга", 55 "Повторите попытку позже",
 * 99, 120, 123, 125, 999, 1034, 1089, 9001 "Попробуйте повторить попытку позже", 401 and 9999
 * "Внутренняя ошибка системы", 402, 903, 1030 "Повторите попытку позже". 3040 and 7999 are not in
 * that stored copy of the table; they are answers measured from T-Bank on applied Cancels and are
 * held to the same rule, the side on which no money is lost (the operation's own state decides).
 * After one of these the operation may or may not have applied: never final, never repeated
 * before the provider's state (GetState, CheckOrder) was read.
 */
export const TRANSIENT_CODES = new Set([
  '3', '55', '99', '120', '123', '125', '401', '402', '903', '999', '1030', '1034', '1089', '3040', '7999', '9001', '9999',
]);

/** CheckOrder's "order not found": T-Bank never saw the OrderId (no payment was made for it). */
export const ORDER_NOT_FOUND = '335';
/** ErrorCodes that say our own configuration is wrong (a Cancel refused for them is asked again, not failed). */
export const CONFIG_CODES = new Set(['204', '331']);

/**
 * Saved cards (modern-openapi.json, "Коды ошибок" and the Charge description in kravetsone/t-kassa-api
 * src/index.ts): 10 "Метод Charge заблокирован для данного терминала" (Charge is off by default and
 * enabled by T-Bank on request); 1126 "Несопоставимые значения rebillId или Recurrent с переданным
 * значением OperationInitiatorType"; 262 "Истек срок действия родительского платежа" (the saving
 * payment's RebillId can charge no more). Each is a decisive refusal with our own reason; 262 also
 * revokes the method here. 104 "Ошибка выполения рекуррента" names no cause and is a plain decline.
 */
export const CHARGE_REFUSALS: Record<string, { reason: string; message: string }> = {
  '10': { reason: 'charge_disabled', message: 'T-Bank: recurring charges (the Charge method) are not enabled for this terminal (error 10); ask T-Bank to enable them.' },
  '1126': { reason: 'initiator_mismatch', message: 'T-Bank: OperationInitiatorType does not match Recurrent / RebillId (error 1126).' },
  '262': { reason: 'payment_method_revoked', message: 'T-Bank: the saved card can no longer be charged: its parent payment expired (error 262).' },
};

/**
 * DATA.OperationInitiatorType of Init (modern-openapi.json, "Передача признака инициатора операции"):
 * 0 a payment with the payer, nothing saved (Recurrent N); 1 the payer present and the card saved
 * (Recurrent Y); R a merchant's recurring charge of a saved card (Recurrent N, then Charge with
 * RebillId). Init carries it in DATA, a nested object outside the Token.
 */
export const INITIATOR = { standard: '0', saving: '1', recurring: 'R' } as const;

/**
 * A 200 answer with `Success: true`; anything else is a refusal with T-Bank's ErrorCode
 * (`tbank:204`), or `tbank:http_<status>` for an answer that is not T-Bank's JSON.
 */
export function answered(r: ProviderAnswer, method: string, read = false): TbAnswer {
  const a = r.body as TbAnswer | null;
  if (r.status !== 200 || !a || typeof a !== 'object') throw new ConnectorRefusedError(`tbank:http_${r.status}`, `tbank: ${method} answered HTTP ${r.status}`);
  if (a.Success !== true) {
    const code = a.ErrorCode ?? 'unknown';
    throw new ConnectorRefusedError(`tbank:${code}`, `tbank: ${method}${read ? ' (read)' : ''} refused ${code}: ${[a.Message, a.Details].filter(Boolean).join(' ')}`);
  }
  return a;
}

export function paymentOutcome(ref: string, status: string, amount: number | undefined, errorCode: string, message: string | undefined): PaymentOutcome {
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
 * waits for it (docs/adr/0025-tbank-decline-waits-for-its-reason.md).
 */
export function reasonFollows(o: PaymentOutcome): PaymentOutcome {
  return o.status === 'declined' && o.code !== 'expired' ? { ...o, reasonFollows: true } : o;
}

export function refundOutcome(ref: string, status: string): OperationOutcome {
  if (REFUND_DONE.has(status) || status === 'REVERSED' || status === 'CANCELED') return { status: 'succeeded', ref };
  return { status: 'pending', ref };
}

/** A refund's reference: its payment and what its Cancel left of it (just the PaymentId when T-Bank did not say). */
export function refundRef(paymentId: string, left: unknown): string {
  return typeof left === 'number' && Number.isSafeInteger(left) ? `${paymentId}:${left}` : paymentId;
}

/**
 * YooKassa's tax_system_code as T-Bank's `Taxation` (modern-openapi.json, Receipt_FFD_105 and
 * Receipt_FFD_12: osn, usn_income, usn_income_outcome, esn, patent). 4 (ENVD, `envd`) left the
 * specification: the shop settings refuse it, and a receipt still carrying it is not sent.
 */
const TAXATION: Record<number, string> = { 1: 'osn', 2: 'usn_income', 3: 'usn_income_outcome', 5: 'esn', 6: 'patent' };
/**
 * YooKassa's vat_code 1..12 as T-Bank's `Tax` (docs/connectors/fiscal.md): none, 0 %, 10 %, 20 %,
 * 10/110, 20/120 (Items_FFD_105.Tax); 5 %, 7 %, 5/105, 7/107 (added in the specification's v1.47,
 * Items_FFD_105 and Items_FFD_12.Tax); 22 % and 22/122 from 1 January 2026 (`vat22`, `vat122`).
 */
export const TBANK_TAX: Record<number, string> = {
  1: 'none', 2: 'vat0', 3: 'vat10', 4: 'vat20', 5: 'vat110', 6: 'vat120', 7: 'vat5', 8: 'vat7', 9: 'vat105', 10: 'vat107', 11: 'vat22', 12: 'vat122',
};
/**
 * The unit of every line of an FFD 1.2 receipt (Items_FFD_12.MeasurementUnit, tag 2108: "обязателен,
 * если версия ФД онлайн-кассы — 1.2"; the specification's example and table name the piece `шт`).
 */
export const TBANK_PIECE = 'шт';

/**
 * The receipt as T-Bank takes it in Init, Confirm and a partial Cancel (kravetsone/t-kassa-api
 * modern-openapi.json, schemas Receipt_FFD_105 / Items_FFD_105 and, for an FFD 1.2 register,
 * Receipt_FFD_12 / Items_FFD_12): `FfdVersion` ("1.05" or "1.2"), `Email` or `Phone` (+{digits}),
 * `Taxation`, `Items` [{Name (<= 128), Price (kopecks), Quantity, Amount (kopecks, = Price x
 * Quantity), Tax, PaymentMethod, PaymentObject, and with 1.2 `MeasurementUnit`}]. The Items'
 * Amounts add up to the operation's `Amount`. Nested: never part of the Token (tbankToken;
 * tinkoff-asdk-android AcquiringRequest.kt ignores DATA, Receipt, Receipts and Shops when
 * signing). A code T-Bank has no word for is refused here, before anything is sent.
 */
export function tbReceipt(r: Receipt): Record<string, unknown> {
  const taxation = TAXATION[r.taxSystemCode];
  if (!taxation) throw new ConnectorRefusedError('tbank:receipt_taxation', `tbank: tax_system_code ${r.taxSystemCode} has no T-Bank Taxation (ENVD was abolished)`);
  const out: Record<string, unknown> = { FfdVersion: r.ffdVersion };
  if (r.customer.email) out.Email = r.customer.email;
  if (r.customer.phone) out.Phone = r.customer.phone.startsWith('+') ? r.customer.phone : `+${r.customer.phone}`;
  out.Taxation = taxation;
  out.Items = r.lines.map((l) => {
    const tax = TBANK_TAX[l.vatCode];
    if (!tax) throw new ConnectorRefusedError('tbank:receipt_tax', `tbank: vat_code ${l.vatCode} has no T-Bank Tax`);
    return {
      Name: l.name, Price: kopecks(l.price), Quantity: l.quantity.toNumber(), Amount: kopecks(l.amount), Tax: tax,
      PaymentMethod: l.paymentMode === 'partial_prepayment' ? 'prepayment' : l.paymentMode, PaymentObject: l.paymentSubject,
      ...(r.ffdVersion === '1.2' ? { MeasurementUnit: TBANK_PIECE } : {}),
    };
  });
  return out;
}

/** Kopecks as T-Bank's integer `Amount`, from the Decimal (never through a float). */
export function kopecks(d: Decimal): number {
  const k = d.mul(100);
  if (!k.isInteger() || k.lte(0) || !Number.isSafeInteger(k.toNumber())) {
    throw new ConnectorRefusedError('tbank:invalid_amount', `tbank: ${d.toString()} is not an amount in kopecks`);
  }
  return k.toNumber();
}

/**
 * Init's `RedirectDueDate` from the bill's deadline: T-Bank's form and SBP QR stop taking the
 * payment then (modern-openapi.json, Init.RedirectDueDate: "Если текущая дата превышает дату,
 * которая передана в этом параметре, ссылка для оплаты или возможность платежа по QR-коду
 * становятся недоступными"; at least 1 minute and at most 90 days ahead, `YYYY-MM-DDTHH24:MI:SS+GMT`,
 * 24 hours when absent). Kept inside those bounds; written in UTC, whole seconds.
 */
export function redirectDueDate(until: Date, now = Date.now()): string {
  const at = Math.min(Math.max(until.getTime(), now + 60_000), now + 90 * 86_400_000);
  return new Date(Math.floor(at / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}
