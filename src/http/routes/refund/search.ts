import type { FastifyInstance } from 'fastify';
import { assertGrant } from '../../../domain/refund/refund.service.js';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { endpointUrl, pageSchema, parseSearchParams, searchRules, toPage } from '../../pagination.js';
import { RefundSchema, refundView } from './view.js';

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
  }, async (req) => {
    // The refund endpoints are granted per merchant (spec part 5.4), checked before the input as every refund endpoint does.
    assertGrant(req.merchant);
    const raw = requestInput(req);
    const p = input.parse(raw);
    const params = parseSearchParams(raw, app.config.tz);
    const tz = app.config.tz;
    const page = await app.services.refunds.search(req.merchant, params, p.payment_id);
    const echo = { ...params.echo, ...(p.payment_id ? { payment_id: p.payment_id } : {}) };
    return toPage(page, { ...params, echo }, endpointUrl(req, app.config.publicBaseUrl), (r) => refundView(r, tz));
  });
}
