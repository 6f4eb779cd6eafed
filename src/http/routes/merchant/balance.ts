import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { BalanceSchema, balanceView } from '../../views/balance.js';

/** GET /api/v1/merchant/balance */
export function merchantBalanceRoute(app: FastifyInstance): void {
  app.get('/balance', {
    schema: {
      tags: ['merchant'],
      summary: "The merchant's balances, one per currency",
      response: {
        200: Type.Object({ balances: Type.Array(BalanceSchema), success: Type.String({ description: 'The string "true"' }) }),
      },
    },
    config: { subscription: true },
  }, async (req) => {
    return { balances: (await app.services.merchants.balances(req.merchant.id)).map(balanceView), success: 'true' };
  });
}
