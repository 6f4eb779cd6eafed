import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { DomainError, NotFoundError } from '../../errors.js';
import { AdminChargebackSchema, adminChargebackView } from '../../domain/chargeback/chargeback.view.js';
import { isIdLike } from '../../lib/input-fields.js';
import { actorOf } from '../../audit/audit.js';
import { chargebackAudit } from '../../domain/audit-steps.js';
import { list } from './schemas.js';

const IdParams = Type.Object({ id: Type.String() });
const CreateInput = defineInput({
  amount: v.decimal({ required: true, description: "In the payment's account currency; at most what it received less refunds and chargebacks" }),
  reason: v.string({ required: true, max: 500, description: 'Why (the scheme\'s reason code or text); posted to the shop as Reason' }),
});

const tags = ['admin'];
const Created = Type.Composite([Type.Object({ success: Type.Boolean(), merchant_id: Type.String() }), AdminChargebackSchema], { description: 'The chargeback recorded' });

/** Operator API: chargebacks against payments. */
export default async function chargebackAdminRoutes(app: FastifyInstance): Promise<void> {
  const { chargebacks } = app.services;

  app.post<{ Params: { id: string } }>('/payments/:id/chargebacks', {
    schema: {
      tags, summary: "Record a chargeback: the amount leaves the merchant's available balance (never below zero: 422 api:error.balance_not_enough) and the shop gets a chargeback postback",
      params: IdParams, body: CreateInput.schema, response: { 201: Created },
    },
  }, async (req, reply) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Payment not found.');
    const input = CreateInput.parse(requestInput(req));
    try {
      const cb = await chargebacks.create(req.params.id, { amount: input.amount!, reason: input.reason! }, chargebackAudit(actorOf(req)));
      return reply.status(201).send({ success: true, merchant_id: cb.merchantId, ...adminChargebackView(cb, app.config.tz) });
    } catch (e) {
      // The ledger cannot hold a debt: a balance that cannot cover it refuses (docs/adr/0019-chargebacks.md).
      if (e instanceof DomainError && e.code === 'balance_not_enough') {
        return reply.status(422).send({
          success: false, message: e.message,
          errors: { amount: ["The merchant's available balance cannot cover the chargeback."] },
        });
      }
      throw e;
    }
  });

  app.get<{ Params: { id: string } }>('/payments/:id/chargebacks', {
    schema: { tags, summary: "A payment's chargebacks (newest first)", params: IdParams,
      response: { 200: list(AdminChargebackSchema, 'The chargebacks, newest first') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Payment not found.');
    const rows = await chargebacks.listForPayment(req.params.id);
    return { success: true, data: rows.map((c) => adminChargebackView(c, app.config.tz)) };
  });
}
