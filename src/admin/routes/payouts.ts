import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { actorOf } from '../../audit/audit.js';
import { operatorActions } from '../../backoffice/actions.js';
import { AdminPayoutSchema } from './schemas.js';

const idParam = defineInput({ id: v.string({ required: true, max: 64 }) });
const declineInput = defineInput({ reason: v.string({ max: 500, description: 'Why (kept as failure_reason)' }) });
const Payout = (description: string) => Type.Object(AdminPayoutSchema.properties, { description });
const IdParams = Type.Object({ id: Type.String() });
const listInput = defineInput({
  status: v.enumOf(['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'] as const),
  merchant_id: v.string({ max: 64 }),
  limit: v.integer({ min: 1, max: 1000 }),
});

/**
 * Operator API: payout moderation. approve: MODERATING -> PROCESS; decline: MODERATING ->
 * DECLINED with the money returned and the webhook enqueued. Unknown id 404; a payout that
 * is not MODERATING 409 (its status is said in the message).
 */
export default async function payoutsAdminRoutes(app: FastifyInstance): Promise<void> {
  const actions = operatorActions(app);
  app.get('/payouts', {
    schema: { tags: ['admin'], summary: 'List payouts (newest first)', querystring: listInput.schema, response: { 200: Type.Object({ data: Type.Array(AdminPayoutSchema) }, { description: 'Payouts, newest first' }) } },
  }, async (req) => {
    const p = listInput.parse(requestInput(req));
    return { data: await app.services.payouts.list({ status: p.status, merchantId: p.merchant_id, limit: p.limit }) };
  });

  app.post('/payouts/:id/approve', { config: { permission: 'payouts.moderate' }, schema: { tags: ['admin'], summary: 'Approve a MODERATING payout', params: IdParams, response: { 200: Payout('The payout, now PROCESS') } } }, async (req) => {
    const { id } = idParam.parse(req.params as Record<string, unknown>);
    return actions.approvePayout(actorOf(req), id!);
  });

  app.post('/payouts/:id/decline', { config: { permission: 'payouts.moderate' }, schema: { tags: ['admin'], summary: 'Decline a MODERATING payout', params: IdParams, body: declineInput.schema, response: { 200: Payout('The payout, now DECLINED (the money back on the balance)') } } }, async (req) => {
    const { id } = idParam.parse(req.params as Record<string, unknown>);
    const { reason } = declineInput.parse(requestInput(req));
    return actions.declinePayout(actorOf(req), id!, reason);
  });
}
