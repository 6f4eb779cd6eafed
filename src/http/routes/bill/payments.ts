import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../input.js';
import { PaymentSchema, paymentView } from '../../views/payment.js';

const input = defineInput({ id: v.string({ required: true, max: 64, description: 'Bill ID' }) });

/** GET /api/v1/bill/payments */
export function billPaymentsRoute(app: FastifyInstance): void {
  app.get('/payments', {
    schema: {
      tags: ['bill'],
      summary: "A bill's payments, oldest first",
      querystring: input.schema,
      response: { 200: Type.Object({ data: Type.Array(PaymentSchema), success: Type.Boolean() }) },
    },
    config: { errorStatus: { too_many_payments: 400, merchant_not_found: 403, merchant_banned: 403, bill_not_found: 403 } },
  }, async (req) => {
    const p = input.parse(requestInput(req));
    const rows = await app.services.bills.payments(req.merchant, p.id!);
    const tz = app.config.tz;
    return { data: rows.map((r) => paymentView(r, tz)), success: true };
  });
}
