import type { FastifyInstance } from 'fastify';
import { cabinetActor, BASE, formBody, formErrors, merchantIdOf, queryOf, render } from '../context.js';
import { redeliverAudit, merchantAudit } from '../../audit/steps.js';

const PAGE = 30;

export default async function webhookRoutes(app: FastifyInstance): Promise<void> {
  const page = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const q = queryOf(req);
    const before = q.before && /^\d{1,18}$/.test(q.before) ? q.before : undefined;
    const [m, events] = await Promise.all([
      app.services.merchants.get(merchantId),
      app.services.outbox.list({ merchantId, beforeId: before, limit: PAGE + 1 }),
    ]);
    const shown = events.slice(0, PAGE);
    return render(req, reply, 'webhooks', {
      nav: 'webhooks', webhookUrl: m.payoutWebhookUrl ?? '', events: shown,
      nextBefore: events.length > PAGE ? shown.at(-1)!.id : null, ...data,
    });
  };

  app.get('/', { schema: { hide: true } }, async (req, reply) => page(req, reply));

  // Same service (the outbound URL guard) as the operator API.
  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    try {
      await app.services.merchants.setPayoutWebhookUrl(merchantIdOf(req), (b.url ?? '').slice(0, 4096), merchantAudit(app.config, cabinetActor(req), 'merchant.payout_webhook.set'));
      return reply.redirect(`${BASE}/webhooks?ok=common.saved`, 303);
    } catch (e) {
      reply.status(422);
      return page(req, reply, { errors: formErrors(req, e), values: b });
    }
  });

  // Scoped by merchant: another merchant's event is NotFoundError (404).
  app.post('/events/:id/redeliver', { schema: { hide: true } }, async (req, reply) => {
    await app.services.outbox.redeliver((req.params as { id: string }).id, merchantIdOf(req), redeliverAudit(cabinetActor(req)));
    return reply.redirect(`${BASE}/webhooks?ok=hooks.redelivered`, 303);
  });
}
