import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { deferredRead } from '../../merchant-auth.js';
import { BalanceSchema, balanceView } from '../../views/balance.js';

/** GET /api/v1/merchant/balance */
export function merchantBalanceRoute(app: FastifyInstance): void {
  app.get('/balance', {
    schema: {
      tags: ['merchant'],
      summary: "The merchant's balances, one per currency",
      response: {
        200: Type.Object({ balances: Type.Array(BalanceSchema), success: Type.String({ description: 'The string "true"', examples: ['true'] }) }),
      },
    },
    // Authenticated inside the read: one round trip instead of two.
    config: { subscription: true, deferAuth: true },
  }, async (req) => {
    const balances = await deferredRead(req,
      async (hash) => { const r = await app.services.merchants.balancesByToken(hash); return r && { merchant: r.merchant, value: r.rows }; },
      (m) => app.services.merchants.balances(m.id));
    return { balances: balances.map(balanceView), success: 'true' };
  });
}
