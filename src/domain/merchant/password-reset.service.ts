import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { MailOutbox } from '../../mail/mail-outbox.js';
import { mailTexts, type MailText } from '../../mail/templates.js';
import { endAccountSessions, type CabinetAccount } from './cabinet-sessions.js';
import { MIN_PASSWORD } from './team.service.js';

/** How long a reset link works. */
export const RESET_LINK_MINUTES = 60;
/** The cabinet page a reset link opens (the token in the query string: request logs drop it). */
export const RESET_PATH = '/cabinet/password-reset';

export interface ResetRequested { email: string; expiresAt: Date; sessionsEnded: number }
/** A link asked for on the sign-in page: the account and where it went (no session ends). */
export interface ResetAsked extends CabinetAccount { email: string; expiresAt: Date }
export interface PasswordSet extends CabinetAccount { sessionsEnded: number }

/**
 * What a link is for: a reset (RESET_LINK_MINUTES, the reset mail) unless said otherwise; a new
 * merchant whose owner signs in with its contact address gets the invitation's days and text.
 */
export interface LinkKind { minutes: number; mail: (link: string, minutes: number) => MailText }
const RESET: LinkKind = { minutes: RESET_LINK_MINUTES, mail: mailTexts.passwordReset };

const TOKEN = /^[A-Za-z0-9_-]{20,100}$/;

/**
 * An operator's password reset without the operator ever seeing a password (issue 27 item 1):
 * a one-time link (only its SHA-256 stored, valid RESET_LINK_MINUTES, single use) is mailed to
 * the cabinet account in the same transaction (the mail outbox), and every open session of that
 * account ends then (an operator resets a password because someone else may hold it); whoever
 * opens the link chooses the new password, which ends the sessions opened meanwhile.
 */
export class PasswordResetService {
  constructor(private readonly config: Config, private readonly db: Db, private readonly mail: MailOutbox) {}

  /**
   * A new link for the merchant's own login (`userId` null) or its team member `userId`; an
   * earlier unused link of the account stops working and every session of the account ends, in
   * the same transaction. NotFoundError for no such account.
   */
  async request(account: CabinetAccount, inTx?: InTx<ResetRequested>, kind: LinkKind = RESET): Promise<ResetRequested> {
    const token = randomBytes(32).toString('base64url');
    return withPgTx(this.db.pool, async (c) => {
      const r = account.userId === null
        ? await c.query<{ email: string }>('SELECT email FROM merchants WHERE id = $1 AND live_merchant_id IS NULL FOR UPDATE', [account.merchantId])
        : await c.query<{ email: string }>('SELECT email FROM merchant_users WHERE id = $1 AND merchant_id = $2 FOR UPDATE', [account.userId, account.merchantId]);
      const email = r.rows[0]?.email;
      if (!email) throw new NotFoundError(account.userId === null ? 'Merchant not found.' : 'Team member not found.');
      await this.dropUnused(c, account);
      const ins = await c.query<{ expires_at: Date }>(
        `INSERT INTO cabinet_password_resets (id, merchant_id, user_id, token_hash, expires_at)
         VALUES ($1, $2, $3, $4, now() + make_interval(mins => $5)) RETURNING expires_at`,
        [newId(), account.merchantId, account.userId, sha256Hex(token), kind.minutes],
      );
      const link = `${this.config.publicBaseUrl}${RESET_PATH}?token=${token}`;
      await this.mail.enqueue(c, { merchantId: account.merchantId, kind: 'password_reset', to: email, ...kind.mail(link, kind.minutes) });
      const out = { email, expiresAt: ins.rows[0]!.expires_at, sessionsEnded: await endAccountSessions(c, account) };
      if (inTx) await inTx(c, out);
      return out;
    });
  }

