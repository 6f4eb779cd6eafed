import type { FastifyInstance } from 'fastify';
import { requestInput } from '../../lib/input.js';
import { AuditListInput as ListInput, auditCsv, queryAudit } from '../../backoffice/audit-query.js';

const tags = ['admin'];
const CSV_MAX = 100_000;

/** The audit trail (every role may read it): newest first, keyset pages by id. */
export default async function auditAdminRoutes(app: FastifyInstance): Promise<void> {
  const query = (raw: Record<string, unknown>, fallback: number, cap: number) => queryAudit(app, raw, fallback, cap);

  app.get('/audit', {
    config: { permission: 'read' },
    schema: { tags, summary: 'Audit trail, newest first; filters actor, object_id, action, start_date, finish_date; pages by before_id', querystring: ListInput.schema },
  }, async (req) => {
    const { rows, limit } = await query(requestInput(req), 100, 1000);
    return { success: true, data: rows, next_before_id: rows.length === limit ? rows.at(-1)!.id : null };
  });

  app.get('/audit.csv', {
    config: { permission: 'read' },
    schema: { tags, summary: `The same trail as CSV (filters as /audit; at most ${CSV_MAX} rows)`, querystring: ListInput.schema },
  }, async (req, reply) => {
    const { rows } = await query(requestInput(req), CSV_MAX, CSV_MAX);
    return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="audit.csv"').send(auditCsv(rows));
  });
}
