import type { FastifyInstance } from 'fastify';
import { requestInput } from '../../input.js';
import { endpointUrl, keysetSearch, pageSchema, parseSearchParams, searchInput } from '../../pagination.js';
import { PAYMENT_COLUMNS, PaymentSchema, paymentView, type PaymentRow } from '../../views/payment.js';

/** GET /api/v1/payment/search */
export function paymentSearchRoute(app: FastifyInstance): void {
  app.get('/search', {
    schema: {
      tags: ['payment'],
      summary: 'Payments created in a period, newest first, cursor-paginated',
      querystring: searchInput.schema,
      response: { 200: pageSchema(PaymentSchema) },
    },
    config: { errorStatus: { merchant_banned: 403 } },
  }, async (req) => {
    const params = parseSearchParams(requestInput(req), app.config.tz);
    const tz = app.config.tz;
    return keysetSearch<PaymentRow, ReturnType<typeof paymentView>>(app.db.pool, {
      table: 'payments',
      columns: PAYMENT_COLUMNS,
      merchantId: req.merchant.id,
      params,
      path: endpointUrl(req, app.config.publicBaseUrl),
      map: (p) => paymentView(p, tz),
    });
  });
}
