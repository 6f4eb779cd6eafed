import type { Decimal } from 'decimal.js';
import type { Queryable } from '../../../../db/client.js';
import { randomId } from '../../../../lib/ids.js';
import { maskCard } from '../../../../lib/card.js';
import {
  cardDestination, ConnectorRefusedError, type Capabilities, type ConnectionCheck, type Connector, type ConnectorMode, type CreatePayment, type CreatePayout, type CreateRefund,
  type InboundNotification, type OperationOutcome, type ParsedNotification, type PayerAction, type PaymentOutcome, type SavedCard, type SettleHold,
} from '../../connector.js';
import { SandboxBank, sandbox3dsPath, sandboxSbpPath } from './bank.js';
import {
  SANDBOX_3DS_CARD, SANDBOX_LOST_ANSWER_CARD, SANDBOX_LOST_PAYOUT_SUFFIX, SANDBOX_LOST_REFUND_KOPECKS, cardAnswer, operationAnswer, type SandboxOpKind,
} from './mapping.js';
import { parseSandboxNotification } from './notifications.js';
import type { SandboxSettings } from './settings.js';

export const SANDBOX_CAPABILITIES: Capabilities = {
  payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: true, sbp: true }, hostsCardForm: false,
  // It emulates: a card number, and any issuer's payout token as a good card (it cannot know the card behind one).
  payoutCardBy: { number: true, tokens: 'any' },
  twoStage: true,
  savedCards: true,
};

/** Where the sandbox keeps its memory and builds the SBP QR payload (absolute URL for phones). */
export interface SandboxEnv { db?: Queryable; publicBaseUrl?: string }

