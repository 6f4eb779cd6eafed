import type { FastifyInstance } from 'fastify';
import { endpointUrl, pageSchema, parseSearchParams, searchInput, toPage } from '../../pagination.js';
import { requestInput } from '../../../lib/input.js';
import { PayoutSchema } from './schemas.js';

/** GET /api/v1/payout/search: payouts created in [start_date, finish_date], newest first, cursor pages. */
export function searchRoute(app: FastifyInstance): void {
  app.get('/search', {
    schema: { tags: ['payout'], summary: 'Payouts of a period', querystring: searchInput.schema, response: { 200: pageSchema(PayoutSchema) } },
  }, async (req) => {
    const params = parseSearchParams(requestInput(req), app.config.tz);
    return toPage(await app.services.payouts.search(req.merchant.id, params), params, endpointUrl(req, app.config.publicBaseUrl), (p) => p);
  });
}
