import bcrypt from 'bcrypt';
import { randomBytes } from 'node:crypto';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import { newApiToken, sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { Role } from './roles.js';

export type OperatorStatusName = 'active' | 'disabled';

/** An operator as the API shows it: never the password hash, TOTP secret or recovery codes. */
export interface OperatorView {
  id: string;
  email: string;
  role: Role;
  status: OperatorStatusName;
  has_password: boolean;
  totp_enabled: boolean;
  created_at: Date;
}

interface Row {
  id: string; email: string; role: string; status: string; password_hash: string | null;
  totp_enabled_at: Date | null; created_at: Date;
}

const view = (r: Row): OperatorView => ({
  id: r.id, email: r.email, role: r.role.toLowerCase() as Role, status: r.status.toLowerCase() as OperatorStatusName,
  has_password: r.password_hash !== null, totp_enabled: r.totp_enabled_at !== null, created_at: r.created_at,
});

const COLS = 'id, email, role::text AS role, status::text AS status, password_hash, totp_enabled_at, created_at';

/** A generated password: 18 random bytes, base64url (24 chars). */
export const newPassword = (): string => randomBytes(18).toString('base64url');

/**
 * Operator accounts and their personal API tokens. Each change runs in one transaction with
 * the caller's `inTx` step (the audit entry), so the entry commits with the change or not at all.
 */
export class OperatorService {
  constructor(private readonly db: Db) {}

  async create(input: { email: string; role: Role; password?: string | null }, inTx?: InTx<OperatorView>): Promise<OperatorView> {
    const email = input.email.trim().toLowerCase();
    const passwordHash = input.password ? await bcrypt.hash(input.password, 10) : null;
    const taken = () => new ValidationError({ email: ['The email has already been taken.'] });
    try {
      return await withPgTx(this.db.pool, async (c) => {
        const r = await c.query<Row>(
          `INSERT INTO operators (id, email, role, password_hash) VALUES ($1, $2, $3::"OperatorRole", $4)
           ON CONFLICT (email) DO NOTHING RETURNING ${COLS}`,
          [newId(), email, input.role.toUpperCase(), passwordHash],
        );
        if (!r.rows[0]) throw taken();
        const out = view(r.rows[0]);
        if (inTx) await inTx(c, out);
        return out;
      });
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw taken();
      throw e;
    }
  }

  async list(): Promise<OperatorView[]> {
    const r = await this.db.pool.query<Row>(`SELECT ${COLS} FROM operators ORDER BY created_at DESC, id DESC`);
    return r.rows.map(view);
  }

  async get(id: string): Promise<OperatorView> {
    const r = await this.db.pool.query<Row>(`SELECT ${COLS} FROM operators WHERE id = $1`, [id]);
    if (!r.rows[0]) throw new NotFoundError('Operator not found.');
    return view(r.rows[0]);
  }

  /**
   * Role and status. Disabling takes effect at the commit: the token lookup joins the
   * operator's status, so every token of a disabled operator fails from then on.
   */
  async update(id: string, patch: { role?: Role; status?: OperatorStatusName }, inTx?: InTx<{ before: OperatorView; after: OperatorView; tokensRevoked: number }>) {
    return withPgTx(this.db.pool, async (c) => {
      const cur = await c.query<Row>(`SELECT ${COLS} FROM operators WHERE id = $1 FOR UPDATE`, [id]);
      if (!cur.rows[0]) throw new NotFoundError('Operator not found.');
      const r = await c.query<Row>(
        `UPDATE operators SET role = COALESCE($2::"OperatorRole", role), status = COALESCE($3::"OperatorStatus", status), updated_at = now()
          WHERE id = $1 RETURNING ${COLS}`,
        [id, patch.role?.toUpperCase() ?? null, patch.status?.toUpperCase() ?? null],
      );
      // Disabling ends what the operator holds, for good: every personal token is
      // revoked and every console session ends, so re-enabling the account later brings none of
      // them back (a token leaked before the disable stays dead); the operator gets new ones.
      let tokensRevoked = 0;
      if (cur.rows[0].status !== 'DISABLED' && r.rows[0]!.status === 'DISABLED') {
        tokensRevoked = (await c.query('UPDATE operator_tokens SET revoked_at = now() WHERE operator_id = $1 AND revoked_at IS NULL', [id])).rowCount ?? 0;
        await c.query('DELETE FROM operator_sessions WHERE operator_id = $1', [id]);
      }
      const out = { before: view(cur.rows[0]), after: view(r.rows[0]!), tokensRevoked };
      if (inTx) await inTx(c, out);
      return out.after;
    });
  }

  /** A personal API token: only its SHA-256 is stored; the token is returned once. */
  async issueToken(operatorId: string, name: string, inTx?: InTx<{ id: string; name: string }>): Promise<{ id: string; apiToken: string }> {
    const apiToken = newApiToken();
    const id = newId();
    return withPgTx(this.db.pool, async (c) => {
      const op = await c.query('SELECT 1 FROM operators WHERE id = $1', [operatorId]);
      if (op.rowCount === 0) throw new NotFoundError('Operator not found.');
      await c.query('INSERT INTO operator_tokens (id, operator_id, name, token_hash) VALUES ($1, $2, $3, $4)', [id, operatorId, name, sha256Hex(apiToken)]);
      if (inTx) await inTx(c, { id, name });
      return { id, apiToken };
    });
  }

  async listTokens(operatorId: string) {
    await this.get(operatorId);
    const r = await this.db.pool.query<{ id: string; name: string; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }>(
      'SELECT id, name, created_at, last_used_at, revoked_at FROM operator_tokens WHERE operator_id = $1 ORDER BY created_at DESC, id DESC',
      [operatorId],
    );
    return r.rows;
  }

  async revokeToken(operatorId: string, tokenId: string, inTx?: InTx<{ id: string }>): Promise<void> {
    await withPgTx(this.db.pool, async (c) => {
      const r = await c.query(
        'UPDATE operator_tokens SET revoked_at = now() WHERE id = $1 AND operator_id = $2 AND revoked_at IS NULL RETURNING id',
        [tokenId, operatorId],
      );
      if (r.rowCount === 0) throw new NotFoundError('Token not found.');
      if (inTx) await inTx(c, { id: tokenId });
    });
  }
}
