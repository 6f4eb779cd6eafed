import type { Queryable } from '../domain/ledger/ledger.js';
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

/** Payment postback and customer redirect: MD5(OutSum:InvId:token), uppercase hex. */
export const paymentSignature = (f: { OutSum: string; InvId: string }, token: string): string =>
  md5Upper(`${f.OutSum}:${f.InvId}:${token}`);

/** Payout webhook: MD5(Amount:TrsId:token), uppercase hex. */
export const payoutSignature = (f: { Amount: string; TrsId: string }, token: string): string =>
  md5Upper(`${f.Amount}:${f.TrsId}:${token}`);

/** The SignatureValue of an event's fields, by its kind (computed at send time). */
export function signEvent(kind: OutboxEventKind, fields: Record<string, string>, token: string): string {
  return kind === 'PAYOUT_WEBHOOK'
    ? payoutSignature(fields as unknown as PayoutWebhookFields, token)
    : paymentSignature(fields as unknown as PaymentPostbackFields, token);
}

export interface NewEvent {
  merchantId: string;
  kind: OutboxEventKind;
  /** The payment or payout id; with `kind` unique, so a state change enqueues once. */
  aggregateId: string;
  /** Where to post; null when the merchant has no URL set (the event is then kept, undeliverable, as DEAD). */
  url: string | null;
  fields: PaymentPostbackFields | PayoutWebhookFields | Record<string, string>;
}

/**
 * Writes the event row in the caller's transaction (transactional outbox): it commits or
 * rolls back with the state change that causes it. Nothing is sent here.
 */
export async function enqueueEvent(c: Queryable, e: NewEvent): Promise<void> {
  await c.query(
    `INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, status)
     VALUES ($1, $2::"OutboxEventKind", $3, $4, $5::jsonb, $6::"OutboxEventStatus")
     ON CONFLICT (kind, aggregate_id) DO NOTHING`,
    [e.merchantId, e.kind, e.aggregateId, e.url, JSON.stringify({ fields: e.fields }), e.url ? 'PENDING' : 'DEAD'],
  );
}