/**
 * The sandbox as a connector (PROVIDERS.md "Sandbox behaviour").
 * Payments: 4000000000000002 declined (card_declined), 4000000000009995 declined
 * (insufficient_funds), 4000002760003184 a 3-D Secure challenge on `/sandbox/3ds/{id}`,
 * 4000000000000119 charged but the answer lost (`unknown`; `getPayment` then says paid), every
 * other card pays the amount due. SBP: a QR code leading to `/sandbox/sbp/{id}` where the payer
 * confirms (any amount) or cancels; with the sandbox's `amount` form field (JSON-mode shortcut,
 * docs/adr/0028-sandbox-connector.md) it pays that amount at once. Waiting operations are kept in
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

  /** The sandbox is in this process: it always answers (even one set to refuse creations). */
  async checkConnection(): Promise<ConnectionCheck> {
    return { ok: true, message: this.settings.refuse ? 'The sandbox answers (it is set to refuse every creation).' : 'The sandbox answers.' };
  }

  private refuseIfSet(): void {
    if (this.settings.refuse) throw new ConnectorRefusedError('sandbox_refuse', 'sandbox: this connector refuses every operation (refuse: true)');
  }

  async createPayment(req: CreatePayment): Promise<PaymentOutcome> {
    this.refuseIfSet();
    const ref = `sbx_${randomId(12)}`;
    if (req.savedMethod) return this.chargeSaved(req, ref);
    if (req.method === 'card') {
      if (!req.card) return { status: 'declined', code: 'no_card', message: 'No card data.', ref };
      if (this.bank && req.card.number === SANDBOX_3DS_CARD) {
        await this.bank.record(req.paymentId, ref, 'challenge', null);
        return { status: 'action', action: { type: '3ds', url: sandbox3dsPath(req.paymentId) }, ref };
      }
      if (this.bank && req.card.number === SANDBOX_LOST_ANSWER_CARD) {
        // The card is charged; the answer never reaches the caller.
        await this.bank.record(req.paymentId, ref, 'paid', req.amount);
        if (req.savePaymentMethod) await this.bank.saveCard(`sbxpm_${randomId(16)}`, req.paymentId);
        return { status: 'unknown', ref: null, reason: 'sandbox: the answer was lost (card 0119)' };
      }
      const answer = cardAnswer(req.card.number.slice(-4), req.amount, ref);
      // Saved only when asked (the payer consented) and paid, as YooKassa's `save_payment_method`.
      if (req.savePaymentMethod && this.bank && answer.status === 'paid' && req.capture !== false) {
        const token = `sbxpm_${randomId(16)}`;
        await this.bank.saveCard(token, req.paymentId);
        return { ...answer, saved: sandboxSaved(token, maskCard(req.card.number), req.card) };
      }
      // Two-stage: a card that would pay is authorized and held (as YooKassa's `capture: false`
      // answers `waiting_for_capture`); capturePayment or cancelPayment settles it.
      if (req.capture === false && this.bank && answer.status === 'paid') {
        await this.bank.record(req.paymentId, ref, 'authorized', req.amount);
        return { status: 'authorized', amount: req.amount, ref };
      }
      return answer;
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
        if (op.status === 'authorized' || (op.status === 'expired' && op.amount !== null)) {
          // YooKassa: a hold not captured in time is cancelled, cancellation_details.reason `expired_on_capture`.
          return { status: 'declined', code: 'expired_on_capture', message: 'sandbox: the hold expired before it was captured', ref: op.ref };
        }
        return { status: 'declined', code: op.status === 'sbp_waiting' ? 'qr_expired' : 'challenge_abandoned', message: 'sandbox: the payer did not answer before the deadline', ref: op.ref };
      }
      switch (op.status) {
        case 'authorized': return { status: 'authorized', amount: op.amount!, ref: op.ref };
        case 'canceled': return { status: 'declined', code: 'canceled', message: 'sandbox: the hold was cancelled', ref: op.ref };
        case 'paid': return this.withSaved(q.paymentId, { status: 'paid', amountReceived: op.amount!, ref: op.ref });
        case 'declined': return { status: 'declined', code: 'payer_declined', message: 'sandbox: the payer failed or cancelled the payment', ref: op.ref };
        case 'challenge': return { status: 'action', action: { type: '3ds', url: sandbox3dsPath(q.paymentId) }, ref: op.ref };
        default: return { status: 'action', action: this.sbpAction(q.paymentId), ref: op.ref };
      }
    }
    // A card the sandbox answered at once: it answers the same again (its card table decides).
    const card = this.bank ? await this.bank.paymentCard(q.paymentId) : null;
    if (card && card.method === 'BANK_CARD' && card.fromCard) return this.withSaved(q.paymentId, cardAnswer(card.fromCard.slice(-4), card.amount, q.ref ?? `sbx_${randomId(12)}`));
    return { status: 'declined', code: 'not_found', message: 'sandbox: no such payment', ref: q.ref };
  }

  /** A paid answer with the card the payment saved, when it saved one (a repeated read says it again). */
  private async withSaved(paymentId: string, o: PaymentOutcome): Promise<PaymentOutcome> {
    if (o.status !== 'paid' || !this.bank) return o;
    const token = await this.bank.tokenOfPayment(paymentId);
    if (!token) return o;
    const card = await this.bank.paymentCard(paymentId);
    return { ...o, saved: { providerId: token, mask: card?.fromCard ?? null, expiry: null } };
  }

  /**
   * A charge of a saved card: the token's card decides as the card table does (a token of a card
   * ending 0119 is charged and its answer lost). An unknown token is refused (no money moved). A
   * repeat under the same payment id answers what was done.
   */
  private async chargeSaved(req: CreatePayment, ref: string): Promise<PaymentOutcome> {
    if (!this.bank) throw new ConnectorRefusedError('sandbox_no_bank', 'sandbox: saved cards need the sandbox bank');
    if (await this.bank.find(req.paymentId)) return this.getPayment({ paymentId: req.paymentId, ref: null });
    const saver = await this.bank.paymentOfToken(req.savedMethod!.providerId);
    const card = saver ? await this.bank.paymentCard(saver) : null;
    if (!card?.fromCard) throw new ConnectorRefusedError('sandbox:payment_method_not_found', 'sandbox: no such saved card');
    const last4 = card.fromCard.slice(-4);
    const answer = cardAnswer(last4, req.amount, ref);
    await this.bank.record(req.paymentId, ref, answer.status === 'paid' ? 'paid' : 'declined', req.amount);
    if (last4 === SANDBOX_LOST_ANSWER_CARD.slice(-4)) return { status: 'unknown', ref: null, reason: 'sandbox: the answer was lost (saved card 0119)' };
    return answer;
  }

  /**
   * Captures a held payment: `amount` at most what is held (the rest is released). A repeat
   * answers what was done (our payment id is the key, as YooKassa's Idempotence-Key); more than
   * is held is refused, as YooKassa refuses it.
   */
  async capturePayment(req: SettleHold): Promise<PaymentOutcome> {
    if (!this.bank) throw new ConnectorRefusedError('sandbox_no_bank', 'sandbox: two-stage payments need the sandbox bank');
    if (await this.bank.settleHold(req.paymentId, 'paid', req.amount)) return { status: 'paid', amountReceived: req.amount, ref: (await this.bank.find(req.paymentId))!.ref };
    const op = await this.bank.find(req.paymentId);
    if (op?.status === 'authorized' && !op.expired && op.amount!.lt(req.amount)) {
      throw new ConnectorRefusedError('amount_exceeds_authorized', `sandbox: ${req.amount.toFixed(2)} is more than the ${op.amount!.toFixed(2)} held`);
    }
    return this.getPayment({ paymentId: req.paymentId, ref: req.ref });
  }

  /** Releases a held payment; a repeat answers what was done. */
  async cancelPayment(req: SettleHold): Promise<PaymentOutcome> {
    if (!this.bank) throw new ConnectorRefusedError('sandbox_no_bank', 'sandbox: two-stage payments need the sandbox bank');
    await this.bank.settleHold(req.paymentId, 'canceled', null);
    return this.getPayment({ paymentId: req.paymentId, ref: req.ref });
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
    // A card token pays as a good card: the sandbox cannot know the card behind it.
    const byNumber = p.accountType !== 'CARD' || cardDestination(p.account).kind === 'number';
    const fails = byNumber && p.account.endsWith('0002');
    if (this.env.db) return this.apply('payout', p.payoutId, p.amount, fails ? 'failed' : 'succeeded', byNumber && p.account.endsWith(SANDBOX_LOST_PAYOUT_SUFFIX));
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

  async parseNotification(n?: InboundNotification): Promise<ParsedNotification> {
    return parseSandboxNotification(n);
  }
}

/** The sandbox's saved card: its token, the mask, the expiry as MM/YY. */
function sandboxSaved(token: string, mask: string, card: { expMonth: number; expYear: number }): SavedCard {
  return { providerId: token, mask, expiry: `${String(card.expMonth).padStart(2, '0')}/${String(card.expYear % 100).padStart(2, '0')}` };
}
