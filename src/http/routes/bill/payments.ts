import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { endpointUrl, pageParams, pageSchema, toPage } from '../../pagination.js';
import { PaymentSchema, paymentView } from '../../views/payment.js';

const input = defineInput({
  id: v.string({ required: true, max: 64, description: 'Bill ID' }),
  per_page: v.integer({ min: 1, description: 'Page size; default and most: BILL_PAYMENTS_MAX (1000); more is 400 api:error.too_many_payments' }),
  cursor: v.string({ max: 512, description: 'Opaque cursor from meta.next_cursor / meta.prev_cursor' }),
});

/** GET /api/v1/bill/payments */
export function billPaymentsRoute(app: FastifyInstance): void {
  app.get('/payments', {
    schema: {
      tags: ['bill'],
      summary: "A bill's payments, oldest first, cursor-paginated (data, links, meta)",
      querystring: input.schema,
      response: { 200: pageSchema(PaymentSchema) },
    },
    config: { errorStatus: { bill_not_found: 403 } },
  }, async (req) => {
    const p = input.parse(requestInput(req));
    const params = pageParams(p, app.config.billPaymentsMax, { id: p.id });
    const tz = app.config.tz;
    return toPage(await app.services.bills.payments(req.merchant, p.id, params), params, endpointUrl(req, app.config.publicBaseUrl), (r) => paymentView(r, tz));
  });
}
