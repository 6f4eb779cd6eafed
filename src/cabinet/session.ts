import type { Db, Queryable } from '../db/client.js';
import { SESSION_HOURS, newFormSecret, newSessionCookie, passwordMatches, sessionIdOf } from '../lib/web-session.js';

/** Minutes between a right password and the TOTP code, for an account with 2FA on. */
export const SECOND_FACTOR_MINUTES = 10;

export interface CabinetMerchant {
  id: string;
  name: string;
  email: string;
  status: 'ACTIVE' | 'BANNED';
  verified: boolean;
  subscription: 'ACTIVE' | 'INACTIVE' | 'NONE';
  grantRefunds: boolean;
  grantRegularPayouts: boolean;
  /** The owner's "Require two-factor authentication for everyone". */
  requireTwoFactor: boolean;
  /** The merchant's time zone setting (IANA); null: the deployment's TZ. */
  timeZone: string | null;
}

/** A merchant team member's sign-in (their own email, password and role); null on a session of the merchant's own login. */
export interface CabinetUser {
  id: string;
  email: string;
  role: 'owner' | 'developer' | 'accountant' | 'support';
}

export interface CabinetSession {
  id: string;
  csrfToken: string;
  merchant: CabinetMerchant;
  /** null: the merchant's own login, which is the owner. */
  user: CabinetUser | null;
  /** PASSWORD: the account has TOTP on and the code is still owed; FULL: signed in. */
  stage: 'PASSWORD' | 'FULL';
  /** Whether the signed-in account (the merchant's login or the member) has TOTP on. */
  totpEnabled: boolean;
  /** A TOTP secret being set up (encrypted), until a code confirms it. */
  pendingTotpEnc: string | null;
}

/** The row that holds a session's sign-in (and its TOTP): the merchant's own login or a member. */
export const accountOf = (s: CabinetSession): { table: 'merchants' | 'merchant_users'; id: string; email: string } =>
  s.user ? { table: 'merchant_users', id: s.user.id, email: s.user.email } : { table: 'merchants', id: s.merchant.id, email: s.merchant.email };

/**
 * A signed-in account that must set up TOTP before anything else: its merchant requires 2FA for
 * everyone and this account has none (it reaches only the security page and sign-out).
 */
export const mustEnrolTwoFactor = (s: CabinetSession): boolean => s.stage === 'FULL' && s.merchant.requireTwoFactor && !s.totpEnabled;

/** Whose login it was (for the audit trail): the merchant, and the team member when it was one. */
export interface LoginAccount { merchantId: string; userId: string | null }

export type LoginResult =
  | { ok: true; cookie: string; merchantId: string; userId: string | null; secondFactor: boolean }
  | { ok: false; reason: 'invalid' | 'banned'; account: LoginAccount | null };

const MERCHANT_COLS = `m.id, m.name, m.email, m.status, m.verified, m.subscription,
  m.grant_refunds AS "grantRefunds", m.grant_regular_payouts AS "grantRegularPayouts", m.require_two_factor AS "requireTwoFactor",
  m.time_zone AS "timeZone"`;

/** Cabinet sign-in, server-side sessions and the lock-out after repeated failures. */
export class SessionStore {
  constructor(private readonly db: Db) {}

  /**
   * Checks the password (who may try at all is the SignInGuard's business, before this). An
   * unknown email costs the same bcrypt round as a known one; a banned merchant is told so only
   * after the right password.
   */
  async login(email: string, password: string): Promise<LoginResult> {
    // The merchant's own login, else a team member's (an invited member without a password yet finds nothing).
    const r = await this.db.pool.query<{ id: string; password_hash: string | null; status: string; user_id: string | null; totp: boolean }>(
      `SELECT id, password_hash, status::text AS status, NULL::text AS user_id, totp_enabled_at IS NOT NULL AS totp, 0 AS k
         FROM merchants WHERE email = $1
       UNION ALL
       SELECT m.id, u.password_hash, m.status::text, u.id, u.totp_enabled_at IS NOT NULL, 1
         FROM merchant_users u JOIN merchants m ON m.id = u.merchant_id
        WHERE u.email = $1 AND u.password_hash IS NOT NULL
       ORDER BY k LIMIT 1`,
      [email.trim().toLowerCase()],
    );
    const m = r.rows[0];
    const good = await passwordMatches(password, m?.password_hash ?? null);
    const account = m ? { merchantId: m.id, userId: m.user_id } : null;
    if (!m || !m.password_hash || !good) return { ok: false, reason: 'invalid', account };
    if (m.status === 'BANNED') return { ok: false, reason: 'banned', account };
    // With TOTP on, the right password opens only the code page (src/cabinet/routes/two-factor.ts).
    const cookie = await this.create(m.id, m.user_id, m.totp ? 'PASSWORD' : 'FULL');
    return { ok: true, cookie, merchantId: m.id, userId: m.user_id, secondFactor: m.totp };
  }

