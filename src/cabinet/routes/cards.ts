import type { FastifyInstance } from 'fastify';
import { BASE, cabinetActor, merchantIdOf, render } from '../context.js';
import { savedMethodRevokeAudit } from '../../domain/audit-steps.js';

/**
 * Saved cards (docs/adr/0074-saved-cards-and-recurring-charges.md): the merchant's ACTIVE cards
 * of the mode shown, and revoking one (the owner's: ROUTE_PERMISSIONS' default for a form).
 */
export default async function cardRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) =>
    render(req, reply, 'cards', { nav: 'cards', cards: await app.services.savedMethods.list(merchantIdOf(req)) }));

  // Scoped by merchant: another merchant's card is api:error.payment_method_not_found (422).
  app.post('/:id/revoke', { schema: { hide: true } }, async (req, reply) => {
    await app.services.savedMethods.revoke(merchantIdOf(req), (req.params as { id: string }).id, savedMethodRevokeAudit(cabinetActor(req)));
    return reply.redirect(`${BASE}/cards?ok=cards.revoked`, 303);
  });
}
