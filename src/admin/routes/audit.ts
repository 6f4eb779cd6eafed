import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { stringify } from 'csv-stringify/sync';
import { defineInput, requestInput, v } from '../../http/input.js';
import { ValidationError } from '../../errors.js';
import { parseSearchDate } from '../../lib/time.js';
import { csvCell } from '../../lib/csv-cell.js';
import { AuditEntrySchema, ok } from './schemas.js';

const ListInput = defineInput({
  actor: v.string({ max: 320, description: 'A person (an email, admin-token, cli:<os user>) or a key (operator:<id>, merchant:<id>, merchant-user:<id>, merchant-api:<id>)' }),
  object_id: v.string({ max: 100 }),
  action: v.string({ max: 100 }),
  start_date: v.string({ max: 19, description: 'YYYY-MM-DD or YYYY-MM-DD HH:MM:SS (service time zone)' }),
  finish_date: v.string({ max: 19, description: 'YYYY-MM-DD or YYYY-MM-DD HH:MM:SS (service time zone)' }),
  before_id: v.string({ max: 20, pattern: /^\d{1,18}$/, description: 'Entries older than this id (the next page)' }),
  limit: v.integer({ min: 1, max: 1000 }),
});

const tags = ['admin'];
const CSV_MAX = 100_000;


/** The trail with the operator API's filters (422 on a bad one), newest first; shared with the console. */
export async function queryAudit(app: FastifyInstance, raw: Record<string, unknown>, fallback: number, cap: number) {
  const q = ListInput.parse(raw);
  const errors: Record<string, string[]> = {};
  const bounds: { start_date?: Date; finish_date?: Date } = {};
  for (const [k, edge] of [['start_date', 'start'], ['finish_date', 'end']] as const) {
    if (q[k] === undefined) continue;
    const d = parseSearchDate(q[k]!, app.config.tz, edge);
    if (!d) errors[k] = [`The ${k.replace('_', ' ')} does not match the format Y-m-d or Y-m-d H:i:s.`];
    else bounds[k] = d;
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  const limit = Math.min(q.limit ?? fallback, cap);
  const rows = await app.services.audit.list({
    actor: q.actor, objectId: q.object_id, action: q.action, from: bounds.start_date, to: bounds.finish_date, beforeId: q.before_id, limit,
  });
  return { rows, limit };
}

/** Entries as CSV (the operator API's and the console's export). */
export function auditCsv(rows: Awaited<ReturnType<typeof queryAudit>>['rows']): string {
  return stringify(rows.map((e) => [e.id, e.at, e.actor, e.actor_id, e.action, e.object_type, e.object_id,
    e.before == null ? '' : JSON.stringify(e.before), e.after == null ? '' : JSON.stringify(e.after), e.ip ?? ''].map(csvCell)), {
    header: true, columns: ['id', 'at', 'actor', 'actor_id', 'action', 'object_type', 'object_id', 'before', 'after', 'ip'],
  });
}

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
