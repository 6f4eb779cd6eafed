import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { actorOf } from '../../audit/audit.js';
import { operatorActions } from '../../backoffice/actions.js';
import { testPostback } from '../../domain/audit-steps.js';
import { AttemptSchema, EventSchema, ok } from './schemas.js';

const IdParams = Type.Object({ id: Type.String() });

const ListInput = defineInput({
  status: v.enumOf(['pending', 'delivered', 'dead'] as const),
  merchant_id: v.string({ max: 64 }),
  kind: v.enumOf(['PAYMENT_POSTBACK', 'PAYOUT_WEBHOOK', 'TEST_POSTBACK', 'REFUND_POSTBACK', 'CHARGEBACK_POSTBACK'] as const),
  before_id: v.string({ max: 20, pattern: /^\d{1,18}$/ }),
  limit: v.integer({ min: 1, max: 1000 }),
});

const tags = ['admin'];
const One = (description: string) => ok(EventSchema.properties, description);

/**
 * Operator API: outbound events (payment postbacks, payout webhooks, test postbacks), with
 * every delivery attempt; redelivery of one event or of a merchant's dead events; a test
 * postback to a shop's Result URL.
 */
export default async function eventAdminRoutes(app: FastifyInstance): Promise<void> {
  const { outbox } = app.services;
  const actions = operatorActions(app);

  app.get('/events', {
    schema: { tags, summary: 'Events by status and merchant, newest first (by id), each with its attempts; pages by before_id (next_before_id, links.next)', querystring: ListInput.schema,
      response: {
        200: ok({
          data: Type.Array(EventSchema),
          next_before_id: Type.Union([Type.String(), Type.Null()], { description: 'before_id of the next page; null on the last', examples: ['1037'] }),
          links: Type.Object({ next: Type.Union([Type.String(), Type.Null()], { description: 'This query on the next page; null on the last', examples: ['https://pay.example/admin/v1/events?limit=5&before_id=1037'] }) }),
        }, 'Events, newest first'),
      },
    },
  }, async (req) => {
    const q = ListInput.parse(requestInput(req));
    const { data, nextBeforeId } = await outbox.page({ status: q.status, merchantId: q.merchant_id, kind: q.kind, beforeId: q.before_id, limit: q.limit });
    // The next page is this query with before_id moved on; null on the last page.
    const next = nextBeforeId === null ? null : (() => {
      const qs = new URLSearchParams();
      for (const k of ['status', 'merchant_id', 'kind', 'limit'] as const) if (q[k] !== undefined) qs.set(k, String(q[k]));
      qs.set('before_id', nextBeforeId);
      return `${app.config.publicBaseUrl}/admin/v1/events?${qs}`;
    })();
    return { success: true, data, next_before_id: nextBeforeId, links: { next } };
  });

  app.get<{ Params: { id: string } }>('/events/:id', {
    schema: { tags, summary: 'One event with its attempts', params: IdParams, response: { 200: One('The event') } },
  }, async (req) => ({ success: true, ...(await outbox.get(req.params.id)) }));

  app.post<{ Params: { id: string } }>('/events/:id/redeliver', {
    config: { permission: 'events.redeliver' },
    schema: { tags, summary: 'Send an event again (dead or delivered back to pending, due now)', params: IdParams, response: { 200: One('The event, pending again') } },
  }, async (req) => {
    return { success: true, ...(await actions.redeliverEvent(actorOf(req), req.params.id)) };
  });

  app.post<{ Params: { id: string } }>('/merchants/:id/events/redeliver-dead', {
    config: { permission: 'events.redeliver' },
    schema: { tags, summary: "Send every dead event of a merchant again", params: IdParams,
      response: { 200: ok({ redelivered: Type.Integer({ description: 'How many went back to pending', examples: [3] }) }, 'How many') } },
  }, async (req) => {
    return { success: true, ...(await actions.redeliverDead(actorOf(req), req.params.id)) };
  });

  app.post<{ Params: { id: string } }>('/shops/:id/test-postback', {
    config: { permission: 'shops.test-postback' },
    schema: { tags, summary: "Post a signed test postback to the shop's Result URL now, and answer what happened", params: IdParams,
      response: {
        200: ok({
          delivered: Type.Boolean({ description: 'The shop answered OK' }), event: EventSchema,
          attempt: Type.Union([AttemptSchema, Type.Null()], { description: 'The one attempt made' }),
        }, 'What happened'),
      },
    },
  }, async (req) => ({ success: true, ...(await testPostback(app.services, actorOf(req), null, req.params.id)) }));
}
