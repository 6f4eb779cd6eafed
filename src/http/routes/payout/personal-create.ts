import type { FastifyInstance } from 'fastify';
import { parsePersonal, personalCreateInput } from '../../../domain/payout/payout.input.js';
import type { PayoutView } from '../../../domain/payout/payout.view.js';
import { recordAnswer } from '../../../plugins/idempotency.js';
import { apiActor } from '../../../audit/audit.js';
import { payoutCreateAudit, withAudit } from '../../../domain/audit-steps.js';
import { requestInput } from '../../../lib/input.js';
import { CREATE_ERROR_STATUS, PayoutListSchema } from './schemas.js';

/** POST /api/v1/payout/personal/create: to a stored payout account; may answer several payouts (split). */
export function personalCreateRoute(app: FastifyInstance): void {
  app.post('/personal/create', {
    schema: { tags: ['payout'], summary: 'Payout to a stored payout account', body: personalCreateInput.schema, response: { 200: PayoutListSchema } },
    config: { subscription: true, errorStatus: CREATE_ERROR_STATUS },
  }, async (req, reply) => {
    const view = (data: PayoutView[]) => ({ data, success: true });
    return view(await app.services.payouts.createPersonal(req.merchant, parsePersonal(requestInput(req)), withAudit(recordAnswer(req, reply, view), payoutCreateAudit(apiActor(req)))));
  });
}