  /** A new session; returns the cookie value (only its SHA-256 is stored). */
  async create(merchantId: string, userId: string | null = null, stage: 'PASSWORD' | 'FULL' = 'FULL'): Promise<string> {
    const { cookie, id } = newSessionCookie();
    await this.db.pool.query(
      `INSERT INTO cabinet_sessions (id, merchant_id, csrf_token, expires_at, user_id, stage)
       VALUES ($1, $2, $3, now() + make_interval(mins => $4), $5, $6)`,
      [id, merchantId, newFormSecret(), stage === 'FULL' ? SESSION_HOURS * 60 : SECOND_FACTOR_MINUTES, userId, stage],
    );
    // Expired sessions of this merchant are swept here rather than by a separate job.
    await this.db.pool.query('DELETE FROM cabinet_sessions WHERE merchant_id = $1 AND expires_at <= now()', [merchantId]);
    return cookie;
  }

  /** The live session for a cookie value, with its merchant; null when unknown or expired. */
  async load(cookie: string | undefined): Promise<CabinetSession | null> {
    const sid = sessionIdOf(cookie);
    if (!sid) return null;
    const r = await this.db.pool.query<CabinetMerchant & {
      sid: string; csrf: string; uid: string | null; uemail: string | null; urole: string | null;
      stage: 'PASSWORD' | 'FULL'; pending: string | null; totp: boolean;
    }>(
      `SELECT s.id AS sid, s.csrf_token AS csrf, ${MERCHANT_COLS}, u.id AS uid, u.email AS uemail, u.role::text AS urole,
              s.stage, s.pending_totp_enc AS pending,
              CASE WHEN s.user_id IS NULL THEN m.totp_enabled_at IS NOT NULL ELSE u.totp_enabled_at IS NOT NULL END AS totp
         FROM cabinet_sessions s JOIN merchants m ON m.id = s.merchant_id
         LEFT JOIN merchant_users u ON u.id = s.user_id
        WHERE s.id = $1 AND s.expires_at > now()`,
      [sid],
    );
    const row = r.rows[0];
    if (!row) return null;
    const { sid: id, csrf, uid, uemail, urole, stage, pending, totp, ...merchant } = row;
    const user = uid ? { id: uid, email: uemail!, role: urole!.toLowerCase() as CabinetUser['role'] } : null;
    return { id, csrfToken: csrf, merchant, user, stage, totpEnabled: totp, pendingTotpEnc: pending };
  }

  /** The code was right: the PASSWORD session is replaced by a FULL one (a new cookie). */
  async promote(s: CabinetSession): Promise<string> {
    await this.destroy(s.id);
    return this.create(s.merchant.id, s.user?.id ?? null, 'FULL');
  }

  /** Ends every other session of the account `s` is signed in as (the merchant's own login or the member). */
  async endOthers(c: Queryable, s: CabinetSession): Promise<void> {
    if (s.user) await c.query('DELETE FROM cabinet_sessions WHERE user_id = $1 AND id <> $2', [s.user.id, s.id]);
    else await c.query('DELETE FROM cabinet_sessions WHERE merchant_id = $1 AND user_id IS NULL AND id <> $2', [s.merchant.id, s.id]);
  }

  async setPendingTotp(sessionId: string, box: string | null): Promise<void> {
    await this.db.pool.query('UPDATE cabinet_sessions SET pending_totp_enc = $2 WHERE id = $1', [sessionId, box]);
  }

  async destroy(sessionId: string): Promise<void> {
    await this.db.pool.query('DELETE FROM cabinet_sessions WHERE id = $1', [sessionId]);
  }
}
