import { randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { Db } from '../db/client.js';
import { sha256Hex } from '../lib/crypto.js';

/** Failed sign-ins in a row that lock the account, and for how long. */
export const MAX_FAILED_LOGINS = 5;
export const LOCK_MINUTES = 15;
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
  | { ok: false; reason: 'invalid' | 'locked' | 'banned' };

// Compared against when the email is unknown, so both paths cost one bcrypt round (cost 10,
// as real hashes). A literal: hashing it at import cost ~0.1-0.6 s of every start-up.
const DUMMY_HASH = '$2b$10$dYCeCMPMgFdQVVXEFD6JlORdjmqOKtlqdiHSc.nW.BZ2V.Lot19ZG';

const MERCHANT_COLS = `m.id, m.name, m.email, m.status, m.verified, m.subscription,
  m.grant_refunds AS "grantRefunds", m.grant_regular_payouts AS "grantRegularPayouts"`;

/** Cabinet sign-in, server-side sessions and the lock-out after repeated failures. */
export class SessionStore {
  constructor(private readonly db: Db) {}

  /**
   * Checks the password; a locked account is refused without looking at it. Failures are
   * counted with one atomic UPDATE, so concurrent guesses are all counted; the success path
   * resets the counter only if the account is not (or no longer) locked, re-checked in the
   * same statement, so a guess racing the lock cannot slip through.
   */
  async login(email: string, password: string): Promise<LoginResult> {
    const r = await this.db.pool.query<{ id: string; password_hash: string | null; status: string; locked: boolean }>(
      `SELECT id, password_hash, status, (locked_until IS NOT NULL AND locked_until > now()) AS locked
         FROM merchants WHERE email = $1`,
      [email.trim().toLowerCase()],
    );
    const m = r.rows[0];
    if (!m || !m.password_hash) {
      await bcrypt.compare(password, DUMMY_HASH);
      return { ok: false, reason: 'invalid' };
    }
    if (m.locked) return { ok: false, reason: 'locked' };
    const good = await bcrypt.compare(password, m.password_hash);
    if (!good) {
      const u = await this.db.pool.query<{ locked: boolean }>(
        `UPDATE merchants SET
           failed_login_count = CASE WHEN failed_login_count + 1 >= $2 THEN 0 ELSE failed_login_count + 1 END,
           locked_until = CASE WHEN failed_login_count + 1 >= $2 THEN now() + make_interval(mins => $3) ELSE locked_until END
         WHERE id = $1
         RETURNING (locked_until IS NOT NULL AND locked_until > now()) AS locked`,
        [m.id, MAX_FAILED_LOGINS, LOCK_MINUTES],
      );
      return { ok: false, reason: u.rows[0]?.locked ? 'locked' : 'invalid' };
    }
    const u = await this.db.pool.query(
      `UPDATE merchants SET failed_login_count = 0, locked_until = NULL
        WHERE id = $1 AND (locked_until IS NULL OR locked_until <= now())`,
      [m.id],
    );
    if (u.rowCount !== 1) return { ok: false, reason: 'locked' };
    if (m.status === 'BANNED') return { ok: false, reason: 'banned' };
    const cookie = await this.create(m.id);
    return { ok: true, cookie, merchantId: m.id };
  }

  /** A new session; returns the cookie value (only its SHA-256 is stored). */
  async create(merchantId: string): Promise<string> {
    const cookie = randomBytes(32).toString('base64url');
    await this.db.pool.query(
      `INSERT INTO cabinet_sessions (id, merchant_id, csrf_token, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(hours => $4))`,
      [sha256Hex(cookie), merchantId, randomBytes(32).toString('base64url'), SESSION_HOURS],
    );
    // Expired sessions of this merchant are swept here rather than by a separate job.
    await this.db.pool.query('DELETE FROM cabinet_sessions WHERE merchant_id = $1 AND expires_at <= now()', [merchantId]);
    return cookie;
  }

  /** The live session for a cookie value, with its merchant; null when unknown or expired. */
  async load(cookie: string | undefined): Promise<CabinetSession | null> {
    if (!cookie || cookie.length > 100) return null;
    const r = await this.db.pool.query<CabinetMerchant & { sid: string; csrf: string }>(
      `SELECT s.id AS sid, s.csrf_token AS csrf, ${MERCHANT_COLS}
         FROM cabinet_sessions s JOIN merchants m ON m.id = s.merchant_id
        WHERE s.id = $1 AND s.expires_at > now()`,
      [sha256Hex(cookie)],
    );
    const row = r.rows[0];
    if (!row) return null;
    const { sid, csrf, ...merchant } = row;
    return { id: sid, csrfToken: csrf, merchant };
  }

  async destroy(sessionId: string): Promise<void> {
    await this.db.pool.query('DELETE FROM cabinet_sessions WHERE id = $1', [sessionId]);
  }
}
