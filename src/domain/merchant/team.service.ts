import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { TeamRole } from './team-roles.js';
import { revokeKeysOfMember, type ApiKeyView } from '../api-key/api-key.service.js';

/** How long an invitation link works. */
export const INVITE_DAYS = 7;
export const MIN_PASSWORD = 12;

export interface TeamMember {
  id: string;
  email: string;
  role: TeamRole;
  /** invited: the link was not used yet; active: a password is set. */
  state: 'invited' | 'active';
  /** Whether the member's TOTP two-factor sign-in is on. */
  two_factor: boolean;
  created_at: Date;
}

interface Row { id: string; email: string; role: string; password_hash: string | null; two_factor: boolean; created_at: Date }
const view = (r: Row): TeamMember => ({
  id: r.id, email: r.email, role: r.role.toLowerCase() as TeamRole, state: r.password_hash ? 'active' : 'invited', two_factor: r.two_factor, created_at: r.created_at,
});
const COLS = 'id, email, role::text AS role, password_hash, totp_enabled_at IS NOT NULL AS two_factor, created_at';
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Refused: the change would leave the merchant without an active owner (nobody could manage the
 * team, the live token or the payouts until an operator stepped in).
 */
export class LastOwnerError extends ConflictError {
  constructor() { super('The last active owner cannot be removed or given another role: make someone else an owner first.'); }
}

