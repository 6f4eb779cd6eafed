import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../../errors.js';
import { defineInput, requestInput, v } from '../../input.js';
import { PAYMENT_COLUMNS, PaymentSchema, paymentView, type PaymentRow } from '../../views/payment.js';
import { ChargebackSchema, chargebackView } from '../../views/chargeback.js';
import { RefundSchema, refundView } from '../refund/view.js';
import { refundsOfPayment } from '../../../domain/refund/refund.repository.js';
import { chargebacksOfPayment } from '../../../domain/chargeback/chargeback.repository.js';

const input = defineInput({
  id: v.string({ required: true, max: 64, description: 'Payment ID' }),
  refunds: v.bool({ description: '1: add `refunds`, the payment\'s refunds (newest first)' }),
  chargeback: v.bool({ description: '1: add `chargeback`, the payment\'s chargebacks (newest first)' }),
});

const RefundItem = Type.Omit(RefundSchema, ['success']);

/** GET /api/v1/payment/status */
export function paymentStatusRoute(app: FastifyInstance): void {
  app.get('/status', {
    schema: {
      tags: ['payment'],
      summary: 'A payment (with refunds=1 its refunds, with chargeback=1 its chargebacks)',
      querystring: input.schema,
      response: {
        200: Type.Composite([PaymentSchema, Type.Object({
          refunds: Type.Optional(Type.Array(RefundItem, { description: 'Present with refunds=1' })),
          chargeback: Type.Optional(Type.Array(ChargebackSchema, { description: 'Present with chargeback=1' })),
          success: Type.Boolean(),
        })]),
      },
    },
    config: { errorStatus: { merchant_banned: 403, payment_not_found: 422 } },
  }, async (req) => {
    const p = input.parse(requestInput(req));
    const tz = app.config.tz;
    // Scoped by merchant: another merchant's payment is not found.
    const r = await app.db.pool.query<PaymentRow>(
      `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1 AND merchant_id = $2`, [p.id, req.merchant.id],
    );
    const row = r.rows[0];
    if (!row) throw new DomainError('payment_not_found');
    const [refunds, chargebacks] = await Promise.all([
      p.refunds ? refundsOfPayment(app.db.pool, req.merchant.id, row.id) : null,
      p.chargeback ? chargebacksOfPayment(app.db.pool, req.merchant.id, row.id) : null,
    ]);
    return {
      ...paymentView(row, tz),
      ...(refunds ? { refunds: refunds.map((x) => { const { success: _s, ...rest } = refundView(x, tz); return rest; }) } : {}),
      ...(chargebacks ? { chargeback: chargebacks.map((x) => chargebackView(x, tz)) } : {}),
      success: true,
    };
  });
}
