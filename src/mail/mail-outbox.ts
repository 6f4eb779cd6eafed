import type { Config } from '../config.js';
import type { Db, Queryable } from '../db/client.js';
import { decrypt, encrypt } from '../lib/crypto.js';

/** What a mail is about (the mailbox page and the logs name it; the text is never logged). */
export type MailKind =
  | 'password_reset' | 'team_invite' | 'two_factor_on' | 'two_factor_off' | 'two_factor_reset'
  | 'payout_approved' | 'payout_declined' | 'operator_password_reset';

export interface NewMail {
  /** The merchant the mail concerns (the live one), for the mailbox page; null when none. */
  merchantId: string | null;
  kind: MailKind;
  to: string;
  subject: string;
  /** Plain text; may hold a one-time link, so it is stored encrypted and never logged. */
  text: string;
}

export type MailStatus = 'PENDING' | 'SENT' | 'KEPT' | 'DEAD';

/** One row of the mailbox page; `text` only where it may be shown (the sandbox's dev mailbox). */
export interface MailView {
  id: string;
  merchant_id: string | null;
  kind: string;
  to: string;
  subject: string;
  status: MailStatus;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
  text: string | null;
}

/**
 * Whether a mail enqueued now reaches its reader: over SMTP_URL, or in the sandbox profile the
 * dev mailbox. False in production without SMTP_URL (the mail would wait for it): a one-time
 * link then is refused rather than promised.
 */
export const mailReachesReader = (config: Pick<Config, 'smtpUrl' | 'profile'>): boolean => config.smtpUrl !== undefined || config.profile === 'sandbox';

/** A mail claimed by the worker, with its text decrypted for the send (null: it cannot be read). */
export interface ClaimedMail { id: string; kind: string; to: string; subject: string; text: string | null; attempts: number }

/**
 * The mail queue (a transactional outbox of its own, docs/adr/0038-mail-outbox-and-password-reset.md): `enqueue` writes the row in the caller's transaction, so a mail goes out only for a
 * change that committed; the mail worker (src/workers/mail.ts) sends it, with retries.
 */
export class MailOutbox {
  constructor(private readonly config: Config, private readonly db: Db) {}

  /** In the caller's transaction; works on a Prisma transaction too (no rows are read back). */
  async enqueue(c: Queryable, m: NewMail): Promise<void> {
    await c.query(
      `INSERT INTO mail_outbox (merchant_id, kind, to_address, subject, body_enc) VALUES ($1, $2, $3, $4, $5)`,
      [m.merchantId, m.kind, m.to, m.subject, encrypt(this.config.tokenEncryptionKey, m.text)],
    );
  }

  /**
   * A mail to a cabinet account, addressed in the same statement: the merchant's own login
   * (`userId` null; a test twin's mail goes to its live merchant) or its team member `userId`.
   * Nothing is queued when there is no such account.
   */
  async enqueueToAccount(c: Queryable, a: { merchantId: string; userId: string | null }, kind: MailKind, t: { subject: string; text: string }): Promise<void> {
    const body = encrypt(this.config.tokenEncryptionKey, t.text);
    await c.query(
      `INSERT INTO mail_outbox (merchant_id, kind, to_address, subject, body_enc)
       SELECT COALESCE(l.id, m.id), $3, COALESCE(l.email, m.email), $4, $5
         FROM merchants m LEFT JOIN merchants l ON l.id = m.live_merchant_id WHERE m.id = $1 AND $2::text IS NULL
       UNION ALL
       SELECT u.merchant_id, $3, u.email, $4, $5 FROM merchant_users u WHERE u.id = $2::text AND u.merchant_id = $1`,
      [a.merchantId, a.userId, kind, t.subject, body],
    );
  }

  /**
   * The mailbox page: newest first. The text is shown only in the sandbox profile (the dev
   * mailbox, where nothing else delivers it); in production no one reads a merchant's mail here.
   */
  async list(limit = 100): Promise<MailView[]> {
    const r = await this.db.pool.query<{
      id: string; merchant_id: string | null; kind: string; to_address: string; subject: string; body_enc: string | null;
      status: MailStatus; attempts: number; last_error: string | null; created_at: Date; sent_at: Date | null;
    }>(
      `SELECT id::text AS id, merchant_id, kind, to_address, subject, body_enc, status, attempts, last_error, created_at, sent_at
         FROM mail_outbox m ORDER BY m.id DESC LIMIT $1`,
      [Math.min(Math.max(limit, 1), 500)],
    );
    const showText = this.config.profile === 'sandbox';
    return r.rows.map((x) => ({
      id: x.id, merchant_id: x.merchant_id, kind: x.kind, to: x.to_address, subject: x.subject, status: x.status,
      attempts: x.attempts, last_error: x.last_error, created_at: x.created_at, sent_at: x.sent_at,
      text: showText ? this.open(x.body_enc) : null,
    }));
  }

  /** Up to `limit` due mails, leased for `leaseMs` (another worker takes them once it expires). */
  async claim(limit: number, leaseMs: number): Promise<ClaimedMail[]> {
    const r = await this.db.pool.query<{ id: string; kind: string; to_address: string; subject: string; body_enc: string | null; attempts: number }>(
      `UPDATE mail_outbox m SET lease_until = now() + make_interval(secs => $2::double precision / 1000)
         FROM (SELECT id FROM mail_outbox
                WHERE status = 'PENDING' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until <= now())
                ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED) due
        WHERE m.id = due.id
        RETURNING m.id::text AS id, m.kind, m.to_address, m.subject, m.body_enc, m.attempts`,
      [limit, leaseMs],
    );
    return r.rows.map((x) => ({
      id: x.id, kind: x.kind, to: x.to_address, subject: x.subject, attempts: x.attempts,
      text: this.open(x.body_enc),
    }));
  }

  /** The text, or null when there is none or it cannot be decrypted (TOKEN_ENCRYPTION_KEY changed). */
  private open(box: string | null): string | null {
    if (!box) return null;
    try { return decrypt(this.config.tokenEncryptionKey, box); } catch { return null; }
  }

  /** The SMTP server took it: the text (a possible one-time link) is not kept. */
  async sent(id: string): Promise<void> {
    await this.db.pool.query(
      `UPDATE mail_outbox SET status = 'SENT', body_enc = NULL, sent_at = now(), attempts = attempts + 1, lease_until = NULL, last_error = NULL WHERE id = $1::bigint`,
      [id],
    );
  }

  /** No SMTP in the sandbox profile: the mail stays readable in the dev mailbox. */
  async kept(id: string): Promise<void> {
    await this.db.pool.query(`UPDATE mail_outbox SET status = 'KEPT', sent_at = now(), lease_until = NULL WHERE id = $1::bigint`, [id]);
  }

  /** A failed attempt: due again at `nextAttemptAt`, or given up (DEAD, the text dropped). */
  async failed(id: string, error: string, nextAttemptAt: Date | null): Promise<void> {
    await this.db.pool.query(
      nextAttemptAt
        ? `UPDATE mail_outbox SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3, lease_until = NULL WHERE id = $1::bigint`
        : `UPDATE mail_outbox SET attempts = attempts + 1, last_error = $2, status = 'DEAD', body_enc = NULL, lease_until = NULL WHERE id = $1::bigint`,
      nextAttemptAt ? [id, error.slice(0, 500), nextAttemptAt] : [id, error.slice(0, 500)],
    );
  }

  /** Leases given back on stop (claimed, not sent). */
  async release(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.pool.query(`UPDATE mail_outbox SET lease_until = NULL WHERE id = ANY($1::bigint[])`, [ids]);
  }
}
