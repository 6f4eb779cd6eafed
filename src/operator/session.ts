import type { Db } from '../db/client.js';
import type { Role } from '../domain/operator/roles.js';
import { sha256Hex } from '../lib/crypto.js';
import { SESSION_HOURS, newFormSecret, newSessionCookie, passwordMatches, sessionIdOf } from '../lib/web-session.js';

/** Minutes between a right password and the second factor. */
export const SECOND_FACTOR_MINUTES = 10;

export interface ConsoleOperator {
  id: string;
  email: string;
  role: Role;
  totpEnabled: boolean;
}

export interface ConsoleSession {
  id: string;
  csrfToken: string;
  /** PASSWORD: the second factor is still owed; FULL: signed in. */
  stage: 'PASSWORD' | 'FULL';
  pendingTotpEnc: string | null;
  operator: ConsoleOperator;
}

/**
 * Operator console sessions: the cabinet's design (src/lib/web-session.ts: 32-byte cookie, its
 * SHA-256 stored, per-session CSRF token, 12 h absolute), with two stages: a right password
 * opens a PASSWORD session for ten minutes that reaches only the second-factor pages, and the
 * second factor replaces it with a FULL session under a new cookie. A disabled operator's
 * sessions stop at once (the operator row is read with every request).
 */
export class OperatorSessionStore {
  constructor(private readonly db: Db) {}

  /** The operator whose password this is; null for an unknown email or a wrong password (same cost). */
  async checkPassword(email: string, password: string): Promise<{ id: string; status: string } | null> {
    const r = await this.db.pool.query<{ id: string; password_hash: string | null; status: string }>(
      'SELECT id, password_hash, status::text AS status FROM operators WHERE email = $1', [email.trim().toLowerCase()],
    );
    const o = r.rows[0];
    const good = await passwordMatches(password, o?.password_hash ?? null);
    return o && good ? { id: o.id, status: o.status } : null;
  }

  /** The id of an operator by email (for the audit entry of a failed sign-in), or null. */
  async idOfEmail(email: string): Promise<string | null> {
    const r = await this.db.pool.query<{ id: string }>('SELECT id FROM operators WHERE email = $1', [email.trim().toLowerCase()]);
    return r.rows[0]?.id ?? null;
  }

  async create(operatorId: string, stage: 'PASSWORD' | 'FULL'): Promise<string> {
    const { cookie, id } = newSessionCookie();
    await this.db.pool.query(
      `INSERT INTO operator_sessions (id, operator_id, csrf_token, stage, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(mins => $5))`,
      [id, operatorId, newFormSecret(), stage, stage === 'FULL' ? SESSION_HOURS * 60 : SECOND_FACTOR_MINUTES],
    );
    await this.db.pool.query('DELETE FROM operator_sessions WHERE operator_id = $1 AND expires_at <= now()', [operatorId]);
    return cookie;
  }

  /** The second factor passed: the PASSWORD session is replaced by a FULL one (a new cookie). */
  async promote(s: ConsoleSession): Promise<string> {
    await this.destroy(s.id);
    return this.create(s.operator.id, 'FULL');
  }

  async load(cookie: string | undefined): Promise<ConsoleSession | null> {
    const sid = sessionIdOf(cookie);
    if (!sid) return null;
    const r = await this.db.pool.query<{ csrf: string; stage: 'PASSWORD' | 'FULL'; pending: string | null; oid: string; email: string; role: string; status: string; totp: boolean }>(
      `SELECT s.csrf_token AS csrf, s.stage, s.pending_totp_enc AS pending, o.id AS oid, o.email, o.role::text AS role,
              o.status::text AS status, o.totp_enabled_at IS NOT NULL AS totp
         FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
        WHERE s.id = $1 AND s.expires_at > now()`,
      [sid],
    );
    const row = r.rows[0];
    if (!row) return null;
    if (row.status !== 'ACTIVE') { await this.destroy(sid); return null; }
    return {
      id: sid, csrfToken: row.csrf, stage: row.stage, pendingTotpEnc: row.pending,
      operator: { id: row.oid, email: row.email, role: row.role.toLowerCase() as Role, totpEnabled: row.totp },
    };
  }

  async setPendingTotp(sessionId: string, box: string): Promise<void> {
    await this.db.pool.query('UPDATE operator_sessions SET pending_totp_enc = $2 WHERE id = $1', [sessionId, box]);
  }

  async destroy(sessionId: string): Promise<void> {
    await this.db.pool.query('DELETE FROM operator_sessions WHERE id = $1', [sessionId]);
  }

  /** A single-use token for one rendered form of this session. */
  async issueFormToken(sessionId: string): Promise<string> {
    const token = newFormSecret();
    await this.db.pool.query('INSERT INTO operator_form_tokens (id, session_id) VALUES ($1, $2)', [sha256Hex(token), sessionId]);
    return token;
  }

  /** True once per token of this session: the row is deleted by the first POST that shows it. */
  async consumeFormToken(sessionId: string, token: string): Promise<boolean> {
    if (!token || token.length > 100) return false;
    const r = await this.db.pool.query('DELETE FROM operator_form_tokens WHERE id = $1 AND session_id = $2', [sha256Hex(token), sessionId]);
    return (r.rowCount ?? 0) > 0;
  }
}
