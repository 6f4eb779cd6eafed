import type { FastifyInstance } from 'fastify';
import { assertGrant, type RefundRecord } from '../../../domain/refund/refund.service.js';
import { recordAnswer } from '../../../plugins/idempotency.js';
import { apiActor } from '../../../audit/audit.js';
import { refundAudit, withAudit } from '../../../domain/audit-steps.js';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { RefundSchema, refundView } from './view.js';

const input = defineInput({
  payment_id: v.string({ required: true, max: 64, description: 'Payment ID' }),
  amount: v.decimal({ required: true, description: 'Refund amount in the payment\'s account currency, at most what is left to refund' }),
});

/** POST /api/v1/refund/partial/create: refunds part of a payment. */
export function refundPartialCreateRoute(app: FastifyInstance): void {
  app.post('/partial/create', {
    schema: { tags: ['refund'], summary: 'Refund part of a payment', body: input.schema, response: { 200: RefundSchema } },
  }, async (req, reply) => {
    assertGrant(req.merchant);
    const p = input.parse(requestInput(req));
    const view = (r: RefundRecord) => refundView(r, app.config.tz);
    return view(await app.services.refunds.createPartial(req.merchant, p.payment_id, p.amount, withAudit(recordAnswer(req, reply, view), refundAudit(apiActor(req)))));
  });
}
