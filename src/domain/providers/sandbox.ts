import type { Decimal } from 'decimal.js';
import type { Queryable } from '../../db/client.js';
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

/** Payouts to a card or phone ending 0119 are applied but their answer is lost (a timeout). */
export const SANDBOX_LOST_PAYOUT_SUFFIX = '0119';
/** Refunds of an amount ending in 19 kopecks (e.g. 10.19) are applied but their answer is lost. */
export const SANDBOX_LOST_REFUND_KOPECKS = 19;

/** Settings of a sandbox-kind connector; `refuse` (tests, staging drills) refuses every creation. */
export interface SandboxSettings { refuse?: boolean }

/**
 * The sandbox as a connector: answers at once and keeps nothing.
 * Payments: 4000000000000002 declined (card_declined), 4000000000009995 declined
 * (insufficient_funds), every other card pays the amount due; SBP pays the amount due or the
 * amount the payer form posted. Refunds of payments by a card ending 4444 FAIL. Payouts to cards
 * and phones ending 0002 FAIL. A sandbox-kind connector with `refuse: true` refuses every
 * creation as a provider that is down would (routing then tries the next connector).
 * With a `store` (the registry passes the pool), payouts and refunds are remembered in
 * sandbox_operations by our id, as a provider remembers an idempotency key: a repeated creation
 * answers the first result, getPayout/getRefund answer what was applied, and two rules time out
 * after applying (PROVIDERS.md): payouts to cards and phones ending 0119, refunds of an amount
 * ending in 19 kopecks: applied, then answered `unknown` with no reference, as a lost answer is.
 */
export class SandboxConnector implements Connector {
  readonly kind = 'sandbox' as const;
  readonly capabilities = SANDBOX_CAPABILITIES;

  constructor(
    readonly name = 'sandbox', readonly mode: ConnectorMode = 'test', private readonly settings: SandboxSettings = {},
    private readonly store: Queryable | null = null,
  ) {}

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
    const fails = req.fromCard !== null && req.fromCard.endsWith('4444');
    if (this.store) {
      const lost = req.amount.mul(100).mod(100).eq(SANDBOX_LOST_REFUND_KOPECKS);
      return this.apply('refund', req.refundId, req.amount, fails ? 'failed' : 'succeeded', lost);
    }
    if (fails) return operationAnswer('refund', 'failed', null);
    return { status: 'succeeded', ref: `sbx_${randomId(12)}` };
  }

  async getRefund(q: { refundId: string; ref: string | null }): Promise<OperationOutcome> {
    if (this.store) return this.lookup('refund', q.refundId);
    return q.ref ? { status: 'succeeded', ref: q.ref } : { status: 'failed', code: 'not_found', message: 'sandbox: no such refund', ref: null };
  }

  async createPayout(p: CreatePayout): Promise<OperationOutcome> {
    this.refuseIfSet();
    const fails = p.account.endsWith('0002');
    if (this.store) return this.apply('payout', p.payoutId, p.amount, fails ? 'failed' : 'succeeded', p.account.endsWith(SANDBOX_LOST_PAYOUT_SUFFIX));
    if (fails) return operationAnswer('payout', 'failed', null);
    return { status: 'succeeded', ref: `sbx_${randomId(12)}` };
  }

  async getPayout(q: { payoutId: string; ref: string | null }): Promise<OperationOutcome> {
    if (this.store) return this.lookup('payout', q.payoutId);
    return q.ref ? { status: 'succeeded', ref: q.ref } : { status: 'failed', code: 'not_found', message: 'sandbox: no such payout', ref: null };
  }

  /**
   * Applies an operation once per our id: the first call records it and answers it (or loses
   * the answer: `unknown`, no reference); a repeated call answers what was recorded, as a
   * provider answers a repeated idempotency key.
   */
  private async apply(kind: SandboxOpKind, ourId: string, amount: Decimal, status: 'succeeded' | 'failed', loseAnswer: boolean): Promise<OperationOutcome> {
    const ins = await this.store!.query<{ ref: string }>(
      `INSERT INTO sandbox_operations (kind, our_id, ref, status, amount) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (kind, our_id) DO NOTHING RETURNING ref`,
      [kind, ourId, `sbx_${randomId(12)}`, status, amount.toFixed(2)],
    );
    if (ins.rowCount === 0) return this.lookup(kind, ourId);
    if (loseAnswer) return { status: 'unknown', ref: null, reason: `sandbox: the ${kind} was applied and its answer lost (timeout)` };
    return operationAnswer(kind, status, ins.rows[0]!.ref);
  }

  private async lookup(kind: SandboxOpKind, ourId: string): Promise<OperationOutcome> {
    const r = await this.store!.query<{ ref: string; status: string }>(
      'SELECT ref, status FROM sandbox_operations WHERE kind = $1 AND our_id = $2', [kind, ourId],
    );
    const row = r.rows[0];
    if (!row) return { status: 'failed', code: 'not_found', message: `sandbox: no such ${kind}`, ref: null };
    return operationAnswer(kind, row.status === 'succeeded' ? 'succeeded' : 'failed', row.ref);
  }

  async parseNotification(): Promise<ParsedNotification> {
    // The sandbox answers at once: it never notifies, so anything claiming to be from it is forged.
    return { ok: false, reason: 'the sandbox sends no notifications' };
  }
}

type SandboxOpKind = 'payout' | 'refund';

function operationAnswer(kind: SandboxOpKind, status: 'succeeded' | 'failed', ref: string | null): OperationOutcome {
  if (status === 'succeeded') return { status: 'succeeded', ref };
  return kind === 'payout'
    ? { status: 'failed', code: 'payout_declined', message: 'sandbox: account ending 0002 is declined', ref }
    : { status: 'failed', code: 'refund_declined', message: 'sandbox: refunds to cards ending 4444 are declined', ref };
}