/** How many active owners a merchant has besides `exceptId`: its own login (if it has a password) and the owners who set theirs. */
async function otherActiveOwners(c: Queryable, merchantId: string, exceptId: string | null): Promise<number> {
  const r = await c.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM merchants WHERE id = $1 AND password_hash IS NOT NULL)
          + (SELECT count(*) FROM merchant_users WHERE merchant_id = $1 AND role = 'OWNER' AND password_hash IS NOT NULL
              AND id IS DISTINCT FROM $2) AS n`,
    [merchantId, exceptId],
  );
  return Number(r.rows[0]!.n);
}

/**
 * Locks the merchant's team against concurrent changes (two owners removing each other at once
 * must not both succeed), then refuses when `member` is the last active owner. NO KEY UPDATE:
 * payments' foreign keys to the merchant (KEY SHARE) are not held up.
 */
async function keepAnOwner(c: Queryable, merchantId: string, member: Row): Promise<void> {
  await c.query('SELECT 1 FROM merchants WHERE id = $1 FOR NO KEY UPDATE', [merchantId]);
  if (member.role !== 'OWNER' || !member.password_hash) return;
  if ((await otherActiveOwners(c, merchantId, member.id)) === 0) throw new LastOwnerError();
}

/**
 * A merchant's team (issue 17, item 3): the owner invites people by email with a role; the
 * invitee sets a password through a single-use link (only the SHA-256 of its token is stored;
 * it expires after INVITE_DAYS). Every change runs with the caller's audit step.
 */
export class MerchantTeamService {
  constructor(private readonly db: Db) {}

  async list(merchantId: string): Promise<TeamMember[]> {
    const r = await this.db.pool.query<Row>(`SELECT ${COLS} FROM merchant_users WHERE merchant_id = $1 ORDER BY created_at, id`, [merchantId]);
    return r.rows.map(view);
  }

  /**
   * The member who is the merchant's only active owner (the team page cannot offer to remove or
   * demote them), or null when there are others or the owner is the merchant's own login.
   */
  async soleOwner(merchantId: string): Promise<string | null> {
    const r = await this.db.pool.query<{ id: string }>(
      `SELECT id FROM merchant_users WHERE merchant_id = $1 AND role = 'OWNER' AND password_hash IS NOT NULL`, [merchantId],
    );
    if (r.rows.length !== 1) return null;
    return (await otherActiveOwners(this.db.pool, merchantId, r.rows[0]!.id)) === 0 ? r.rows[0]!.id : null;
  }

  /**
   * A new member with an invitation; returns the invitation token (shown once to the owner).
   * The caller's step gets the token too, to mail the link in the same transaction.
   */
  async invite(merchantId: string, input: { email: string; role: string }, inTx?: InTx<TeamMember & { token: string }>): Promise<{ member: TeamMember; token: string }> {
    const email = input.email.trim().toLowerCase();
    const errors: Record<string, string[]> = {};
    if (!EMAIL.test(email) || email.length > 255) errors.email = ['The email must be a valid email address.'];
    if (!['owner', 'developer', 'accountant', 'support'].includes(input.role)) errors.role = ['The selected role is invalid.'];
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const taken = () => new ValidationError({ email: ['The email has already been taken.'] });
    const token = randomBytes(32).toString('base64url');
    try {
      return await withPgTx(this.db.pool, async (c) => {
        // A merchant's own login email signs in as that merchant: it cannot also be a member.
        const m = await c.query('SELECT 1 FROM merchants WHERE email = $1', [email]);
        if ((m.rowCount ?? 0) > 0) throw taken();
        const r = await c.query<Row>(
          `INSERT INTO merchant_users (id, merchant_id, email, role, invite_token_hash, invite_expires_at)
           VALUES ($1, $2, $3, $4::"MerchantUserRole", $5, now() + make_interval(days => $6))
           ON CONFLICT (email) DO NOTHING RETURNING ${COLS}`,
          [newId(), merchantId, email, input.role.toUpperCase(), sha256Hex(token), INVITE_DAYS],
        );
        if (!r.rows[0]) throw taken();
        const member = view(r.rows[0]);
        if (inTx) await inTx(c, { ...member, token });
        return { member, token };
      });
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw taken();
      throw e;
    }
  }

  /**
   * Whether an address can still become a cabinet sign-in: no merchant's own login and no team
   * member has it (the onboarding form checks this before it creates anything; invite() checks again).
   */
  async emailFree(email: string): Promise<boolean> {
    const r = await this.db.pool.query(
      'SELECT 1 FROM merchants WHERE email = $1 UNION ALL SELECT 1 FROM merchant_users WHERE email = $1 LIMIT 1', [email.trim().toLowerCase()],
    );
    return (r.rowCount ?? 0) === 0;
  }

  /** The invitation's email while its link works, else null. */
  async invitation(token: string): Promise<{ email: string } | null> {
    if (!token || token.length > 100) return null;
    const r = await this.db.pool.query<{ email: string }>(
      'SELECT email FROM merchant_users WHERE invite_token_hash = $1 AND invite_expires_at > now()', [sha256Hex(token)],
    );
    return r.rows[0] ?? null;
  }

  /** Sets the invitee's password and spends the link; null when the link is unknown, used or expired. */
  async accept(token: string, password: string, inTx?: InTx<TeamMember & { merchant_id: string }>): Promise<TeamMember | null> {
    if (password.length < MIN_PASSWORD || password.length > 200) {
      throw new ValidationError({ password: [`The password must be at least ${MIN_PASSWORD} characters.`] });
    }
    if (!token || token.length > 100) return null;
    const hash = await bcrypt.hash(password, 10);
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query<Row & { merchant_id: string }>(
        `UPDATE merchant_users SET password_hash = $2, invite_token_hash = NULL, invite_expires_at = NULL, updated_at = now()
          WHERE invite_token_hash = $1 AND invite_expires_at > now() RETURNING ${COLS}, merchant_id`,
        [sha256Hex(token), hash],
      );
      const row = r.rows[0];
      if (!row) return null;
      const member = view(row);
      if (inTx) await inTx(c, { ...member, merchant_id: row.merchant_id });
      return member;
    });
  }

  async setRole(merchantId: string, id: string, role: string, inTx?: InTx<{ before: TeamMember; after: TeamMember }>): Promise<TeamMember> {
    if (!['owner', 'developer', 'accountant', 'support'].includes(role)) throw new ValidationError({ role: ['The selected role is invalid.'] });
    return withPgTx(this.db.pool, async (c) => {
      const cur = await c.query<Row>(`SELECT ${COLS} FROM merchant_users WHERE id = $1 AND merchant_id = $2 FOR UPDATE`, [id, merchantId]);
      if (!cur.rows[0]) throw new NotFoundError('Team member not found.');
      if (role !== 'owner') await keepAnOwner(c, merchantId, cur.rows[0]);
      const r = await c.query<Row>(
        `UPDATE merchant_users SET role = $2::"MerchantUserRole", updated_at = now() WHERE id = $1 RETURNING ${COLS}`, [id, role.toUpperCase()],
      );
      const out = { before: view(cur.rows[0]), after: view(r.rows[0]!) };
      if (inTx) await inTx(c, out);
      return out.after;
    });
  }

  /**
   * Removes a member (never the last active owner: LastOwnerError); their sessions end with the row (ON DELETE CASCADE), and the restricted
   * API keys they created are revoked in the same transaction (issue 27): a key outliving its
   * author's access would keep what the author can no longer do.
   */
  async remove(merchantId: string, id: string, inTx?: InTx<TeamMember & { revokedKeys: ApiKeyView[] }>): Promise<void> {
    await withPgTx(this.db.pool, async (c) => {
      const cur = await c.query<Row>(`SELECT ${COLS} FROM merchant_users WHERE id = $1 AND merchant_id = $2 FOR UPDATE`, [id, merchantId]);
      if (!cur.rows[0]) throw new NotFoundError('Team member not found.');
      await keepAnOwner(c, merchantId, cur.rows[0]);
      const r = await c.query<Row>(`DELETE FROM merchant_users WHERE id = $1 AND merchant_id = $2 RETURNING ${COLS}`, [id, merchantId]);
      const revokedKeys = await revokeKeysOfMember(c, merchantId, id);
      if (inTx) await inTx(c, { ...view(r.rows[0]!), revokedKeys });
    });
  }
}
