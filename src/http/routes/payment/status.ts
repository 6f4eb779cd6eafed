import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { PaymentSchema, paymentView } from '../../views/payment.js';
import { ChargebackSchema, chargebackView } from '../../../domain/chargeback/chargeback.view.js';
import { RefundSchema, refundView } from '../refund/view.js';

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
  }, async (req) => {
    const p = input.parse(requestInput(req));
    const tz = app.config.tz;
    const { payment, refunds, chargebacks } = await app.services.paymentReads.ofMerchant(
      req.merchant.id, p.id, { refunds: p.refunds === true, chargebacks: p.chargeback === true },
    );
    return {
      ...paymentView(payment, tz),
      ...(refunds ? { refunds: refunds.map((x) => { const { success: _s, ...rest } = refundView(x, tz); return rest; }) } : {}),
      ...(chargebacks ? { chargeback: chargebacks.map((x) => chargebackView(x, tz)) } : {}),
      success: true,
    };
  });
}
