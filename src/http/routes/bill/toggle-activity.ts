import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { BillSchema, billView } from '../../views/bill.js';

const input = defineInput({
  id: v.string({ required: true, max: 64, description: 'Bill ID' }),
  active: v.bool({ required: true, description: '0 deactivates, 1 activates' }),
});

/** POST /api/v1/bill/toggle_activity */
export function billToggleActivityRoute(app: FastifyInstance): void {
  app.post('/toggle_activity', {
    schema: {
      tags: ['bill'],
      summary: 'Activate or deactivate a bill',
      body: input.schema,
      response: {
        200: Type.Composite([BillSchema, Type.Object({
          activity: Type.Boolean({ description: 'Same as active (a sample response of the spec uses this key)' }),
          success: Type.Boolean(),
        })]),
      },
    },
    config: { subscription: true },
  }, async (req) => {
    const p = input.parse(requestInput(req));
    const bill = await app.services.bills.toggle(req.merchant, { id: p.id, active: p.active });
    const view = billView(bill, app.config.tz);
    return { ...view, activity: view.active, success: true };
  });
}
