import type { FastifyInstance } from 'fastify';
import { cabinetActor, BASE, formErrors, merchantIdOf, render } from '../context.js';
import { formBody } from '../../lib/form-body.js';
import { payoutAccountAudit } from '../../audit/steps.js';

export default async function accountRoutes(app: FastifyInstance): Promise<void> {
  const page = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const [accounts, banks] = await Promise.all([
      app.services.payoutAccounts.list(merchantId),
      app.services.sbpBanks.activeByName(),
    ]);
    return render(req, reply, 'accounts', { nav: 'accounts', accounts, banks, ...data });
  };

  app.get('/', { schema: { hide: true } }, async (req, reply) => page(req, reply));

  // Same service (validation, encryption of card numbers) as the operator API.
  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    try {
      await app.services.payoutAccounts.create(merchantIdOf(req), {
        type: b.type, identifier: b.identifier, cardHolder: b.type === 'card' ? b.card_holder : undefined,
        bankMemberId: b.type === 'sbp' ? b.bank_member_id : undefined,
      }, payoutAccountAudit(app.config, cabinetActor(req), 'payout_account.create'));
      return reply.redirect(`${BASE}/accounts?ok=acc.created`, 303);
    } catch (e) {
      reply.status(422);
      // The card number typed is never echoed back into the page.
      return page(req, reply, { errors: formErrors(req, e), values: { ...b, identifier: b.type === 'sbp' ? b.identifier : '' } });
    }
  });
}
