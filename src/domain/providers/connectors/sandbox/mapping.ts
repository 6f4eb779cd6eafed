import type { Decimal } from 'decimal.js';
import type { OperationOutcome, PaymentOutcome } from '../../connector.js';

/** Declined by the sandbox (PROVIDERS.md "Sandbox behaviour"). */
export const SANDBOX_DECLINED_CARD = '4000000000000002';
/** Declined by the sandbox for insufficient funds. */
export const SANDBOX_INSUFFICIENT_CARD = '4000000000009995';
/** Needs a 3-D Secure challenge on the sandbox bank page. */
export const SANDBOX_3DS_CARD = '4000002760003184';
/** Charged, but the sandbox's answer is lost (the call reports `unknown`); `getPayment` says paid. */
export const SANDBOX_LOST_ANSWER_CARD = '4000000000000119';

/** Payouts to a card or phone ending 0119 are applied but their answer is lost (a timeout). */
export const SANDBOX_LOST_PAYOUT_SUFFIX = '0119';
/** Refunds of an amount ending in 19 kopecks (e.g. 10.19) are applied but their answer is lost. */
export const SANDBOX_LOST_REFUND_KOPECKS = 19;

/** The sandbox's answer for a card by its number (the card table of PROVIDERS.md); last 4 digits suffice. */
export function cardAnswer(last4: string, amount: Decimal, ref: string): PaymentOutcome {
  if (last4 === SANDBOX_DECLINED_CARD.slice(-4)) return { status: 'declined', code: 'card_declined', message: 'The card was declined.', ref };
  if (last4 === SANDBOX_INSUFFICIENT_CARD.slice(-4)) return { status: 'declined', code: 'insufficient_funds', message: 'Insufficient funds on the card.', ref };
  return { status: 'paid', amountReceived: amount, ref };
}

export type SandboxOpKind = 'payout' | 'refund';

export function operationAnswer(kind: SandboxOpKind, status: 'succeeded' | 'failed', ref: string | null): OperationOutcome {
  if (status === 'succeeded') return { status: 'succeeded', ref };
  return kind === 'payout'
    ? { status: 'failed', code: 'payout_declined', message: 'sandbox: account ending 0002 is declined', ref }
    : { status: 'failed', code: 'refund_declined', message: 'sandbox: refunds to cards ending 4444 are declined', ref };
}
