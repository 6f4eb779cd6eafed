import type { FastifyInstance } from 'fastify';
import { requestInput } from '../../../lib/input.js';
import { endpointUrl, pageSchema, parseSearchParams, searchInput, toPage } from '../../pagination.js';
import { BillSchema, billView } from '../../views/bill.js';

/** GET /api/v1/bill/search */
export function billSearchRoute(app: FastifyInstance): void {
  app.get('/search', {
    schema: {
      tags: ['bill'],
      summary: 'Bills created in a period, newest first, cursor-paginated',
      querystring: searchInput.schema,
      response: { 200: pageSchema(BillSchema) },
    },
  }, async (req) => {
    const params = parseSearchParams(requestInput(req), app.config.tz);
    const tz = app.config.tz;
    return toPage(await app.services.bills.search(req.merchant, params), params, endpointUrl(req, app.config.publicBaseUrl), (b) => billView(b, tz));
  });
}
