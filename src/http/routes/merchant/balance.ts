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
    config: { subscription: true },
  }, async (req) => {
    const r = await app.db.pool.query<BalanceRow>(
      `SELECT ${BALANCE_COLUMNS} FROM balances WHERE merchant_id = $1 ORDER BY currency`, [req.merchant.id],
    );
    return { balances: r.rows.map(balanceView), success: 'true' };
  });
}
