import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { BillSchema, billView } from '../../views/bill.js';

const input = defineInput({ id: v.string({ required: true, max: 64, description: 'Bill ID' }) });

/** GET /api/v1/bill/status */
export function billStatusRoute(app: FastifyInstance): void {
  app.get('/status', {
    schema: {
      tags: ['bill'],
      summary: 'Bill info and status',
      querystring: input.schema,
      response: { 200: Type.Composite([BillSchema, Type.Object({ success: Type.Boolean() })]) },
    },
  }, async (req) => {
    const p = input.parse(requestInput(req));
    const bill = await app.services.bills.status(req.merchant, p.id);
    return { ...billView(bill, app.config.tz), success: true };
  });
}
