import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { BALANCE_COLUMNS, BalanceSchema, balanceView, type BalanceRow } from '../../views/balance.js';

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
    config: {
      subscription: true,
      errorStatus: {
        merchant_banned: 403, merchant_subscription_inactive: 403, merchant_subscription_not_found: 403,
        merchant_not_found: 403, bill_not_found: 422,
      },
    },
  }, async (req) => {
    const r = await app.db.pool.query<BalanceRow>(
      `SELECT ${BALANCE_COLUMNS} FROM balances WHERE merchant_id = $1 ORDER BY currency`, [req.merchant.id],
    );
    return { balances: r.rows.map(balanceView), success: 'true' };
  });
}
