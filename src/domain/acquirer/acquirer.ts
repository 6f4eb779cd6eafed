import type { Decimal } from 'decimal.js';

/** Card data as the payer typed it; lives only in memory for the acquirer call. */
export interface CardData {
  /** Digits only. */
  number: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  cvc: string;
}

export interface ChargeRequest {
  paymentId: string;
  method: 'BANK_CARD' | 'SBP';
  /** What the payer must pay, in RUB. */
  amountDue: Decimal;
  card?: CardData;
  /** Sandbox only: what the SBP payer sends (to make UNDERPAID / OVERPAID). */
  sbpAmount?: Decimal;
}

export type ChargeResult =
  | { outcome: 'PAID'; amountReceived: Decimal; reference: string }
  | { outcome: 'DECLINED'; reason: string; reference: string };

/**
 * The bank connector a payment runs through. A real acquirer is one more class; the service
 * calls it outside any database transaction.
 */
export interface Acquirer {
  readonly name: string;
  charge(req: ChargeRequest): Promise<ChargeResult>;
}
