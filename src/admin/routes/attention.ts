import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../../audit/audit.js';
import { operatorActions } from '../../backoffice/actions.js';
import type { AttentionItem } from '../../domain/attention/attention.service.js';
import { bodyObject } from '../../lib/input-fields.js';
import { AttentionSchema, list, ok } from './schemas.js';

const tags = ['admin'];
const IdParams = Type.Object({ id: Type.String() });
const ResolveBody = Type.Object({
  outcome: Type.String({ description: "'SUCCESS' or 'FAIL' (payments: SUCCESS = paid what was due); 'SETTLED' for a conflict item; SUCCESS or FAIL for a conflict that holds money no read confirmed (SUCCESS: it was made, debited; FAIL: given back). The provider is asked first: its final answer wins (resolved_by 'provider')" }),
  note: Type.Optional(Type.String({ maxLength: 2000 })),
});

export function attentionView(i: AttentionItem) {
  return {
    id: i.id, object_type: i.objectType, object_id: i.objectId, merchant_id: i.merchantId, connector: i.connector,
    provider_ref: i.providerRef, kind: i.kind, reason: i.reason, last_heard: i.lastHeard, created_at: i.createdAt.toISOString(),
    resolved_at: i.resolvedAt?.toISOString() ?? null, resolution: i.resolution, note: i.note, resolved_by: i.resolvedBy,
  };
}

/** Operator API: the attention list (PROVIDERS.md "Unknown outcomes are never guessed"). */
export default async function attentionAdminRoutes(app: FastifyInstance): Promise<void> {
  const { attention } = app.services;
  const actions = operatorActions(app);

  app.get('/attention', {
    schema: { tags, summary: 'Open attention items: operations reconciliation gave up on, with what was last heard', response: { 200: list(AttentionSchema, 'The open items') } },
  },
    async () => ({ success: true, data: (await attention.listOpen()).map(attentionView) }));

  // Resolving moves money (a payment credited or failed): admin and finance, the roles that
  // move money (src/backoffice/permissions.ts).
  app.post<{ Params: { id: string } }>('/attention/:id/resolve', {
    config: { permission: 'attention.resolve' },
    schema: { tags, summary: "Record the operator's decision through the object's state table and the ledger (audited)", params: IdParams, body: ResolveBody,
      response: { 200: ok({ ...AttentionSchema.properties, outcome: Type.Union([Type.String(), Type.Null()], { description: "What the object got: the provider's answer when it could say, else the operator's", examples: ['SUCCESS'] }) }, 'The item, resolved') } },
  }, async (req) => {
    const item = await actions.resolveAttention(actorOf(req), req.params.id, bodyObject(req));
    // `outcome` is what the object got: the provider's answer when it could say (resolved_by 'provider'), else the operator's.
    return { success: true, ...attentionView(item), outcome: item.resolution };
  });
}
