import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../db/client.js';

/**
 * Who made a change. `actor` is the stable key: `operator:<id>`, `admin-token`, `cli:<os user>`,
 * `merchant:<id>` (a merchant's own login), `merchant-user:<id>` (a team member), `anonymous`.
 * `name` is the person it was at the time (the email; `admin-token`; `cli:<os user>`), stored
 * with the entry: a removed member's row is gone, an email may change.
 */
export interface Actor { actor: string; name?: string | null; ip: string | null }

export interface AuditChange {
  action: string;
  objectType: string;
  objectId: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

// Secrets never enter the trail, whoever builds the before/after: keys naming a password,
// token, secret, hash, ciphertext, recovery code or a card number are dropped. The names that
// only describe a secret (when a token was issued, whether a password is set, which provider
// holds a card's token) are kept: dropping them would hide what changed without hiding a secret.
const SECRET_KEY = /(password|token|secret|hash|_enc$|Enc$|recovery|card_?number|^identifier$|^pan$)/i;
const KEEP = new Set(['api_token_issued_at', 'has_password', 'token_id', 'tokens', 'tokens_revoked', 'token_provider']);

/** A copy of `v` with every secret-named key removed, at any depth. */
export function redact(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(redact);
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? v.toString() : v;
  if (v instanceof Date) return v.toISOString();
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (SECRET_KEY.test(k) && !KEEP.has(k)) continue;
    out[k] = redact(x);
  }
  return out;
}

/**
 * The fields of `after` that differ from `before`, each side with only those fields: the
 * trail says what changed, not the whole object twice.
 */
export function changed(before: Record<string, unknown>, after: Record<string, unknown>): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) { b[k] = before[k] ?? null; a[k] = after[k] ?? null; }
  }
  return { before: b, after: a };
}

/** Appends one entry; called inside the transaction of the change it records. */
export async function writeAudit(c: Queryable, who: Actor, e: AuditChange): Promise<void> {
  await c.query(
    `INSERT INTO audit_log (actor, action, object_type, object_id, before, after, ip, actor_name)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8)`,
    [
      who.actor, e.action, e.objectType, e.objectId,
      e.before == null ? null : JSON.stringify(redact(e.before)),
      e.after == null ? null : JSON.stringify(redact(e.after)),
      who.ip, who.name ?? null,
    ],
  );
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the operator auth hook (operator API) or the cabinet session (cabinet). */
    auditActor?: string;
    /** The person behind `auditActor` (see Actor.name), set by the same hook. */
    auditActorName?: string;
  }
}

/**
 * A merchant API request's actor: what an auth layer named (a restricted key, say), else the
 * merchant's API token, `merchant-api:<merchant id>` (the trail shows it as "api-token of
 * <merchant email>"); no person is known behind a token.
 */
export function apiActor(req: FastifyRequest & { merchant: { id: string } }): Actor {
  return { actor: req.auditActor ?? `merchant-api:${req.merchant.id}`, name: req.auditActorName ?? null, ip: req.ip ?? null };
}

/** The request's actor and address; throws if no auth hook named the actor (a bug). */
export function actorOf(req: FastifyRequest): Actor {
  if (!req.auditActor) throw new Error('audit: the request has no authenticated actor');
  return { actor: req.auditActor, name: req.auditActorName ?? null, ip: req.ip ?? null };
}
