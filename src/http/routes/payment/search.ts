import type { FastifyInstance } from 'fastify';
import { requestInput } from '../../../lib/input.js';
import { endpointUrl, pageSchema, parseSearchParams, searchInput, toPage } from '../../pagination.js';
import { PaymentSchema, paymentView } from '../../views/payment.js';

/** GET /api/v1/payment/search */
export function paymentSearchRoute(app: FastifyInstance): void {
  app.get('/search', {
    schema: {
      tags: ['payment'],
      summary: 'Payments created in a period, newest first, cursor-paginated',
      querystring: searchInput.schema,
      response: { 200: pageSchema(PaymentSchema) },
    },
  }, async (req) => {
    const params = parseSearchParams(requestInput(req), app.config.tz);
    const tz = app.config.tz;
    const page = await app.services.paymentReads.search(req.merchant.id, params);
    return toPage(page, params, endpointUrl(req, app.config.publicBaseUrl), (p) => paymentView(p, tz));
  });
}
