import type { Db } from '../db/client.js';
import { writeAudit, type Actor, type AuditChange } from './audit.js';

/**
 * Audit entries that stand alone: a refused or failed attempt, where nothing else changes (a
 * change is audited by its own service, in its own transaction, through `writeAudit(tx, ...)`).
 */
export class AuditService {
  constructor(private readonly db: Db) {}

  record(who: Actor, e: AuditChange): Promise<void> {
    return writeAudit(this.db.pool, who, e);
  }
}
