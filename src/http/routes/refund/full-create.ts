import type { FastifyInstance } from 'fastify';
import { assertGrant, type RefundRecord } from '../../../domain/refund/refund.service.js';
import { recordAnswer } from '../../../plugins/idempotency.js';
import { apiActor } from '../../../audit/audit.js';
import { refundAudit, withAudit } from '../../../domain/audit-steps.js';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { RefundSchema, refundView } from './view.js';

const input = defineInput({ payment_id: v.string({ required: true, max: 64, description: 'Payment ID' }) });

/** POST /api/v1/refund/full/create: refunds what is left of a payment. */
export function refundFullCreateRoute(app: FastifyInstance): void {
  app.post('/full/create', {
    schema: { tags: ['refund'], summary: 'Refund a payment in full (what is left of it)', body: input.schema, response: { 200: RefundSchema } },
  }, async (req, reply) => {
    // Authorise before validating (a merchant without the grant learns nothing about its input).
    assertGrant(req.merchant);
    const p = input.parse(requestInput(req));
    const view = (r: RefundRecord) => refundView(r, app.config.tz);
    return view(await app.services.refunds.createFull(req.merchant, p.payment_id, withAudit(recordAnswer(req, reply, view), refundAudit(apiActor(req)))));
  });
}
