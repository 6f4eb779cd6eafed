import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { requestInput } from '../../lib/input.js';
import { AuditListInput as ListInput, auditCsv, queryAudit } from '../../backoffice/audit-query.js';
import { AuditEntrySchema, ok } from './schemas.js';

const tags = ['admin'];
const CSV_MAX = 100_000;

/** The audit trail (every role may read it): newest first, keyset pages by id. */
export default async function auditAdminRoutes(app: FastifyInstance): Promise<void> {
  const query = (raw: Record<string, unknown>, fallback: number, cap: number) => queryAudit(app, raw, fallback, cap);

  app.get('/audit', {
    config: { permission: 'read' },
    schema: { tags, summary: 'Audit trail, newest first; filters actor, object_id, action, start_date, finish_date; pages by before_id', querystring: ListInput.schema,
      response: { 200: ok({ data: Type.Array(AuditEntrySchema), next_before_id: Type.Union([Type.String(), Type.Null()], { description: 'before_id of the next page; null on the last', examples: ['5071'] }) }, 'Entries, newest first') },
    },
  }, async (req) => {
    const { rows, limit } = await query(requestInput(req), 100, 1000);
    return { success: true, data: rows, next_before_id: rows.length === limit ? rows.at(-1)!.id : null };
  });

  app.get('/audit.csv', {
    config: { permission: 'read' },
    schema: { tags, summary: `The same trail as CSV (filters as /audit; at most ${CSV_MAX} rows)`, querystring: ListInput.schema,
      response: { 200: { description: 'id, at, actor, actor_id, action, object_type, object_id, before, after, ip', content: { 'text/csv': { schema: Type.String({ examples: ['id,at,actor,actor_id,action,object_type,object_id,before,after,ip\n5120,2026-11-23T15:42:11.000Z,support@pay.example,operator:Op3Kz8Lm2Qx,merchant.update,merchant,Zx8Wq2LmN4pR7tYv,"{""status"":""active""}","{""status"":""banned""}",203.0.113.10\n'] }) } } } },
    },
  }, async (req, reply) => {
    const { rows } = await query(requestInput(req), CSV_MAX, CSV_MAX);
    return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="audit.csv"').send(auditCsv(rows));
  });
}
