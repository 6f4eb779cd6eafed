import type { FastifyInstance } from 'fastify';
import { cabinetActor, BASE, formErrors, merchantIdOf, render } from '../context.js';
import { formBody } from '../../lib/form-body.js';
import { payoutAccountAudit } from '../../domain/audit-steps.js';
import { pageCspWith } from '../../lib/web-session.js';

export default async function accountRoutes(app: FastifyInstance): Promise<void> {
  const page = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const [accounts, banks, entry] = await Promise.all([
      app.services.payoutAccounts.list(merchantId),
      app.services.sbpBanks.activeByName(),
      app.services.payoutAccounts.cardEntry(merchantId),
    ]);
    // The provider's payout widget runs in this page: its origin is allowed here, and only here.
    if (entry.widget) reply.header('content-security-policy', pageCspWith(entry.widget.scriptUrl));
    return render(req, reply, 'accounts', { nav: 'accounts', accounts, banks, entry, ...data });
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

  // A card from the provider's payout widget: its token and mask, never a number (docs/adr/0070).
  app.post('/token', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    try {
      await app.services.payoutAccounts.create(merchantIdOf(req), {
        type: 'card', identifier: undefined, payoutToken: b.payout_token, first6: b.first6, last4: b.last4,
        cardType: b.card_type, issuerName: b.issuer_name,
      }, payoutAccountAudit(app.config, cabinetActor(req), 'payout_account.create'));
      return reply.redirect(`${BASE}/accounts?ok=acc.created`, 303);
    } catch (e) {
      reply.status(422);
      return page(req, reply, { errors: formErrors(req, e) });
    }
  });
}
