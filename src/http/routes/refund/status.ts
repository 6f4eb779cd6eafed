import type { FastifyInstance } from 'fastify';
import { assertGrant } from '../../../domain/refund/refund.service.js';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { RefundSchema, refundView } from './view.js';

const input = defineInput({
  payment_id: v.string({ max: 64, description: 'Payment ID: answers its latest refund (required when id is absent)' }),
  id: v.string({ max: 64, description: 'Refund ID: answers that refund' }),
});

/** GET /api/v1/refund/status */
export function refundStatusRoute(app: FastifyInstance): void {
  app.get('/status', {
    schema: { tags: ['refund'], summary: 'A refund, by payment_id (its latest) or by id', querystring: input.schema, response: { 200: RefundSchema } },
  }, async (req) => {
    assertGrant(req.merchant);
    const p = input.parse(requestInput(req));
    const r = await app.services.refunds.status(req.merchant, { paymentId: p.payment_id, id: p.id });
    return refundView(r, app.config.tz);
  });
}
