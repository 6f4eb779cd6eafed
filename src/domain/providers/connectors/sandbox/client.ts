import { Decimal } from 'decimal.js';
import type { Queryable } from '../../../../db/client.js';
import { randomId } from '../../../../lib/ids.js';
import { runPaymentById } from '../../../payment/payment-by-id.js';
import {
  ConnectorRefusedError, type Capabilities, type Connector, type ConnectorMode, type CreatePayment, type CreatePayout, type CreateRefund,
  type InboundNotification, type OperationOutcome, type ParsedNotification, type PayerAction, type PaymentOutcome,
} from '../../connector.js';

/** Declined by the sandbox (PROVIDERS.md "Sandbox behaviour"). */
export const SANDBOX_DECLINED_CARD = '4000000000000002';
/** Declined by the sandbox for insufficient funds. */
export const SANDBOX_INSUFFICIENT_CARD = '4000000000009995';
/** Needs a 3-D Secure challenge on the sandbox bank page. */
export const SANDBOX_3DS_CARD = '4000002760003184';
/** Charged, but the sandbox's answer is lost (the call reports `unknown`); `getPayment` says paid. */
export const SANDBOX_LOST_ANSWER_CARD = '4000000000000119';

/** How long the sandbox bank waits for the payer's 3-D Secure answer; then it declines. */
export const SANDBOX_3DS_TTL_MS = 15 * 60 * 1000;
/** How long a sandbox SBP QR code stays payable; then the payment is declined (expired). */
export const SANDBOX_QR_TTL_MS = 30 * 60 * 1000;

/** The sandbox bank pages (served by the payment page's routes, src/page/sandbox-bank.ts). */
export const sandbox3dsPath = (paymentId: string): string => `/sandbox/3ds/${paymentId}`;
export const sandboxSbpPath = (paymentId: string): string => `/sandbox/sbp/${paymentId}`;

/** A sandbox payment waiting on the payer, or what the sandbox bank decided. */
export type SandboxPaymentStatus = 'challenge' | 'sbp_waiting' | 'paid' | 'declined' | 'expired';
export interface SandboxPaymentOp { ourId: string; ref: string; status: SandboxPaymentStatus; amount: Decimal | null; expired: boolean }

/**
 * The sandbox provider's own memory, the `sandbox_operations` table (kind 'payment'): what it
 * charged or is waiting for survives restarts and is the same for every process. Used by the
 * connector and by the sandbox bank pages (the payer's 3-D Secure and SBP answers).
 */
export class SandboxBank {
  constructor(private readonly db: Queryable) {}

  async record(ourId: string, ref: string, status: SandboxPaymentStatus, amount: Decimal | null): Promise<void> {
    await this.db.query(
      `INSERT INTO sandbox_operations (kind, our_id, ref, status, amount) VALUES ('payment', $1, $2, $3, $4)
       ON CONFLICT (kind, our_id) DO NOTHING`, [ourId, ref, status, amount?.toFixed(2) ?? null]);
  }

  /** The operation; `expired` when it still waits on the payer past its deadline. */
  async find(ourId: string): Promise<SandboxPaymentOp | null> {
    const r = await this.db.query<{ ref: string; status: SandboxPaymentStatus; amount: string | null; expired: boolean }>(
      `SELECT ref, status, amount::text,
              (status = 'challenge' AND created_at < now() - make_interval(secs => $2::double precision / 1000))
           OR (status = 'sbp_waiting' AND created_at < now() - make_interval(secs => $3::double precision / 1000)) AS expired
         FROM sandbox_operations WHERE kind = 'payment' AND our_id = $1`, [ourId, SANDBOX_3DS_TTL_MS, SANDBOX_QR_TTL_MS]);
    const x = r.rows[0];
    return x ? { ourId, ref: x.ref, status: x.status, amount: x.amount === null ? null : new Decimal(x.amount), expired: x.expired } : null;
  }

