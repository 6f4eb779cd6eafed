import { Decimal } from 'decimal.js';
import type { Queryable } from '../../../../db/client.js';
import { runPaymentById } from '../../../payment/payment-by-id.js';

/** How long the sandbox bank waits for the payer's 3-D Secure answer; then it declines. */
export const SANDBOX_3DS_TTL_MS = 15 * 60 * 1000;
/** How long a sandbox SBP QR code stays payable; then the payment is declined (expired). */
export const SANDBOX_QR_TTL_MS = 30 * 60 * 1000;

/** How long the sandbox holds a two-stage card payment (YooKassa holds a card payment 7 days, then cancels it: `expired_on_capture`). */
export const SANDBOX_HOLD_TTL_MS = 7 * 86400 * 1000;

/** The sandbox bank pages (served by the payment page's routes, src/page/sandbox-bank.ts). */
export const sandbox3dsPath = (paymentId: string): string => `/sandbox/3ds/${paymentId}`;
export const sandboxSbpPath = (paymentId: string): string => `/sandbox/sbp/${paymentId}`;

/** A sandbox payment waiting on the payer, or what the sandbox bank decided. */
export type SandboxPaymentStatus = 'challenge' | 'sbp_waiting' | 'paid' | 'declined' | 'expired' | 'authorized' | 'canceled';
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
           OR (status = 'sbp_waiting' AND created_at < now() - make_interval(secs => $3::double precision / 1000))
           OR (status = 'authorized' AND created_at < now() - make_interval(secs => $4::double precision / 1000)) AS expired
         FROM sandbox_operations WHERE kind = 'payment' AND our_id = $1`, [ourId, SANDBOX_3DS_TTL_MS, SANDBOX_QR_TTL_MS, SANDBOX_HOLD_TTL_MS]);
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

  /** Marks a waiting operation past its deadline as expired (the bank gave up on the payer, or a hold ran out). */
  async expire(ourId: string): Promise<void> {
    await this.db.query(`UPDATE sandbox_operations SET status = 'expired' WHERE kind = 'payment' AND our_id = $1 AND status IN ('challenge', 'sbp_waiting', 'authorized')`, [ourId]);
  }

  /**
   * A held payment captured (`amount` at most what is held: the rest is released) or cancelled,
   * once: only an unexpired `authorized` operation changes; false otherwise (the caller reads
   * what it is).
   */
  async settleHold(ourId: string, to: 'paid' | 'canceled', amount: Decimal | null): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE sandbox_operations SET status = $2, amount = coalesce($3::numeric, amount)
        WHERE kind = 'payment' AND our_id = $1 AND status = 'authorized' AND ($3::numeric IS NULL OR $3::numeric <= amount)
          AND created_at >= now() - make_interval(secs => $4::double precision / 1000)`,
      [ourId, to, amount?.toFixed(2) ?? null, SANDBOX_HOLD_TTL_MS]);
    return r.rowCount === 1;
  }

  /**
   * Saved cards (docs/adr/0074-saved-cards-and-recurring-charges.md): the sandbox's token of the
   * card a payment paid with (kind 'card_token', our_id the token, ref the payment that saved it).
   */
  async saveCard(token: string, paymentId: string): Promise<void> {
    await this.db.query(
      `INSERT INTO sandbox_operations (kind, our_id, ref, status) VALUES ('card_token', $1, $2, 'active') ON CONFLICT (kind, our_id) DO NOTHING`, [token, paymentId]);
  }

  /** The token a payment saved, if any. */
  async tokenOfPayment(paymentId: string): Promise<string | null> {
    const r = await this.db.query<{ our_id: string }>(`SELECT our_id FROM sandbox_operations WHERE kind = 'card_token' AND ref = $1 LIMIT 1`, [paymentId]);
    return r.rows[0]?.our_id ?? null;
  }

  /** The payment that saved a token (its card decides a charge's answer); null for a token the sandbox never issued. */
  async paymentOfToken(token: string): Promise<string | null> {
    const r = await this.db.query<{ ref: string }>(`SELECT ref FROM sandbox_operations WHERE kind = 'card_token' AND our_id = $1 AND status = 'active'`, [token]);
    return r.rows[0]?.ref ?? null;
  }

  /** The payment row's card and amount, for a card payment the sandbox answered at once (it answers the same again). */
  async paymentCard(ourId: string): Promise<{ billId: string; method: string; fromCard: string | null; amount: Decimal } | null> {
    const r = await runPaymentById<{ bill_id: string; method: string; from_card: string | null; amount: string }>(this.db, ourId, {
      text: `SELECT bill_id, method::text, from_card, amount::text FROM payments WHERE id = $1`, values: [ourId] });
    const x = r.rows[0];
    return x ? { billId: x.bill_id, method: x.method, fromCard: x.from_card, amount: new Decimal(x.amount) } : null;
  }
}
