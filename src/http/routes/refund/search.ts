import type { FastifyInstance } from 'fastify';
import { assertGrant } from '../../../domain/refund/refund.service.js';
import { REFUND_COLUMNS, toRecord, type RefundRow } from '../../../domain/refund/refund.repository.js';
import { defineInput, requestInput, v } from '../../input.js';
import { endpointUrl, keysetSearch, pageSchema, parseSearchParams, searchRules } from '../../pagination.js';
import { REFUND_ERROR_STATUS, RefundSchema, refundView } from './view.js';

const input = defineInput({
  ...searchRules,
  payment_id: v.string({ max: 64, description: "Only this payment's refunds" }),
});

/** GET /api/v1/refund/search: the merchant's refunds, newest first, like the other searches. */
export function refundSearchRoute(app: FastifyInstance): void {
  app.get('/search', {
    schema: {
      tags: ['refund'],
      summary: 'Refunds created in a period, newest first, cursor-paginated; filter by payment_id (needs the refund grant)',
      querystring: input.schema,
      response: { 200: pageSchema(RefundSchema) },
    },
    config: { errorStatus: REFUND_ERROR_STATUS },
  }, async (req) => {
    // The refund endpoints are granted per merchant (spec part 5.4); searching them is one of them.
    assertGrant(req.merchant);
    const raw = requestInput(req);
    const p = input.parse(raw);
    const params = parseSearchParams(raw, app.config.tz);
    const tz = app.config.tz;
    // Refunds have no shop column: with shop_id, search them joined to their payment's shop.
    const table = params.shopId === undefined ? 'refunds'
      : '(SELECT r.*, p.shop_id FROM refunds r JOIN payments p ON p.id = r.payment_id) AS refunds';
    return keysetSearch<RefundRow, ReturnType<typeof refundView>>(app.db.pool, {
      table,
      columns: REFUND_COLUMNS,
      merchantId: req.merchant.id,
      params: { ...params, echo: { ...params.echo, ...(p.payment_id ? { payment_id: p.payment_id } : {}) } },
      filters: { payment_id: p.payment_id },
      path: endpointUrl(req, app.config.publicBaseUrl),
      map: (r) => refundView(toRecord(r), tz),
    });
  });
}