  /**
   * The payer's answer on the sandbox bank page: 3-D Secure confirmed (paid) or failed
   * (declined); SBP confirmed with an amount (paid) or cancelled (declined). Only a waiting,
   * unexpired operation changes; false otherwise (already answered, expired, unknown).
   */
  async decide(ourId: string, from: 'challenge' | 'sbp_waiting', to: 'paid' | 'declined', amount?: Decimal): Promise<boolean> {
    const ttl = from === 'challenge' ? SANDBOX_3DS_TTL_MS : SANDBOX_QR_TTL_MS;
    const r = await this.db.query(
      `UPDATE sandbox_operations SET status = $3, amount = coalesce($4, amount)
        WHERE kind = 'payment' AND our_id = $1 AND status = $2 AND created_at >= now() - make_interval(secs => $5::double precision / 1000)`,
      [ourId, from, to, amount?.toFixed(2) ?? null, ttl]);
    return r.rowCount === 1;
  }

  /** Marks a waiting operation past its deadline as expired (the bank gave up on the payer). */
  async expire(ourId: string): Promise<void> {
    await this.db.query(`UPDATE sandbox_operations SET status = 'expired' WHERE kind = 'payment' AND our_id = $1 AND status IN ('challenge', 'sbp_waiting')`, [ourId]);
  }

  /** The payment row's card and amount, for a card payment the sandbox answered at once (it answers the same again). */
  async paymentCard(ourId: string): Promise<{ billId: string; method: string; fromCard: string | null; amount: Decimal } | null> {
    const r = await runPaymentById<{ bill_id: string; method: string; from_card: string | null; amount: string }>(this.db, ourId, {
      text: `SELECT bill_id, method::text, from_card, amount::text FROM payments WHERE id = $1`, values: [ourId] });
    const x = r.rows[0];
    return x ? { billId: x.bill_id, method: x.method, fromCard: x.from_card, amount: new Decimal(x.amount) } : null;
  }
}

/** The sandbox's answer for a card by its number (the card table of PROVIDERS.md); last 4 digits suffice. */
function cardAnswer(last4: string, amount: Decimal, ref: string): PaymentOutcome {
  if (last4 === SANDBOX_DECLINED_CARD.slice(-4)) return { status: 'declined', code: 'card_declined', message: 'The card was declined.', ref };
  if (last4 === SANDBOX_INSUFFICIENT_CARD.slice(-4)) return { status: 'declined', code: 'insufficient_funds', message: 'Insufficient funds on the card.', ref };
  return { status: 'paid', amountReceived: amount, ref };
}

export const SANDBOX_CAPABILITIES: Capabilities = {
  payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: true, sbp: true }, hostsCardForm: false,
};

/** Payouts to a card or phone ending 0119 are applied but their answer is lost (a timeout). */
export const SANDBOX_LOST_PAYOUT_SUFFIX = '0119';
/** Refunds of an amount ending in 19 kopecks (e.g. 10.19) are applied but their answer is lost. */
export const SANDBOX_LOST_REFUND_KOPECKS = 19;

/** Settings of a sandbox-kind connector; `refuse` (tests, staging drills) refuses every creation. */
export interface SandboxSettings { refuse?: boolean }

/** Where the sandbox keeps its memory and builds the SBP QR payload (absolute URL for phones). */
export interface SandboxEnv { db?: Queryable; publicBaseUrl?: string }

