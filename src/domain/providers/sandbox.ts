import { randomId } from '../../lib/ids.js';
import {
  ConnectorRefusedError, type Capabilities, type Connector, type ConnectorMode, type CreatePayment, type CreatePayout, type CreateRefund,
  type OperationOutcome, type ParsedNotification, type PaymentOutcome,
} from './connector.js';

/** Declined by the sandbox (PROVIDERS.md "Sandbox behaviour"). */
export const SANDBOX_DECLINED_CARD = '4000000000000002';
/** Declined by the sandbox for insufficient funds. */
export const SANDBOX_INSUFFICIENT_CARD = '4000000000009995';

export const SANDBOX_CAPABILITIES: Capabilities = {
  payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: true, sbp: true }, hostsCardForm: false,
};

/** Settings of a sandbox-kind connector; `refuse` (tests, staging drills) refuses every creation. */
export interface SandboxSettings { refuse?: boolean }

/**
 * The sandbox as a connector: answers at once and keeps nothing.
 * Payments: 4000000000000002 declined (card_declined), 4000000000009995 declined
 * (insufficient_funds), every other card pays the amount due; SBP pays the amount due or the
 * amount the payer form posted. Refunds of payments by a card ending 4444 FAIL. Payouts to cards
 * and phones ending 0002 FAIL. A sandbox-kind connector with `refuse: true` refuses every
 * creation as a provider that is down would (routing then tries the next connector).
 */
export class SandboxConnector implements Connector {
  readonly kind = 'sandbox' as const;
  readonly capabilities = SANDBOX_CAPABILITIES;

  constructor(readonly name = 'sandbox', readonly mode: ConnectorMode = 'test', private readonly settings: SandboxSettings = {}) {}

  private refuseIfSet(): void {
    if (this.settings.refuse) throw new ConnectorRefusedError('sandbox_refuse', 'sandbox: this connector refuses every operation (refuse: true)');
  }

  async createPayment(req: CreatePayment): Promise<PaymentOutcome> {
    this.refuseIfSet();
    const ref = `sbx_${randomId(12)}`;
    if (req.method === 'card') {
      if (!req.card) return { status: 'declined', code: 'no_card', message: 'No card data.', ref };
      if (req.card.number === SANDBOX_DECLINED_CARD) return { status: 'declined', code: 'card_declined', message: 'The card was declined.', ref };
      if (req.card.number === SANDBOX_INSUFFICIENT_CARD) {
        return { status: 'declined', code: 'insufficient_funds', message: 'Insufficient funds on the card.', ref };
      }
      return { status: 'paid', amountReceived: req.amount, ref };
    }
    return { status: 'paid', amountReceived: req.sbpAmount ?? req.amount, ref };
  }

  async getPayment(q: { paymentId: string; ref: string | null }): Promise<PaymentOutcome> {
    // The sandbox keeps nothing: a payment it never answered for was not charged.
    return { status: 'declined', code: 'not_found', message: 'sandbox: no such payment', ref: q.ref };
  }

  async refund(req: CreateRefund): Promise<OperationOutcome> {
    this.refuseIfSet();
    if (req.fromCard !== null && req.fromCard.endsWith('4444')) {
      return { status: 'failed', code: 'refund_declined', message: 'sandbox: refunds to cards ending 4444 are declined', ref: null };
    }
    return { status: 'succeeded', ref: `sbx_${randomId(12)}` };
  }

  async getRefund(q: { refundId: string; ref: string | null }): Promise<OperationOutcome> {
    return q.ref ? { status: 'succeeded', ref: q.ref } : { status: 'failed', code: 'not_found', message: 'sandbox: no such refund', ref: null };
  }

  async createPayout(p: CreatePayout): Promise<OperationOutcome> {
    this.refuseIfSet();
    if (p.account.endsWith('0002')) return { status: 'failed', code: 'payout_declined', message: 'sandbox: account ending 0002 is declined', ref: null };
    return { status: 'succeeded', ref: `sbx_${randomId(12)}` };
  }

  async getPayout(q: { payoutId: string; ref: string | null }): Promise<OperationOutcome> {
    return q.ref ? { status: 'succeeded', ref: q.ref } : { status: 'failed', code: 'not_found', message: 'sandbox: no such payout', ref: null };
  }

  async parseNotification(): Promise<ParsedNotification> {
    // The sandbox answers at once: it never notifies, so anything claiming to be from it is forged.
    return { ok: false, reason: 'the sandbox sends no notifications' };
  }
}
