import { createHmac, randomBytes } from 'node:crypto';
import type { Db } from '../db/client.js';
import { decrypt, encrypt, safeEqual } from '../lib/crypto.js';
import type { CabinetSession } from './session.js';

/**
 * Single-use cabinet form tokens, so a reload or a second click never submits a form twice. Every rendered page carries a fresh token
 * `<nonce>.<HMAC(session CSRF secret, nonce)>` in its forms: it proves the form came from this
 * session (the CSRF check) without a row per page view. The first POST that carries it records
 * the nonce; any later POST with the same token (a reload of a POST answer, Back and resubmit,
 * a double click) is refused before the route runs, so nothing is done twice. A POST whose
 * answer is an error (4xx, 5xx: a form shown again with its messages) gives its nonce back,
 * so the same submission may be corrected and sent again.
 */
export class FormTokens {
  constructor(private readonly db: Db) {}

  issue(s: CabinetSession): string {
    const nonce = randomBytes(18).toString('base64url');
    return `${nonce}.${sign(s.csrfToken, nonce)}`;
  }

  /** 'ok' (now used), 'replay' (used before) or 'invalid' (not this session's). */
  async consume(s: CabinetSession, token: string): Promise<{ result: 'ok' | 'replay' | 'invalid'; nonce?: string }> {
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 200) return { result: 'invalid' };
    const nonce = token.slice(0, dot);
    if (!safeEqual(token.slice(dot + 1), sign(s.csrfToken, nonce))) return { result: 'invalid' };
    const r = await this.db.pool.query(
      'INSERT INTO cabinet_form_uses (nonce, session_id) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING', [nonce, s.id],
    );
    return { result: r.rowCount === 1 ? 'ok' : 'replay', nonce };
  }

  /** The submission failed: its token may be sent again. */
  async release(nonce: string): Promise<void> {
    await this.db.pool.query('DELETE FROM cabinet_form_uses WHERE nonce = $1', [nonce]);
  }
}

const sign = (secret: string, nonce: string) => createHmac('sha256', secret).update(`form:${nonce}`).digest('base64url');

/** How long a flash waits for the GET it was made for. */
const FLASH_SECONDS = 300;

/**
 * One-time flashes: a POST stores what the next page must show once (a new API token, a test
 * postback's answer) and redirects; the GET reads and deletes it in one statement, so a reload
 * shows the page without it and issues nothing. Encrypted at rest (a token is a secret).
 */
export class Flashes {
  constructor(private readonly db: Db, private readonly key: Buffer) {}

  async put(sessionId: string, kind: string, payload: unknown): Promise<string> {
    const id = randomBytes(16).toString('base64url');
    await this.db.pool.query(
      `INSERT INTO cabinet_flashes (id, session_id, kind, payload_enc, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
      [id, sessionId, kind, encrypt(this.key, JSON.stringify(payload)), FLASH_SECONDS],
    );
    await this.db.pool.query('DELETE FROM cabinet_flashes WHERE session_id = $1 AND expires_at <= now()', [sessionId]);
    return id;
  }

  /** The flash once (null after, for another session or kind, or when expired). */
  async take<T>(sessionId: string, kind: string, id: string | undefined): Promise<T | null> {
    if (!id || id.length > 64) return null;
    const r = await this.db.pool.query<{ payload_enc: string }>(
      `DELETE FROM cabinet_flashes WHERE id = $1 AND session_id = $2 AND kind = $3 AND expires_at > now() RETURNING payload_enc`,
      [id, sessionId, kind],
    );
    const row = r.rows[0];
    return row ? (JSON.parse(decrypt(this.key, row.payload_enc)) as T) : null;
  }
}