/**
 * The sandbox as a connector (PROVIDERS.md "Sandbox behaviour").
 * Payments: 4000000000000002 declined (card_declined), 4000000000009995 declined
 * (insufficient_funds), 4000002760003184 a 3-D Secure challenge on `/sandbox/3ds/{id}`,
 * 4000000000000119 charged but the answer lost (`unknown`; `getPayment` then says paid), every
 * other card pays the amount due. SBP: a QR code leading to `/sandbox/sbp/{id}` where the payer
 * confirms (any amount) or cancels; with the sandbox's `amount` form field (JSON-mode shortcut,
 * docs/decisions.md) it pays that amount at once. Waiting operations are kept in
 * `sandbox_operations` (SandboxBank). Refunds of payments by a card ending 4444 FAIL. Payouts to cards
 * and phones ending 0002 FAIL. A sandbox-kind connector with `refuse: true` refuses every
 * creation as a provider that is down would (routing then tries the next connector).
 * With a database (`env.db`: the registry passes the pool), payouts and refunds are remembered in
 * sandbox_operations by our id, as a provider remembers an idempotency key: a repeated creation
 * answers the first result, getPayout/getRefund answer what was applied, and two rules time out
 * after applying (PROVIDERS.md): payouts to cards and phones ending 0119, refunds of an amount
 * ending in 19 kopecks: applied, then answered `unknown` with no reference, as a lost answer is.
 */
export class SandboxConnector implements Connector {
  readonly kind = 'sandbox' as const;
  readonly capabilities = SANDBOX_CAPABILITIES;

  private readonly bank: SandboxBank | null;

  constructor(readonly name = 'sandbox', readonly mode: ConnectorMode = 'test', private readonly settings: SandboxSettings = {}, private readonly env: SandboxEnv = {}) {
    this.bank = env.db ? new SandboxBank(env.db) : null;
  }

  private refuseIfSet(): void {
    if (this.settings.refuse) throw new ConnectorRefusedError('sandbox_refuse', 'sandbox: this connector refuses every operation (refuse: true)');
  }

  async createPayment(req: CreatePayment): Promise<PaymentOutcome> {
    this.refuseIfSet();
    const ref = `sbx_${randomId(12)}`;
    if (req.method === 'card') {
      if (!req.card) return { status: 'declined', code: 'no_card', message: 'No card data.', ref };
      if (this.bank && req.card.number === SANDBOX_3DS_CARD) {
        await this.bank.record(req.paymentId, ref, 'challenge', null);
        return { status: 'action', action: { type: '3ds', url: sandbox3dsPath(req.paymentId) }, ref };
      }
      if (this.bank && req.card.number === SANDBOX_LOST_ANSWER_CARD) {
        // The card is charged; the answer never reaches the caller.
        await this.bank.record(req.paymentId, ref, 'paid', req.amount);
        return { status: 'unknown', ref: null, reason: 'sandbox: the answer was lost (card 0119)' };
      }
      return cardAnswer(req.card.number.slice(-4), req.amount, ref);
    }
    if (req.sbpAmount || !this.bank) return { status: 'paid', amountReceived: req.sbpAmount ?? req.amount, ref };
    await this.bank.record(req.paymentId, ref, 'sbp_waiting', null);
    return { status: 'action', action: this.sbpAction(req.paymentId), ref };
  }

  private sbpAction(paymentId: string): PayerAction {
    const path = sandboxSbpPath(paymentId);
    return {
      type: 'sbp_qr',
      payload: `${this.env.publicBaseUrl ?? ''}${path}`,
      links: [{ name: 'Sandbox Bank', url: path }, { name: 'Sandbox Bank (test app)', url: `${path}?app=1` }],
    };
  }

  async getPayment(q: { paymentId: string; ref: string | null }): Promise<PaymentOutcome> {
    const op = this.bank ? await this.bank.find(q.paymentId) : null;
    if (op) {
      if (op.expired) await this.bank!.expire(q.paymentId);
      if (op.expired || op.status === 'expired') {
        return { status: 'declined', code: op.status === 'sbp_waiting' ? 'qr_expired' : 'challenge_abandoned', message: 'sandbox: the payer did not answer before the deadline', ref: op.ref };
      }
      switch (op.status) {
        case 'paid': return { status: 'paid', amountReceived: op.amount!, ref: op.ref };
        case 'declined': return { status: 'declined', code: 'payer_declined', message: 'sandbox: the payer failed or cancelled the payment', ref: op.ref };
        case 'challenge': return { status: 'action', action: { type: '3ds', url: sandbox3dsPath(q.paymentId) }, ref: op.ref };
        default: return { status: 'action', action: this.sbpAction(q.paymentId), ref: op.ref };
      }
    }
    // A card the sandbox answered at once: it answers the same again (its card table decides).
    const card = this.bank ? await this.bank.paymentCard(q.paymentId) : null;
    if (card && card.method === 'BANK_CARD' && card.fromCard) return cardAnswer(card.fromCard.slice(-4), card.amount, q.ref ?? `sbx_${randomId(12)}`);
    return { status: 'declined', code: 'not_found', message: 'sandbox: no such payment', ref: q.ref };
  }

