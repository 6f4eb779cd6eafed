import type { Db } from '../db/client.js';
import { newFormSecret, newSessionCookie, passwordMatches, sessionIdOf } from '../lib/web-session.js';

/** Absolute session lifetime. */
export const SESSION_HOURS = 12;

export interface CabinetMerchant {
  id: string;
  name: string;
  email: string;
  status: 'ACTIVE' | 'BANNED';
  verified: boolean;
  subscription: 'ACTIVE' | 'INACTIVE' | 'NONE';
  grantRefunds: boolean;
  grantRegularPayouts: boolean;
}

export interface CabinetSession {
  id: string;
  csrfToken: string;
  merchant: CabinetMerchant;
}

export type LoginResult =
  | { ok: true; cookie: string; merchantId: string }
  | { ok: false; reason: 'invalid' | 'banned' };

const MERCHANT_COLS = `m.id, m.name, m.email, m.status, m.verified, m.subscription,
  m.grant_refunds AS "grantRefunds", m.grant_regular_payouts AS "grantRegularPayouts"`;

/** Cabinet sign-in, server-side sessions and the lock-out after repeated failures. */
export class SessionStore {
  constructor(private readonly db: Db) {}

  /**
   * Checks the password (who may try at all is the SignInGuard's business, before this). An
   * unknown email costs the same bcrypt round as a known one; a banned merchant is told so only
   * after the right password.
   */
  async login(email: string, password: string): Promise<LoginResult> {
    const r = await this.db.pool.query<{ id: string; password_hash: string | null; status: string }>(
      'SELECT id, password_hash, status FROM merchants WHERE email = $1',
      [email.trim().toLowerCase()],
    );
    const m = r.rows[0];
    const good = await passwordMatches(password, m?.password_hash ?? null);
    if (!m || !m.password_hash || !good) return { ok: false, reason: 'invalid' };
    if (m.status === 'BANNED') return { ok: false, reason: 'banned' };
    const cookie = await this.create(m.id);
    return { ok: true, cookie, merchantId: m.id };
  }

  /** A new session; returns the cookie value (only its SHA-256 is stored). */
  async create(merchantId: string): Promise<string> {
    const { cookie, id } = newSessionCookie();
    await this.db.pool.query(
      `INSERT INTO cabinet_sessions (id, merchant_id, csrf_token, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(hours => $4))`,
      [id, merchantId, newFormSecret(), SESSION_HOURS],
    );
    // Expired sessions of this merchant are swept here rather than by a separate job.
    await this.db.pool.query('DELETE FROM cabinet_sessions WHERE merchant_id = $1 AND expires_at <= now()', [merchantId]);
    return cookie;
  }

  /** The live session for a cookie value, with its merchant; null when unknown or expired. */
  async load(cookie: string | undefined): Promise<CabinetSession | null> {
    const sid = sessionIdOf(cookie);
    if (!sid) return null;
    const r = await this.db.pool.query<CabinetMerchant & { sid: string; csrf: string }>(
      `SELECT s.id AS sid, s.csrf_token AS csrf, ${MERCHANT_COLS}
         FROM cabinet_sessions s JOIN merchants m ON m.id = s.merchant_id
        WHERE s.id = $1 AND s.expires_at > now()`,
      [sid],
    );
    const row = r.rows[0];
    if (!row) return null;
    const { sid: id, csrf, ...merchant } = row;
    return { id, csrfToken: csrf, merchant };
  }

  async destroy(sessionId: string): Promise<void> {
    await this.db.pool.query('DELETE FROM cabinet_sessions WHERE id = $1', [sessionId]);
  }
}
