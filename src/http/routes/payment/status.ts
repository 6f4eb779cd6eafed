import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../errors.js';
import { defineInput, requestInput, v } from '../../input.js';
import { PAYMENT_COLUMNS, PaymentSchema, paymentView, type PaymentRow } from '../../views/payment.js';

const input = defineInput({ id: v.string({ required: true, max: 64, description: 'Payment ID' }) });

/** GET /api/v1/payment/status */
export function paymentStatusRoute(app: FastifyInstance): void {
  app.get('/status', {
    schema: {
      tags: ['payment'],
      summary: 'A payment',
      querystring: input.schema,
      response: { 200: Type.Composite([PaymentSchema, Type.Object({ success: Type.Boolean() })]) },
    },
    config: { errorStatus: { merchant_banned: 403, payment_not_found: 422 } },
  }, async (req) => {
    const p = input.parse(requestInput(req));
    // Scoped by merchant: another merchant's payment is not found.
    const r = await app.db.pool.query<PaymentRow>(
      `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1 AND merchant_id = $2`, [p.id, req.merchant.id],
    );
    const row = r.rows[0];
    if (!row) throw new DomainError('payment_not_found');
    return { ...paymentView(row, app.config.tz), success: true };
  });
}