  async refund(req: CreateRefund): Promise<OperationOutcome> {
    this.refuseIfSet();
    const fails = req.fromCard !== null && req.fromCard.endsWith('4444');
    if (this.env.db) {
      const lost = req.amount.mul(100).mod(100).eq(SANDBOX_LOST_REFUND_KOPECKS);
      return this.apply('refund', req.refundId, req.amount, fails ? 'failed' : 'succeeded', lost);
    }
    if (fails) return operationAnswer('refund', 'failed', null);
    return { status: 'succeeded', ref: `sbx_${randomId(12)}` };
  }

  async getRefund(q: { refundId: string; ref: string | null }): Promise<OperationOutcome> {
    if (this.env.db) return this.lookup('refund', q.refundId);
    return q.ref ? { status: 'succeeded', ref: q.ref } : { status: 'failed', code: 'not_found', message: 'sandbox: no such refund', ref: null };
  }

  async createPayout(p: CreatePayout): Promise<OperationOutcome> {
    this.refuseIfSet();
    const fails = p.account.endsWith('0002');
    if (this.env.db) return this.apply('payout', p.payoutId, p.amount, fails ? 'failed' : 'succeeded', p.account.endsWith(SANDBOX_LOST_PAYOUT_SUFFIX));
    if (fails) return operationAnswer('payout', 'failed', null);
    return { status: 'succeeded', ref: `sbx_${randomId(12)}` };
  }

  async getPayout(q: { payoutId: string; ref: string | null }): Promise<OperationOutcome> {
    if (this.env.db) return this.lookup('payout', q.payoutId);
    return q.ref ? { status: 'succeeded', ref: q.ref } : { status: 'failed', code: 'not_found', message: 'sandbox: no such payout', ref: null };
  }

  /**
   * Applies an operation once per our id: the first call records it and answers it (or loses
   * the answer: `unknown`, no reference); a repeated call answers what was recorded, as a
   * provider answers a repeated idempotency key.
   */
  private async apply(kind: SandboxOpKind, ourId: string, amount: Decimal, status: 'succeeded' | 'failed', loseAnswer: boolean): Promise<OperationOutcome> {
    const ins = await this.env.db!.query<{ ref: string }>(
      `INSERT INTO sandbox_operations (kind, our_id, ref, status, amount) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (kind, our_id) DO NOTHING RETURNING ref`,
      [kind, ourId, `sbx_${randomId(12)}`, status, amount.toFixed(2)],
    );
    if (ins.rowCount === 0) return this.lookup(kind, ourId);
    if (loseAnswer) return { status: 'unknown', ref: null, reason: `sandbox: the ${kind} was applied and its answer lost (timeout)` };
    return operationAnswer(kind, status, ins.rows[0]!.ref);
  }

  private async lookup(kind: SandboxOpKind, ourId: string): Promise<OperationOutcome> {
    const r = await this.env.db!.query<{ ref: string; status: string }>(
      'SELECT ref, status FROM sandbox_operations WHERE kind = $1 AND our_id = $2', [kind, ourId],
    );
    const row = r.rows[0];
    if (!row) return { status: 'failed', code: 'not_found', message: `sandbox: no such ${kind}`, ref: null };
    return operationAnswer(kind, row.status === 'succeeded' ? 'succeeded' : 'failed', row.ref);
  }

  async parseNotification(_n?: InboundNotification): Promise<ParsedNotification> {
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
