import type { Queryable } from '../db/client.js';
import { MONEY_RECEIVED_STATUSES } from '../kernel/statuses.js';
import { md5Upper } from '../lib/crypto.js';
import type { OutboxEventKind } from '../generated/prisma/enums.js';

/** Fields of a payment postback (spec part 6), all strings exactly as they will be posted. */
export interface PaymentPostbackFields {
  InvId: string;
  OutSum: string;
  Commission: string;
  Currency: string;
  CurrencyIn: string;
  TrsId: string;
  Status: 'SUCCESS' | 'UNDERPAID' | 'OVERPAID' | 'FAIL';
  custom: string;
  /** Optional fields the public clients read (api-in-the-wild.md); absent when unknown. */
  AccountType?: 'BANK_CARD' | 'SBP';
  /** Masked card (BANK_CARD) or the payer's phone (SBP, when the page asked for it). */
  AccountNumber?: string;
  /** What the balance was credited (8 decimals like balances) and in which currency. */
  BalanceAmount?: string;
  BalanceCurrency?: string;
  PayerPhone?: string;
  PayerEmail?: string;
  PayerName?: string;
  PayerComment?: string;
  /** FAIL only: why. */
  ErrorCode?: string;
  ErrorMessage?: string;
  /** The saved card's id when this payment saved one (docs/adr/0074-saved-cards-and-recurring-charges.md). */
  PaymentMethodId?: string;
}

/** Fields of a payout webhook (spec part 6), strings exactly as posted. */
export interface PayoutWebhookFields {
  TrsId: string;
  Amount: string;
  IsAuto: 'true' | 'false';
  Status: 'DECLINED' | 'SUCCESS' | 'FAIL';
  Currency: string;
  Commission: string;
  AccountType: 'BANK_CARD' | 'SBP';
  AccountNumber: string;
  BalanceAmount: string;
  BalanceCommission: string;
  BalanceCurrency: string;
  CommissionApplyType: 'sender' | 'recipient';
}

/** What refund and chargeback postbacks share: the object, its payment and bill, the order id, the money. */
interface PaymentEventFields {
  Id: string;
  PaymentId: string;
  BillId: string;
  InvId: string;
  Amount: string;
  Currency: string;
}

/** Fields of a refund postback (to the shop's Result URL when a refund is SUCCESS or FAIL). */
export interface RefundPostbackFields extends PaymentEventFields {
  Status: 'SUCCESS' | 'FAIL';
}

/** Fields of a chargeback postback (to the shop's Result URL when the operator records one). */
export interface ChargebackPostbackFields extends PaymentEventFields {
  Reason: string;
  Status: 'CHARGEBACK';
}

/** Refund postback: MD5(Amount:Currency:BillId:PaymentId:Id:token), uppercase hex. */
export const refundSignature = (f: Pick<RefundPostbackFields, 'Amount' | 'Currency' | 'BillId' | 'PaymentId' | 'Id'>, token: string): string =>
  md5Upper(`${f.Amount}:${f.Currency}:${f.BillId}:${f.PaymentId}:${f.Id}:${token}`);

/** Chargeback postback: MD5(BillId:PaymentId:Id:token), uppercase hex. */
export const chargebackSignature = (f: Pick<ChargebackPostbackFields, 'BillId' | 'PaymentId' | 'Id'>, token: string): string =>
  md5Upper(`${f.BillId}:${f.PaymentId}:${f.Id}:${token}`);

/** Payment postback and customer redirect: MD5(OutSum:InvId:token), uppercase hex. */
export const paymentSignature = (f: { OutSum: string; InvId: string }, token: string): string =>
  md5Upper(`${f.OutSum}:${f.InvId}:${token}`);

/** Payout webhook: MD5(Amount:TrsId:token), uppercase hex. */
export const payoutSignature = (f: { Amount: string; TrsId: string }, token: string): string =>
  md5Upper(`${f.Amount}:${f.TrsId}:${token}`);

/** The SignatureValue of an event's fields, by its kind (computed at send time). */
export function signEvent(kind: OutboxEventKind, fields: Record<string, string>, token: string): string {
  switch (kind) {
    case 'PAYOUT_WEBHOOK': return payoutSignature(fields as unknown as PayoutWebhookFields, token);
    case 'REFUND_POSTBACK': return refundSignature(fields as unknown as RefundPostbackFields, token);
    case 'CHARGEBACK_POSTBACK': return chargebackSignature(fields as unknown as ChargebackPostbackFields, token);
    default: return paymentSignature(fields as unknown as PaymentPostbackFields, token);
  }
}

/** The fields each kind's signature covers (always posted, empty when absent). */
const SIGNED: Record<OutboxEventKind, readonly string[]> = {
  PAYMENT_POSTBACK: ['OutSum', 'InvId'],
  TEST_POSTBACK: ['OutSum', 'InvId'],
  PAYOUT_WEBHOOK: ['Amount', 'TrsId'],
  REFUND_POSTBACK: ['Amount', 'Currency', 'BillId', 'PaymentId', 'Id'],
  CHARGEBACK_POSTBACK: ['BillId', 'PaymentId', 'Id'],
};

