import { randomBytes } from 'node:crypto';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { AUTH_MERCHANT_COLUMNS, type AuthMerchant } from '../merchant/merchant-guard.js';
import { API_SCOPES, KEY_TOKEN_PREFIX, isApiScope, type ApiScope } from './api-key.scopes.js';

/** A restricted key as its lists show it: never the token (only its last four characters). */
export interface ApiKeyView {
  id: string;
  merchant_id: string;
  name: string;
  scopes: ApiScope[];
  token_last4: string;
  /** The audit actor who created it (`merchant:<id>`, `merchant-user:<id>`, `operator:<id>`, `admin-token`). */
  created_by: string;
  /** The team member who created it, when it was one (removing them revokes the key). */
  created_by_user_id: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** Who creates a key: the actor, and the team member when it is one. */
export interface KeyCreator { actor: string; userId: string | null }

/** The merchant a key authenticates as, with the key's id and scopes. */
export interface KeyAuth { merchant: AuthMerchant; keyId: string; scopes: ApiScope[] }

const COLS = `id, merchant_id, name, scopes, token_last4, created_by, created_by_user_id, created_at, last_used_at, revoked_at`;
export const MAX_KEY_NAME = 100;
/** Live keys a merchant may hold at once (a list people read, not a token farm). */
export const MAX_LIVE_KEYS = 50;

/** The scopes of a request body: a non-empty array of known names, deduplicated, in the list's order; else 422 on `scopes`. */
export function parseScopes(raw: unknown): ApiScope[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new ValidationError({ scopes: ['The scopes field must be a non-empty array of scopes.'] });
  const unknown = raw.filter((s) => !isApiScope(s));
  if (unknown.length > 0) {
    throw new ValidationError({ scopes: [`Unknown scope ${unknown.map((s) => JSON.stringify(s)).join(', ')}; known: ${API_SCOPES.join(', ')}.`] });
  }
  return API_SCOPES.filter((s) => raw.includes(s));
}

function parseName(raw: unknown): string {
  const name = typeof raw === 'string' ? raw.trim() : '';
  if (name === '' || name.length > MAX_KEY_NAME) throw new ValidationError({ name: [`The name is required, at most ${MAX_KEY_NAME} characters.`] });
  return name;
}

/**
 * Restricted API keys, so a developer's integration need not hold the live token. A key is a bearer token of its own (`rk_live_` + 48
 * random bytes, base64url), kept as SHA-256 only and shown once; it acts as its live merchant
 * within its scopes. Every change runs the caller's step (the audit entry) in its transaction.
 */
export class ApiKeyService {
  constructor(private readonly db: Db) {}

  /** A new key of the live merchant `merchantId` (NotFoundError for a test twin or an unknown id). */
  async create(merchantId: string, input: { name: unknown; scopes: unknown }, by: KeyCreator, inTx?: InTx<ApiKeyView>): Promise<{ key: ApiKeyView; token: string }> {
    const name = parseName(input.name);
    const scopes = parseScopes(input.scopes);
    const token = `${KEY_TOKEN_PREFIX}${randomBytes(48).toString('base64url')}`;
    const key = await withPgTx(this.db.pool, async (c) => {
      // The merchant row locked: the count of live keys holds against a concurrent create.
      const m = await c.query('SELECT 1 FROM merchants WHERE id = $1 AND live_merchant_id IS NULL FOR UPDATE', [merchantId]);
      if ((m.rowCount ?? 0) === 0) throw new NotFoundError('Merchant not found.');
      const n = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL', [merchantId]);
      if (n.rows[0]!.n >= MAX_LIVE_KEYS) throw new ValidationError({ name: [`A merchant holds at most ${MAX_LIVE_KEYS} live keys; revoke one first.`] });
      const r = await c.query<ApiKeyView>(
        `INSERT INTO api_keys (id, merchant_id, name, scopes, token_hash, token_last4, created_by, created_by_user_id)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8) RETURNING ${COLS}`,
        [newId(), merchantId, name, JSON.stringify(scopes), sha256Hex(token), token.slice(-4), by.actor, by.userId],
      );
      const created = r.rows[0]!;
      if (inTx) await inTx(c, created);
      return created;
    });
    return { key, token };
  }

