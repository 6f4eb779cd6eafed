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
 * What a merchant must know to charge a card once (shown in /docs): nothing but the key makes two
 * requests one charge, so a retry without it charges again.
 */
export const CHARGE_DEDUPLICATION =
  'Charges are deduplicated **only by the `Idempotency-Key` header**. Nothing else makes two requests one charge: not the card, ' +
  'the amount or `order_id`. A request repeated without a key, or with a new key, charges the card again.\n\n' +
  'Send one key per intended charge, e.g. your order id and attempt number (`order-1042-attempt-1`), and send the same key again ' +
  'whenever you repeat that request (a timeout, a lost answer, a 5xx): the repeat answers the first charge\'s payment ' +
  '(header `Idempotent-Replayed: true`) and charges nothing more. Use a new key only for a new charge you intend ' +
  '(the next attempt after a FAIL, the next period of a subscription). A charge keeps its key: the same key never charges again, ' +
  'even after the 24 hours the answer itself is kept. Within them the same key with another body is 422, and while the first ' +
  'request still runs a repeat is 409 with `Retry-After`.';

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
      description: CHARGE_DEDUPLICATION,
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
