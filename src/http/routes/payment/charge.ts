import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../../errors.js';
import { defineInput, requestInput, v } from '../../../lib/input.js';
import { isValidAmount } from '../../../lib/money.js';
import { PaymentSchema, paymentView } from '../../views/payment.js';

const input = defineInput({
  payment_method_id: v.string({ required: true, max: 64, description: 'A saved card (GET /api/v1/payment/methods), saved by a payment whose payer consented' }),
  amount: v.decimal({ required: true, description: 'Amount to charge: positive, at most 2 decimals, at most 99999999.99' }),
  currency: v.enumOf(['RUB', 'USD', 'EUR'] as const, { description: "Currency of the amount; default: the shop's" }),
  order_id: v.string({ max: 255, description: 'Merchant order ID; returned in postbacks as InvId' }),
  description: v.string({ max: 1000, description: 'Payment description' }),
  payer_email: v.string({ max: 255, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, description: "Where a fiscalized shop's receipt (54-FZ) is sent; default: the contact the payer gave when the card was saved" }),
});

/**
 * POST /api/v1/payment/charge (docs/adr/0074-saved-cards-and-recurring-charges.md): charges a
 * saved card with no payer present. A bill and its payment are made in one transaction and the
 * card's connector is called as for every payment; the answer is the payment object (SUCCESS,
 * FAIL, or PROCESS while the provider's answer is awaited: the postback says the end). With an
 * Idempotency-Key, a repeat answers the first charge's payment and charges nothing more.
 */
export function paymentChargeRoute(app: FastifyInstance): void {
  app.post('/charge', {
    schema: {
      tags: ['payment'],
      summary: 'Charge a saved card',
      body: input.schema,
      response: { 200: Type.Composite([PaymentSchema, Type.Object({ success: Type.Boolean() })]) },
    },
    config: { subscription: true, errorStatus: { invalid_amount: 403 } },
  }, async (req) => {
    const p = input.parse(requestInput(req));
    if (!isValidAmount(p.amount)) throw new DomainError('invalid_amount');
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    const paymentId = await app.services.savedMethods.charge(req.merchant.id, {
      paymentMethodId: p.payment_method_id, amount: p.amount, currency: p.currency, orderId: p.order_id, description: p.description, payerEmail: p.payer_email,
    }, key);
    const { payment } = await app.services.paymentReads.ofMerchant(req.merchant.id, paymentId, { refunds: false, chargebacks: false });
    return { ...paymentView(payment, app.config.tz), success: true };
  });
}
