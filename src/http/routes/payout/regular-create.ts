import type { FastifyInstance } from 'fastify';
import { parseRegular, regularCreateInput } from '../../../domain/payout/payout.input.js';
import { assertRegularGrant } from '../../../domain/payout/payout.service.js';
import type { PayoutView } from '../../../domain/payout/payout.view.js';
import { recordAnswer } from '../../../plugins/idempotency.js';
import { apiActor } from '../../../audit/audit.js';
import { payoutCreateAudit, withAudit } from '../../../domain/audit-steps.js';
import { requestInput } from '../../../lib/input.js';
import { CREATE_ERROR_STATUS, PayoutListSchema } from './schemas.js';

/** POST /api/v1/payout/regular/create: to a card or an SBP phone; needs the merchant's grant (403 first). */
export function regularCreateRoute(app: FastifyInstance): void {
  app.post('/regular/create', {
    schema: { tags: ['payout'], summary: 'Payout to a card or an SBP phone', body: regularCreateInput.schema, response: { 200: PayoutListSchema } },
    config: { subscription: true, errorStatus: CREATE_ERROR_STATUS },
  }, async (req, reply) => {
    assertRegularGrant(req.merchant);
    const view = (data: PayoutView[]) => ({ data, success: true });
    return view(await app.services.payouts.createRegular(req.merchant, parseRegular(requestInput(req)), withAudit(recordAnswer(req, reply, view), payoutCreateAudit(apiActor(req)))));
  });
}
