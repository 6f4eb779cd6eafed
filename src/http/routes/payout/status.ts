import type { FastifyInstance } from 'fastify';
import { parseStatus, statusInput } from '../../../domain/payout/payout.input.js';
import { requestInput } from '../../../lib/input.js';
import { PayoutStatusSchema } from './schemas.js';

/** GET /api/v1/payout/status: by id, or by order_id (a split request answers its first payout). */
export function statusRoute(app: FastifyInstance): void {
  app.get('/status', {
    schema: { tags: ['payout'], summary: 'One payout by id or order_id', querystring: statusInput.schema, response: { 200: PayoutStatusSchema } },
    config: { subscription: true },
  }, async (req) => {
    const payout = await app.services.payouts.status(req.merchant.id, parseStatus(requestInput(req)));
    return { ...payout, success: true };
  });
}
