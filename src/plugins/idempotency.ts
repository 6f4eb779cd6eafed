import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { InTx } from '../db/client.js';
import { sha256Hex } from '../lib/crypto.js';
import { ConflictError, ValidationError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request owns an Idempotency-Key row and must store its answer. */
    idempotencyKey: string | null;
    /** True once the answer was stored inside the business transaction (recordAnswer). */
    idempotencyRecorded: boolean;
  }
}

/**
 * The step a keyed route hands its service: inside the service's transaction it stores the
 * answer (serialised by the route's response schema, as it will be sent) on the key's row, so
 * the change and its answer commit together. A process that dies after that commit leaves a
 * key a retry replays, never a change a retry makes again. Undefined without a key.
 */
export function recordAnswer<T>(req: FastifyRequest, reply: FastifyReply, view: (result: T) => unknown): InTx<T> | undefined {
  const key = req.idempotencyKey;
  if (!key) return undefined;
  return async (c, result) => {
    const body = reply.serialize(view(result));
    const r = await c.query(
      `UPDATE idempotency_keys SET response_status = 200, response_body = $3
        WHERE merchant_id = $1 AND key = $2 AND response_status IS NULL`,
      [req.merchant.id, key, body],
    );
    // The key was taken over meanwhile (this request was presumed dead): its change must not
    // commit a second time. The request that took it over holds a fresh lease.
    if (r.rowCount !== 1) {
      reply.header('retry-after', String(ABANDONED_AFTER_MS / 1000));
      throw new ConflictError('A request with this Idempotency-Key is in progress.');
    }
    req.idempotencyRecorded = true;
  };
}

/** A key whose first request died before answering is taken over after this long. */
const ABANDONED_AFTER_MS = 60_000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

function requestHash(req: FastifyRequest): string {
  const body = req.body && typeof req.body === 'object' ? req.body : {};
  const sorted = JSON.stringify(body, Object.keys(body as object).sort());
  return sha256Hex(`${req.method} ${req.url.split('?')[0]}\n${JSON.stringify(req.query ?? {})}\n${sorted}`);
}

/**
 * `Idempotency-Key` on POSTs of the merchant API, with Stripe's semantics: the first answer for
 * a (merchant, key) is kept `config.idempotencyTtlHours`; the same key and body replays it
 * (header `Idempotent-Replayed: true`); the same key with another body is a 422; a duplicate
 * arriving while the first is still running is a 409 whose `Retry-After` is the seconds left of
 * the first one's lease (after it a retry takes the key over). 5xx answers are not kept, so a retry
 * runs again (the failed request changed nothing: its transaction rolled back).
 * Endpoints that change money (bill/create, payouts, refunds) store their answer inside their
 * own transaction (recordAnswer); other answers (refusals, which changed nothing) are stored here
 * after the fact.
 */
export const idempotency = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('idempotencyKey', null);
    app.decorateRequest('idempotencyRecorded', false);
    const ttlMs = app.config.idempotencyTtlHours * 3600_000;

    app.addHook('preHandler', async (req, reply) => {
      if (req.method !== 'POST') return;
      const key = req.headers['idempotency-key'];
      if (key === undefined) return;
      if (typeof key !== 'string' || !KEY_RE.test(key)) {
        throw new ValidationError({ 'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'] });
      }
      const merchantId = req.merchant.id;
      const hash = requestHash(req);
      // Claim the key, or take over an expired or abandoned one, in one statement.
      const claimed = await app.db.pool.query(
        `INSERT INTO idempotency_keys (merchant_id, key, request_hash, expires_at)
         VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
         ON CONFLICT (merchant_id, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL,
               created_at = now(), expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at < now()
            OR (idempotency_keys.response_status IS NULL AND idempotency_keys.created_at < now() - $5 * interval '1 millisecond'
                AND idempotency_keys.request_hash = EXCLUDED.request_hash)
         RETURNING 1`,
        [merchantId, key, hash, ttlMs, ABANDONED_AFTER_MS],
      );
      if (claimed.rowCount === 1) {
        req.idempotencyKey = key;
        return;
      }
      // `retry_in`: whole seconds until the in-progress lease runs out and a retry takes the key
      // over (a request cut off by a crash holds its key for the rest of the lease).
      const r = await app.db.pool.query<{ request_hash: string; response_status: number | null; response_body: string | null; retry_in: number }>(
        `SELECT request_hash, response_status, response_body,
                GREATEST(1, ceil(extract(epoch FROM created_at + $3 * interval '1 millisecond' - now())))::int AS retry_in
           FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`,
        [merchantId, key, ABANDONED_AFTER_MS],
      );
      const row = r.rows[0];
      if (!row) {
        // Claimed and gone between the two statements (a 5xx answer deletes its key): retry now.
        reply.header('retry-after', '1');
        throw new ConflictError('A request with this Idempotency-Key is in progress.');
      }
      if (row.request_hash !== hash) {
        throw new ValidationError({ 'Idempotency-Key': ['This Idempotency-Key was used with different request parameters.'] });
      }
      if (row.response_status === null) {
        reply.header('retry-after', String(row.retry_in));
        throw new ConflictError('A request with this Idempotency-Key is in progress.');
      }
      return reply
        .status(row.response_status)
        .header('content-type', 'application/json; charset=utf-8')
        .header('idempotent-replayed', 'true')
        .send(row.response_body);
    });

    app.addHook('onSend', async (req, reply, payload) => {
      const key = req.idempotencyKey;
      if (!key) return payload;
      req.idempotencyKey = null;
      if (req.idempotencyRecorded) {
        // The change and its answer committed together; the answer is about to leave.
        app.observers.onCommitted?.(req);
        return payload;
      }
      if (reply.statusCode >= 500) {
        await app.db.pool.query('DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2', [req.merchant.id, key]);
      } else {
        await app.db.pool.query(
          'UPDATE idempotency_keys SET response_status = $3, response_body = $4 WHERE merchant_id = $1 AND key = $2',
          [req.merchant.id, key, reply.statusCode, typeof payload === 'string' ? payload : JSON.stringify(payload ?? null)],
        );
      }
      return payload;
    });
  },
  { name: 'idempotency' },
);