  /**
   * "Forgot password?" on the sign-in page: a link for the cabinet account that signs in with
   * `email` (a merchant's own login that has a password, or a team member), mailed in the same
   * transaction; null when no account has that address (the page answers the same either way).
   * Unlike an operator's reset it ends no session: only setting the password does.
   */
  async requestByEmail(email: string, inTx?: InTx<ResetAsked>): Promise<ResetAsked | null> {
    const address = email.trim().toLowerCase();
    if (address.length === 0 || address.length > 320) return null;
    const token = randomBytes(32).toString('base64url');
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query<{ merchant_id: string; user_id: string | null; email: string }>(
        `SELECT id AS merchant_id, NULL AS user_id, email FROM merchants WHERE email = $1 AND live_merchant_id IS NULL AND password_hash IS NOT NULL
         UNION ALL SELECT merchant_id, id, email FROM merchant_users WHERE email = $1 LIMIT 1`,
        [address],
      );
      const row = r.rows[0];
      if (!row) return null;
      const account = { merchantId: row.merchant_id, userId: row.user_id };
      await this.dropUnused(c, account);
      const ins = await c.query<{ expires_at: Date }>(
        `INSERT INTO cabinet_password_resets (id, merchant_id, user_id, token_hash, expires_at)
         VALUES ($1, $2, $3, $4, now() + make_interval(mins => $5)) RETURNING expires_at`,
        [newId(), account.merchantId, account.userId, sha256Hex(token), RESET_LINK_MINUTES],
      );
      const link = `${this.config.publicBaseUrl}${RESET_PATH}?token=${token}`;
      await this.mail.enqueue(c, { merchantId: account.merchantId, kind: 'password_reset', to: row.email, ...mailTexts.passwordResetAsked(link, RESET_LINK_MINUTES) });
      const out = { ...account, email: row.email, expiresAt: ins.rows[0]!.expires_at };
      if (inTx) await inTx(c, out);
      return out;
    });
  }

  /** The account's email while the link works (unused, not expired), else null. */
  async lookup(token: string): Promise<{ email: string } | null> {
    if (!TOKEN.test(token)) return null;
    const r = await this.db.pool.query<{ email: string }>(
      `SELECT COALESCE(u.email, m.email) AS email FROM cabinet_password_resets p
         JOIN merchants m ON m.id = p.merchant_id LEFT JOIN merchant_users u ON u.id = p.user_id
        WHERE p.token_hash = $1 AND p.used_at IS NULL AND p.expires_at > now()`,
      [sha256Hex(token)],
    );
    return r.rows[0] ?? null;
  }

  /**
   * Sets the new password and spends the link; every session of the account ends in the same
   * transaction. Null when the link is unknown, used or expired (checked after the password's
   * rules, so a bad password does not spend it).
   */
  async complete(token: string, password: string, inTx?: InTx<PasswordSet>): Promise<PasswordSet | null> {
    if (password.length < MIN_PASSWORD || password.length > 200) {
      throw new ValidationError({ password: [`The password must be at least ${MIN_PASSWORD} characters.`] });
    }
    if (!TOKEN.test(token)) return null;
    const hash = await bcrypt.hash(password, 10);
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query<{ merchant_id: string; user_id: string | null }>(
        `UPDATE cabinet_password_resets SET used_at = now()
          WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING merchant_id, user_id`,
        [sha256Hex(token)],
      );
      const row = r.rows[0];
      if (!row) return null;
      const account = { merchantId: row.merchant_id, userId: row.user_id };
      if (account.userId === null) {
        await c.query('UPDATE merchants SET password_hash = $2, updated_at = now() WHERE id = $1', [account.merchantId, hash]);
      } else {
        // An invited member who never set a password is active from now on; the invitation is spent.
        await c.query(
          'UPDATE merchant_users SET password_hash = $2, invite_token_hash = NULL, invite_expires_at = NULL, updated_at = now() WHERE id = $1',
          [account.userId, hash],
        );
      }
      await this.dropUnused(c, account);
      const out = { ...account, sessionsEnded: await endAccountSessions(c, account) };
      if (inTx) await inTx(c, out);
      return out;
    });
  }

  private async dropUnused(c: Parameters<InTx<unknown>>[0], a: CabinetAccount): Promise<void> {
    if (a.userId === null) await c.query('DELETE FROM cabinet_password_resets WHERE merchant_id = $1 AND user_id IS NULL AND used_at IS NULL', [a.merchantId]);
    else await c.query('DELETE FROM cabinet_password_resets WHERE user_id = $1 AND used_at IS NULL', [a.userId]);
  }
}
