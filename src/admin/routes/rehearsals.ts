import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../../audit/audit.js';
import { rehearsalAudit } from '../../domain/audit-steps.js';
import { rehearsalView } from '../../domain/rehearsal/rehearsal.view.js';
import { bodyObject } from '../../lib/input-fields.js';
import { list, ok, RehearsalSchema, RehearsalSummarySchema } from './schemas.js';

const tags = ['admin'];
const NameParams = Type.Object({ name: Type.String({ examples: ['tb-test'] }) });
const IdParams = Type.Object({ name: Type.String({ examples: ['tb-test'] }), id: Type.String({ examples: ['k3Jd9QmW2x'] }) });
const StartBody = Type.Object({
  shop_id: Type.Optional(Type.String({ description: 'The shop whose fiscal settings the receipt step sends', examples: ['Z54JKcF8zaFTsTb7'] })),
  public_url: Type.Optional(Type.String({ description: 'Where the provider is told to send notifications (this deployment\'s public address); absent: the notification step is skipped', examples: ['https://pay.example'] })),
});
const Whole = ok(RehearsalSchema.properties, 'The rehearsal\'s report: each step passed, failed or skipped with why, and the provider\'s answers (secrets masked)');

/**
 * Go-live rehearsals of a connector (docs/adr/0104-connector-rehearsals.md): started here (202,
 * it runs in the background), listed newest first, read whole.
 */
export default async function rehearsalAdminRoutes(app: FastifyInstance): Promise<void> {
  const { rehearsals } = app.services;

  app.post<{ Params: { name: string } }>('/connectors/:name/rehearsals', {
    schema: {
      tags, summary: 'Rehearse a connector against its provider\'s test terminal or shop (202: running; read it at its id)',
      params: NameParams, body: StartBody, response: { 202: Whole },
    },
  }, async (req, reply) => {
    const r = await rehearsals.start(req.params.name, bodyObject(req), rehearsalAudit(actorOf(req)));
    return reply.status(202).send({ success: true, ...rehearsalView(r, true) });
  });

  app.get<{ Params: { name: string } }>('/connectors/:name/rehearsals', {
    schema: { tags, summary: 'A connector\'s rehearsals, newest first, with their counts', params: NameParams, response: { 200: list(RehearsalSummarySchema, 'Rehearsals, newest first') } },
  }, async (req) => ({ success: true, data: (await rehearsals.list(req.params.name)).map((r) => rehearsalView(r, false)) }));

  app.get<{ Params: { name: string; id: string } }>('/connectors/:name/rehearsals/:id', {
    schema: { tags, summary: 'A rehearsal\'s whole report (202 while it runs)', params: IdParams, response: { 200: Whole, 202: Whole } },
  }, async (req, reply) => {
    const r = await rehearsals.find(req.params.name, req.params.id);
    return reply.status(r.status === 'running' ? 202 : 200).send({ success: true, ...rehearsalView(r, true) });
  });
}
