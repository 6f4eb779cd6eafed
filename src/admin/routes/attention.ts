import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { actorOf, writeAudit } from '../../audit/audit.js';
import type { AttentionItem } from '../../domain/attention/attention.service.js';
import { bodyObject } from '../input.js';

const tags = ['admin'];
const IdParams = Type.Object({ id: Type.String() });
const ResolveBody = Type.Object({
  outcome: Type.String({ description: "payments: 'SUCCESS' (paid what was due) or 'FAIL'; payouts and refunds: as their services accept" }),
  note: Type.Optional(Type.String({ maxLength: 2000 })),
});

export function attentionView(i: AttentionItem) {
  return {
    id: i.id, object_type: i.objectType, object_id: i.objectId, merchant_id: i.merchantId, connector: i.connector,
    provider_ref: i.providerRef, reason: i.reason, last_heard: i.lastHeard, created_at: i.createdAt.toISOString(),
    resolved_at: i.resolvedAt?.toISOString() ?? null, resolution: i.resolution, note: i.note, resolved_by: i.resolvedBy,
  };
}

/** Operator API: the attention list (PROVIDERS.md "Unknown outcomes are never guessed"). */
export default async function attentionAdminRoutes(app: FastifyInstance): Promise<void> {
  const { attention } = app.services;

  app.get('/attention', { schema: { tags, summary: 'Open attention items: operations reconciliation gave up on, with what was last heard' } },
    async () => ({ success: true, data: (await attention.listOpen()).map(attentionView) }));

  // Resolving moves money (a payment credited or failed): admins only (the default permission).
  app.post<{ Params: { id: string } }>('/attention/:id/resolve', {
    schema: { tags, summary: "Record the operator's decision through the object's state table and the ledger (audited)", params: IdParams, body: ResolveBody },
  }, async (req) => {
    const who = actorOf(req);
    const item = await attention.resolve(req.params.id, bodyObject(req), who.actor, (c, before, after) => writeAudit(c, who, {
      action: 'attention.resolve', objectType: 'attention_item', objectId: after.id,
      before: { resolved_at: null, object_type: before.objectType, object_id: before.objectId },
      after: { resolution: after.resolution, note: after.note, resolved_at: after.resolvedAt },
    }));
    return { success: true, ...attentionView(item) };
  });
}
