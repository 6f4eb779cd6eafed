import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { ValidationError } from '../../errors.js';
import type { MailOutbox } from '../../mail/mail-outbox.js';
import { mailTexts } from '../../mail/templates.js';
import { MIN_PASSWORD } from '../merchant/team.service.js';

/** How long an operator's reset link works. */
export const OPERATOR_RESET_MINUTES = 60;
/** How long an invited operator's link works (a week, as the cabinet's invitations). */
export const OPERATOR_INVITE_MINUTES = 7 * 24 * 60;
/** The console page a reset link opens (the token in the query string: request logs drop it). */
export const OPERATOR_RESET_PATH = '/operator/password-reset';

/** Who asked for the link: the operator on the sign-in page, an admin for them, or an admin's invitation. */
export type ResetAskedBy = 'self' | 'admin' | 'invite';
export interface OperatorResetRequested { operatorId: string; email: string; expiresAt: Date }
export interface OperatorPasswordSet { operatorId: string; email: string; sessionsEnded: number }

const TOKEN = /^[A-Za-z0-9_-]{20,100}$/;

/**
 * An operator's password reset by a mailed one-time link (only its SHA-256 stored, valid
 * OPERATOR_RESET_MINUTES, single use; a newer link replaces an unused one), as the cabinet's.
 * Only an active operator gets a link or may use one. Setting the password ends every console
 * session of the operator; the second factor stays as it is (a reset opens the password step,
 * never the TOTP one).
 */
export class OperatorPasswordResetService {
  constructor(private readonly config: Config, private readonly db: Db, private readonly mail: MailOutbox) {}

  /** A link for the active operator `operatorId`, mailed in the same transaction; null when there is none. */
  async request(operatorId: string, by: ResetAskedBy, inTx?: InTx<OperatorResetRequested>): Promise<OperatorResetRequested | null> {
    return this.issue('id = $1', operatorId, by, inTx);
  }

  /** The same for the active operator with `email` (the sign-in page's "Forgot password?"); null when there is none. */
  async requestByEmail(email: string, inTx?: InTx<OperatorResetRequested>): Promise<OperatorResetRequested | null> {
    return this.issue('email = $1', email.trim().toLowerCase(), 'self', inTx);
  }

  private async issue(where: string, key: string, by: ResetAskedBy, inTx?: InTx<OperatorResetRequested>): Promise<OperatorResetRequested | null> {
    const token = randomBytes(32).toString('base64url');
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query<{ id: string; email: string }>(`SELECT id, email FROM operators WHERE ${where} AND status = 'ACTIVE' FOR UPDATE`, [key]);
      const minutes = by === 'invite' ? OPERATOR_INVITE_MINUTES : OPERATOR_RESET_MINUTES;
      const op = r.rows[0];
      if (!op) return null;
      await dropUnused(c, op.id);
      const ins = await c.query<{ expires_at: Date }>(
        `INSERT INTO operator_password_resets (id, operator_id, token_hash, expires_at)
         VALUES ($1, $2, $3, now() + make_interval(mins => $4)) RETURNING expires_at`,
        [newId(), op.id, sha256Hex(token), minutes],
      );
      const link = `${this.config.publicBaseUrl}${OPERATOR_RESET_PATH}?token=${token}`;
      await this.mail.enqueue(c, { merchantId: null, kind: 'operator_password_reset', to: op.email, ...mailTexts.operatorPasswordReset(link, minutes, by) });
      const out = { operatorId: op.id, email: op.email, expiresAt: ins.rows[0]!.expires_at };
      if (inTx) await inTx(c, out);
      return out;
    });
  }

  /** The operator's email while the link works (unused, not expired, the operator active), else null. */
  async lookup(token: string): Promise<{ email: string } | null> {
    if (!TOKEN.test(token)) return null;
    const r = await this.db.pool.query<{ email: string }>(
      `SELECT o.email FROM operator_password_resets p JOIN operators o ON o.id = p.operator_id
        WHERE p.token_hash = $1 AND p.used_at IS NULL AND p.expires_at > now() AND o.status = 'ACTIVE'`,
      [sha256Hex(token)],
    );
    return r.rows[0] ?? null;
  }

  /**
   * Sets the new password, spends the link and ends every console session of the operator, in
   * one transaction. Null when the link is unknown, used, expired or its operator disabled
   * (checked after the password's rules, so a bad password does not spend it).
   */
  async complete(token: string, password: string, inTx?: InTx<OperatorPasswordSet>): Promise<OperatorPasswordSet | null> {
    if (password.length < MIN_PASSWORD || password.length > 200) {
      throw new ValidationError({ password: [`The password must be at least ${MIN_PASSWORD} characters.`] });
    }
    if (!TOKEN.test(token)) return null;
    const hash = await bcrypt.hash(password, 10);
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query<{ operator_id: string; email: string }>(
        `UPDATE operator_password_resets p SET used_at = now() FROM operators o
          WHERE p.token_hash = $1 AND p.used_at IS NULL AND p.expires_at > now() AND o.id = p.operator_id AND o.status = 'ACTIVE'
          RETURNING p.operator_id, o.email`,
        [sha256Hex(token)],
      );
      const row = r.rows[0];
      if (!row) return null;
      await c.query('UPDATE operators SET password_hash = $2, updated_at = now() WHERE id = $1', [row.operator_id, hash]);
      await dropUnused(c, row.operator_id);
      const ended = await c.query('DELETE FROM operator_sessions WHERE operator_id = $1', [row.operator_id]);
      const out = { operatorId: row.operator_id, email: row.email, sessionsEnded: ended.rowCount ?? 0 };
      if (inTx) await inTx(c, out);
      return out;
    });
  }
}

async function dropUnused(c: Queryable, operatorId: string): Promise<void> {
  await c.query('DELETE FROM operator_password_resets WHERE operator_id = $1 AND used_at IS NULL', [operatorId]);
}
