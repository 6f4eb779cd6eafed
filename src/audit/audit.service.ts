import type { Db } from '../db/client.js';
import { writeAudit, type Actor, type AuditChange } from './audit.js';

/**
 * An entry of the trail as the operator API and the console read it (`at` as ISO 8601):
 * `actor` is the person (an email, `admin-token`, `cli:<os user>`), `actor_id` the stable key
 * (`operator:<id>`, `merchant-user:<id>`, ...). Entries written before the trail stored names carry none:
 * their person is looked up from the key (the raw key when that account is gone).
 */
export interface AuditEntry {
  id: string; at: string; actor: string; actor_id: string; action: string; object_type: string; object_id: string;
  /** The person or merchant an entry's object is (an email), when the object is one: the console shows it, not the id. */
  object_name: string | null; before: unknown; after: unknown; ip: string | null;
}

/** The person of an entry: its stored name, else the email its key names today, else the key. */
const PERSON = `COALESCE(actor_name, CASE split_part(actor, ':', 1)
    WHEN 'operator' THEN (SELECT o.email FROM operators o WHERE o.id = split_part(actor, ':', 2))
    WHEN 'merchant' THEN (SELECT m.email FROM merchants m WHERE m.id = split_part(actor, ':', 2))
    WHEN 'merchant-user' THEN (SELECT u.email FROM merchant_users u WHERE u.id = split_part(actor, ':', 2))
    WHEN 'merchant-api' THEN (SELECT 'api-token of ' || m.email FROM merchants m WHERE m.id = split_part(actor, ':', 2))
    WHEN 'api-key' THEN (SELECT 'api-key "' || k.name || '" of ' || m.email FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
                          WHERE k.id = split_part(actor, ':', 2))
  END, actor)`;

/** The email of an entry's object when it is an account (a member, an operator, a merchant). */
const OBJECT_PERSON = `CASE object_type
    WHEN 'merchant_user' THEN (SELECT u.email FROM merchant_users u WHERE u.id = object_id)
    WHEN 'operator' THEN (SELECT o.email FROM operators o WHERE o.id = object_id)
    WHEN 'merchant' THEN (SELECT m.email FROM merchants m WHERE m.id = object_id)
  END`;

/** Keys whose account has this email today (old entries, written without a name, found by email). */
const KEYS_OF_EMAIL = `SELECT 'operator:' || id FROM operators WHERE email = lower(?)
  UNION ALL SELECT 'merchant:' || id FROM merchants WHERE email = lower(?)
  UNION ALL SELECT 'merchant-user:' || id FROM merchant_users WHERE email = lower(?)`;

/** The trail's filters, each optional; `from`/`to` inclusive; `beforeId`: entries older than this id. */
export interface AuditQuery {
  actor?: string; objectId?: string; action?: string; from?: Date; to?: Date; beforeId?: string; limit: number;
}

/**
 * Audit entries that stand alone: a refused or failed attempt, where nothing else changes (a
 * change is audited by its own service, in its own transaction, through `writeAudit(tx, ...)`);
 * and the trail's reads.
 */
export class AuditService {
  constructor(private readonly db: Db) {}

  record(who: Actor, e: AuditChange): Promise<void> {
    return writeAudit(this.db.pool, who, e);
  }

  /** The trail under the filters, newest first, at most `limit` entries (keyset pages by id). */
  async list(q: AuditQuery): Promise<AuditEntry[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (sql: string, val: unknown) => { args.push(val); where.push(sql.replace('?', `$${args.length}`)); };
    // The key (operator:<id>, admin-token), or the person: the stored name, or an email whose
    // accounts' keys name older entries.
    if (q.actor !== undefined) {
      args.push(q.actor);
      const n = `$${args.length}`;
      where.push(`(actor = ${n} OR actor_name = ${n} OR actor IN (${KEYS_OF_EMAIL.replaceAll('?', n)}))`);
    }
    if (q.objectId !== undefined) add('object_id = ?', q.objectId);
    if (q.action !== undefined) add('action = ?', q.action);
    if (q.from !== undefined) add('at >= ?', q.from);
    if (q.to !== undefined) add('at <= ?', q.to);
    if (q.beforeId !== undefined) add('id < ?', q.beforeId);
    args.push(Math.max(1, Math.trunc(q.limit)));
    const r = await this.db.pool.query<Omit<AuditEntry, 'at'> & { at: Date }>(
      `SELECT id, at, ${PERSON} AS actor, actor AS actor_id, action, object_type, object_id, ${OBJECT_PERSON} AS object_name, before, after, ip FROM audit_log
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${args.length}`,
      args,
    );
    return r.rows.map((e) => ({ ...e, at: e.at.toISOString() }));
  }
}
