import type { FastifyInstance } from 'fastify';
import { endpointUrl, pageSchema, searchInput } from '../../pagination.js';
import { requestInput } from '../../input.js';
import { PayoutSchema, READ_ERROR_STATUS } from './schemas.js';

/** GET /api/v1/payout/search: payouts created in [start_date, finish_date], newest first, cursor pages. */
export function searchRoute(app: FastifyInstance): void {
  app.get('/search', {
    schema: { tags: ['payout'], summary: 'Payouts of a period', querystring: searchInput.schema, response: { 200: pageSchema(PayoutSchema) } },
    config: { errorStatus: READ_ERROR_STATUS },
  }, async (req) => app.services.payouts.search(req.merchant.id, requestInput(req), endpointUrl(req, app.config.publicBaseUrl)));
}
