import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { NotFoundError } from '../../errors.js';
import { isIdLike } from '../../lib/input-fields.js';
import { actorOf } from '../../audit/audit.js';
import { holdAudit } from '../../domain/audit-steps.js';
import type { HoldSettled } from '../../domain/payment/payment.service.js';

const IdParams = Type.Object({ id: Type.String() });
const CaptureInput = defineInput({
  amount: v.decimal({ description: 'RUB to capture, at most what is held (the rest is released); default: all of it' }),
});
const Settled = Type.Object({ success: Type.Boolean(), payment_id: Type.String(), status: Type.String(), amount: Type.String() });
const tags = ['admin'];
const view = (s: HoldSettled) => ({ success: true, payment_id: s.paymentId, status: s.status, amount: s.amount.toFixed(2) });

/**
 * Operator API: two-stage payments (docs/adr/0073-two-stage-payments.md). A payment of a bill
 * created with `capture: false` holds the payer's money while PROCESS; it is captured (in full
 * or in part) or cancelled here. `status` is the payment's after the provider answered
 * (PROCESS: its answer is still awaited, reconciliation applies it).
 */
export default async function holdAdminRoutes(app: FastifyInstance): Promise<void> {
  const { payments } = app.services;

  app.post<{ Params: { id: string } }>('/payments/:id/capture', {
    schema: {
      tags, summary: "Capture a held payment, in full or in part: the captured amount is credited (less its share of the fee) and the shop gets the SUCCESS postback; 409 when it holds nothing, 422 for more than is held",
      params: IdParams, body: CaptureInput.schema, response: { 200: Settled },
    },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Payment not found.');
    const input = CaptureInput.parse(requestInput(req));
    return view(await payments.captureHold(req.params.id, input.amount ?? null, holdAudit(actorOf(req))));
  });

  app.post<{ Params: { id: string } }>('/payments/:id/cancel', {
    schema: {
      tags, summary: 'Cancel a held payment: the hold is released, the payment FAILs (nothing credited) and the shop gets the FAIL postback; 409 when it holds nothing',
      params: IdParams, response: { 200: Settled },
    },
  }, async (req) => view(await payments.cancelHold(req.params.id, holdAudit(actorOf(req)))));
}