  /** The merchant's keys, live first, newest first. */
  async list(merchantId: string): Promise<ApiKeyView[]> {
    const r = await this.db.pool.query<ApiKeyView>(
      `SELECT ${COLS} FROM api_keys WHERE merchant_id = $1 ORDER BY revoked_at IS NOT NULL, created_at DESC, id DESC`, [merchantId],
    );
    return r.rows;
  }

  /** The merchant's key, or NotFoundError (another merchant's key is not found either). */
  async get(merchantId: string, id: string): Promise<ApiKeyView> {
    const r = await this.db.pool.query<ApiKeyView>(`SELECT ${COLS} FROM api_keys WHERE id = $1 AND merchant_id = $2`, [id, merchantId]);
    if (!r.rows[0]) throw new NotFoundError('API key not found.');
    return r.rows[0];
  }

  /**
   * Revokes the key: it fails (401) from the moment this commits. Revoking a revoked key
   * changes nothing and runs no step.
   */
  async revoke(merchantId: string, id: string, inTx?: InTx<ApiKeyView>): Promise<ApiKeyView> {
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query<ApiKeyView>(
        `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND merchant_id = $2 AND revoked_at IS NULL RETURNING ${COLS}`, [id, merchantId],
      );
      if (r.rows[0]) {
        if (inTx) await inTx(c, r.rows[0]);
        return r.rows[0];
      }
      const cur = await c.query<ApiKeyView>(`SELECT ${COLS} FROM api_keys WHERE id = $1 AND merchant_id = $2`, [id, merchantId]);
      if (!cur.rows[0]) throw new NotFoundError('API key not found.');
      return cur.rows[0];
    });
  }

  /**
   * Looks a key's token hash up: the live merchant it acts as (with the columns the auth hook
   * loads for the live token) and its scopes; null for an unknown or revoked key. One indexed
   * statement; it notes the key's use at most once a minute (a write only then).
   */
  async authenticate(tokenHash: string): Promise<KeyAuth | null> {
    const r = await this.db.pool.query<AuthMerchant & { keyId: string; scopes: ApiScope[] }>({
      name: 'api_key_auth',
      text: `WITH k AS (
               SELECT id AS key_id, merchant_id AS key_merchant_id, scopes, last_used_at AS key_used_at
                 FROM api_keys WHERE token_hash = $1 AND revoked_at IS NULL
             ), touch AS (
               UPDATE api_keys a SET last_used_at = now() FROM k
                WHERE a.id = k.key_id AND (k.key_used_at IS NULL OR k.key_used_at < now() - interval '1 minute')
             )
             SELECT ${AUTH_MERCHANT_COLUMNS}, k.key_id AS "keyId", k.scopes
               FROM k JOIN merchants ON merchants.id = k.key_merchant_id AND merchants.live_merchant_id IS NULL`,
      values: [tokenHash],
    });
    const row = r.rows[0];
    if (!row) return null;
    const { keyId, scopes, ...merchant } = row;
    return { merchant, keyId, scopes };
  }
}

/**
 * Revokes the live keys a team member created, inside the transaction that removes the member
 * (src/domain/merchant/team.service.ts): they fail from the same commit.
 */
export async function revokeKeysOfMember(c: Queryable, merchantId: string, userId: string): Promise<ApiKeyView[]> {
  const r = await c.query<ApiKeyView>(
    `UPDATE api_keys SET revoked_at = now() WHERE created_by_user_id = $1 AND merchant_id = $2 AND revoked_at IS NULL RETURNING ${COLS}`,
    [userId, merchantId],
  );
  return r.rows;
}
