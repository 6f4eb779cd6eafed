import type { Db } from '../db/client.js';
import { writeAudit, type Actor, type AuditChange } from './audit.js';

/** An entry of the trail as the operator API and the console read it (`at` as ISO 8601). */
export interface AuditEntry { id: string; at: string; actor: string; action: string; object_type: string; object_id: string; before: unknown; after: unknown; ip: string | null }

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
    if (q.actor !== undefined) add('actor = ?', q.actor);
    if (q.objectId !== undefined) add('object_id = ?', q.objectId);
    if (q.action !== undefined) add('action = ?', q.action);
    if (q.from !== undefined) add('at >= ?', q.from);
    if (q.to !== undefined) add('at <= ?', q.to);
    if (q.beforeId !== undefined) add('id < ?', q.beforeId);
    args.push(Math.max(1, Math.trunc(q.limit)));
    const r = await this.db.pool.query<Omit<AuditEntry, 'at'> & { at: Date }>(
      `SELECT id, at, actor, action, object_type, object_id, before, after, ip FROM audit_log
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${args.length}`,
      args,
    );
    return r.rows.map((e) => ({ ...e, at: e.at.toISOString() }));
  }
}
