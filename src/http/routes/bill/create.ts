import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { requestInput } from '../../../lib/input.js';
import { isValidAmount } from '../../../lib/money.js';
import { ensureMerchant } from '../../merchant-auth.js';
import { recordAnswer } from '../../../plugins/idempotency.js';
import type { CreatedBill } from '../../../domain/bill/bill.service.js';
import { guardBillUrls } from '../../../domain/bill/bill-fields.js';
import { assertSaveMethodAllowed, billCreateInput } from '../../../domain/bill/bill.input.js';

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
      assertSaveMethodAllowed(p);
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
      capture: p.capture,
      savePaymentMethod: p.save_payment_method,
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