export interface NewEvent {
  merchantId: string;
  kind: OutboxEventKind;
  /** The payment or payout id; with `kind` unique, so a state change enqueues once. */
  aggregateId: string;
  /**
   * The URL configured when the event is enqueued; null when none is set: the event is then
   * kept as DEAD ("no URL configured"), redeliverable once a URL is set. At send time the
   * worker posts to the owner's CURRENT URL (shop Result URL / payout webhook URL), so a fixed
   * URL also serves events already waiting for a retry.
   */
  url: string | null;
  fields: PaymentPostbackFields | PayoutWebhookFields | RefundPostbackFields | ChargebackPostbackFields | Record<string, string>;
}

/**
 * Writes the event row in the caller's transaction (transactional outbox): it commits or
 * rolls back with the state change that causes it. Nothing is sent here. A second event of the
 * same (kind, aggregate_id) is skipped by the table's dedupe trigger (outbox_event_keys: the
 * table is partitioned by month, so no unique index of its own can hold that pair).
 */
export async function enqueueEvent(c: Queryable, e: NewEvent): Promise<void> {
  // Named: prepared once per connection (on every payment's and payout's money path).
  await c.query({
    name: 'outbox_enqueue',
    text: `INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, status, last_error)
     VALUES ($1, $2::"OutboxEventKind", $3, $4, $5::jsonb, $6::"OutboxEventStatus", $7)`,
    values: eventRow(e),
  });
}

/**
 * The column values of an event row, in the order merchant_id, kind, aggregate_id, url,
 * payload, status, last_error; for callers that write the row inside a larger statement of
 * their own transaction (the payment's finishing statement). Refuses non-final statuses.
 */
export function eventRow(e: NewEvent): [string, OutboxEventKind, string, string | null, string, 'PENDING' | 'DEAD', string | null] {
  assertFinalStatus(e);
  return [e.merchantId, e.kind, e.aggregateId, e.url || null, JSON.stringify({ fields: e.fields }), e.url ? 'PENDING' : 'DEAD', e.url ? null : NO_URL];
}

export const NO_URL = 'no URL configured';

/** Postbacks carry final statuses only (spec part 3): anything else is a bug of the caller. */
const FINAL_STATUSES: Partial<Record<OutboxEventKind, readonly string[]>> = {
  PAYMENT_POSTBACK: [...MONEY_RECEIVED_STATUSES, 'FAIL'],
  PAYOUT_WEBHOOK: ['DECLINED', 'SUCCESS', 'FAIL'],
  REFUND_POSTBACK: ['SUCCESS', 'FAIL'],
  CHARGEBACK_POSTBACK: ['CHARGEBACK'],
};

export class NonFinalEventError extends Error {}

function assertFinalStatus(e: NewEvent): void {
  const allowed = FINAL_STATUSES[e.kind];
  const status = (e.fields as Record<string, unknown>).Status;
  if (allowed && !allowed.includes(String(status))) {
    throw new NonFinalEventError(`${e.kind} for ${e.aggregateId} with non-final Status ${String(status)}`);
  }
}

/** Field order on the wire, as spec part 6 lists them (JSONB does not keep key order). */
export const PAYMENT_POSTBACK_ORDER: readonly string[] = [
  'InvId', 'OutSum', 'Commission', 'Currency', 'CurrencyIn', 'TrsId', 'Status', 'custom',
  'AccountType', 'AccountNumber', 'BalanceAmount', 'BalanceCurrency', 'PayerPhone', 'PayerEmail', 'PayerName', 'PayerComment',
  'ErrorCode', 'ErrorMessage',
];
export const PAYOUT_WEBHOOK_ORDER: readonly string[] = [
  'TrsId', 'Amount', 'IsAuto', 'Status', 'Currency', 'Commission', 'AccountType', 'AccountNumber',
  'BalanceAmount', 'BalanceCommission', 'BalanceCurrency', 'CommissionApplyType',
];
export const REFUND_POSTBACK_ORDER: readonly string[] = ['Id', 'PaymentId', 'BillId', 'InvId', 'Amount', 'Currency', 'Status'];
export const CHARGEBACK_POSTBACK_ORDER: readonly string[] = ['Id', 'PaymentId', 'BillId', 'InvId', 'Amount', 'Currency', 'Reason', 'Status'];
const ORDER: Record<OutboxEventKind, readonly string[]> = {
  PAYMENT_POSTBACK: PAYMENT_POSTBACK_ORDER,
  TEST_POSTBACK: PAYMENT_POSTBACK_ORDER,
  PAYOUT_WEBHOOK: PAYOUT_WEBHOOK_ORDER,
  REFUND_POSTBACK: REFUND_POSTBACK_ORDER,
  CHARGEBACK_POSTBACK: CHARGEBACK_POSTBACK_ORDER,
};

/**
 * The exact application/x-www-form-urlencoded body posted for an event: its fields in the
 * spec's order (any others after them, by name), then SignatureValue, signed with `token` over
 * the very strings posted.
 */
export function eventBody(kind: OutboxEventKind, fields: Record<string, unknown>, token: string): string {
  const strings: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'SignatureValue') continue;
    strings[k] = v === null || v === undefined ? '' : String(v);
  }
  // The signed fields are always posted (empty when absent), so the receiver can check the signature.
  for (const k of SIGNED[kind]) strings[k] ??= '';
  const order = ORDER[kind];
  const keys = [...order.filter((k) => k in strings), ...Object.keys(strings).filter((k) => !order.includes(k)).sort()];
  const params = new URLSearchParams();
  for (const k of keys) params.append(k, strings[k]!);
  params.append('SignatureValue', signEvent(kind, strings, token));
  return params.toString();
}
