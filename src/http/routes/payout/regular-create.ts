import type { FastifyInstance } from 'fastify';
import { regularCreateInput } from '../../../domain/payout/payout.input.js';
import { requestInput } from '../../input.js';
import { CREATE_ERROR_STATUS, PayoutListSchema } from './schemas.js';

/** POST /api/v1/payout/regular/create: to a card or an SBP phone; needs the merchant's grant (403 first). */
export function regularCreateRoute(app: FastifyInstance): void {
  app.post('/regular/create', {
    schema: { tags: ['payout'], summary: 'Payout to a card or an SBP phone', body: regularCreateInput.schema, response: { 200: PayoutListSchema } },
    config: { subscription: true, errorStatus: CREATE_ERROR_STATUS },
  }, async (req) => {
    const data = await app.services.payouts.createRegular(req.merchant, requestInput(req));
    return { data, success: true };
  });
}
