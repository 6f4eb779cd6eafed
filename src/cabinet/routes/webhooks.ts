import type { FastifyInstance } from 'fastify';
import { cabinetActor, BASE, formErrors, liveMerchantIdOf, merchantIdOf, render } from '../context.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import { redeliverAudit, merchantAudit } from '../../domain/audit-steps.js';
import { filterQuery, listFilters } from '../paging.js';
import { pageSize } from '../../lib/page-size.js';
import { NO_URL } from '../../outbox/events.js';

const PAGE = 30;
const HOOK_STATUSES = ['pending', 'delivered', 'dead', 'not_configured'] as const;
const KINDS = ['PAYMENT_POSTBACK', 'PAYOUT_WEBHOOK', 'REFUND_POSTBACK', 'CHARGEBACK_POSTBACK', 'TEST_POSTBACK'] as const;

export default async function webhookRoutes(app: FastifyInstance): Promise<void> {
  const page = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const q = queryOf(req);
    const before = q.before && /^\d{1,18}$/.test(q.before) ? q.before : undefined;
    const perPage = pageSize(q.per_page, PAGE);
    // Filters: status (not configured apart from dead), kind, dates (as every cabinet list).
    const f = listFilters(req, HOOK_STATUSES);
    const kind = (KINDS as readonly string[]).includes(q.kind ?? '') ? q.kind : undefined;
    const status = f.status === 'not_configured' ? { status: 'dead' as const, notConfigured: true }
      : f.status === 'dead' ? { status: 'dead' as const, notConfigured: false }
        : f.status ? { status: f.status as 'pending' | 'delivered' } : {};
    const [m, events] = await Promise.all([
      app.services.merchants.get(liveMerchantIdOf(req)),
      app.services.outbox.page({
        merchantId, beforeId: before, limit: perPage, kind, ...status,
        createdFrom: f.createdAt?.gte, createdBefore: f.createdAt?.lt,
      }),
    ]);
    return render(req, reply, 'webhooks', {
      nav: 'webhooks', webhookUrl: m.payoutWebhookUrl ?? '', events: events.data, f: { ...f, kind }, statuses: HOOK_STATUSES, kinds: KINDS,
      nextUrl: events.nextBeforeId ? `${BASE}/webhooks${filterQuery(f, { kind, per_page: perPage === PAGE ? undefined : perPage, before: events.nextBeforeId })}` : null, noUrl: NO_URL, ...data,
    });
  };

  app.get('/', { schema: { hide: true } }, async (req, reply) => page(req, reply));

  // Same service (the outbound URL guard) as the operator API.
  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    try {
      await app.services.merchants.setPayoutWebhookUrl(liveMerchantIdOf(req), (b.url ?? '').slice(0, 4096), merchantAudit(app.config, cabinetActor(req), 'merchant.payout_webhook.set'));
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
