import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../input.js';
import { isValidAmount } from '../../../lib/money.js';
import { ensureMerchant } from '../../../plugins/merchant-auth.js';
import { recordAnswer } from '../../../plugins/idempotency.js';
import type { CreatedBill } from '../../../domain/bill/bill.service.js';
import { guardBillUrls, itemsRule, requestFieldsRule } from './bill-fields.js';

/** A year: longer-lived bills are not bills with a lifetime. */
export const MAX_TTL = 365 * 86400;
const url = (description: string) => v.string({ max: 2048, description });

export const billCreateInput = defineInput({
  amount: v.decimal({ required: true, description: 'Payment amount: positive, at most 2 decimals, at most 99999999.99' }),
  shop_id: v.string({ required: true, max: 64, description: 'Shop ID' }),
  order_id: v.string({ max: 255, description: 'Merchant order ID; returned in postbacks as InvId' }),
  description: v.string({ max: 1000, description: 'Payment description' }),
  type: v.enumOf(['normal', 'multi'] as const, { description: 'normal (default): one successful payment; multi: many' }),
  currency_in: v.enumOf(['RUB', 'USD', 'EUR'] as const, { description: "Currency the customer sees; default: the shop's" }),
  custom: v.stringOrJson({ max: 1000, description: 'Returned in postbacks as custom; a JSON object is kept (and returned) as its JSON text' }),
  payer_pays_commission: v.bool({ description: '1: the payer pays the fee on top of the amount' }),
  name: v.string({ max: 255, description: 'Purpose of the payment, shown on the payment form' }),
  payment_method: v.enumOf(['BANK_CARD', 'SBP'] as const, { description: 'Preselects this method and allows no other' }),
  ttl: v.integer({ min: 1, max: MAX_TTL, description: `Seconds the bill lives (1..${MAX_TTL}); after that it takes no payment (POST /pay answers 403 api:error.bill_expired)` }),
  success_url: url("Where the customer's browser posts after a payment that received money; overrides the shop's Success URL"),
  fail_url: url("Where the customer's browser posts after a failed payment; overrides the shop's Fail URL"),
  return_url: url('A "back to shop" link on the payment page'),
  locale: v.enumOf(['ru', 'en'] as const, { description: 'Language of the payment page (its ?lang= still wins)' }),
  payer_email: v.string({ max: 255, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, description: "Prefills the payer's e-mail on the page" }),
  request_fields: requestFieldsRule,
  items: itemsRule,
});

/** POST /api/v1/bill/create */
export function billCreateRoute(app: FastifyInstance): void {
  app.post('/create', {
    schema: {
      tags: ['bill'],
      summary: 'Create a bill (payment link)',
      body: billCreateInput.schema,
      response: {
        200: Type.Object({
          success: Type.String({ description: 'The string "true"', examples: ['true'] }),
          link_url: Type.String({ description: 'Page with the QR code of the payment page', examples: ['https://pay.example/pay/kD3vPq8Rz1/qr'] }),
          link_page_url: Type.String({ description: 'Payment page', examples: ['https://pay.example/pay/kD3vPq8Rz1'] }),
          bill_id: Type.String({ examples: ['kD3vPq8Rz1'] }),
        }),
      },
    },
    config: {
      subscription: true,
      // Authenticated inside the create statement: one round trip instead of two (the hook
      // only reads the token; every error path below authenticates first, as the hook would).
      deferAuth: true,
      // The spec lists invalid_amount 403 here (400 on payouts).
      errorStatus: { invalid_amount: 403 },
    },
  }, async (req, reply) => {
    let p;
    try {
      p = billCreateInput.parse(requestInput(req));
      await guardBillUrls(p, app.config.allowPrivateWebhookUrls);
    } catch (e) {
      await ensureMerchant(app, req);
      throw e;
    }
    if (!isValidAmount(p.amount)) await ensureMerchant(app, req);
    const view = (bill: CreatedBill) => ({ success: 'true', link_url: bill.linkUrl, link_page_url: bill.linkPageUrl, bill_id: bill.id });
    return view(await app.services.bills.create(req.merchant ?? { tokenHash: req.tokenHash!, clientIp: req.ip }, {
      amount: p.amount,
      shopId: p.shop_id,
      orderId: p.order_id,
      description: p.description,
      type: p.type === 'multi' ? 'MULTI' : 'NORMAL',
      currencyIn: p.currency_in,
      custom: p.custom,
      payerPaysCommission: p.payer_pays_commission,
      name: p.name,
      paymentMethod: p.payment_method,
      ttl: p.ttl,
      successUrl: p.success_url,
      failUrl: p.fail_url,
      returnUrl: p.return_url,
      locale: p.locale,
      payerEmail: p.payer_email,
      requestFields: p.request_fields,
      items: p.items,
    }, recordAnswer(req, reply, view)));
  });
}
