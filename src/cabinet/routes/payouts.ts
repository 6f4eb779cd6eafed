import type { FastifyInstance } from 'fastify';
import { assertMerchantUsable } from '../../domain/merchant/merchant-guard.js';
import { cabinetActor, BASE, formBody, formErrors, merchantIdOf, render } from '../context.js';
import { listFilters, PAGE_SIZE } from '../paging.js';
import { payoutCreateAudit } from '../../audit/steps.js';

const STATUSES = ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'] as const;

export default async function payoutRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, STATUSES);
    const rows = await app.db.prisma.payout.findMany({
      where: {
        merchantId,
        ...(f.status ? { status: f.status as (typeof STATUSES)[number] } : {}),
        ...(f.createdAt ? { createdAt: f.createdAt } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: (f.page - 1) * PAGE_SIZE, take: PAGE_SIZE + 1,
    });
    return render(req, reply, 'payouts', { nav: 'payouts', payouts: rows.slice(0, PAGE_SIZE), hasNext: rows.length > PAGE_SIZE, f, statuses: STATUSES });
  });

  const newForm = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const [accounts, balance] = await Promise.all([
      app.services.payoutAccounts.list(merchantId),
      app.db.prisma.balance.findUnique({ where: { merchantId_currency: { merchantId, currency: 'RUB' } } }),
    ]);
    return render(req, reply, 'payout-new', { nav: 'payouts', accounts: accounts.filter((a) => a.status === 'ACTIVE'), balance, ...data });
  };

  app.get('/new', { schema: { hide: true } }, async (req, reply) => newForm(req, reply));

  // Same service as POST /api/v1/payout/personal/create (limits, split, moderation, ledger lock).
  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const m = req.cabinet.session!.merchant;
    try {
      assertMerchantUsable(m, { subscription: true });
      await app.services.payouts.createPersonal(m, { amount: b.amount, payout_account_id: b.payout_account_id, order_id: b.order_id || undefined }, payoutCreateAudit(cabinetActor(req)));
      return reply.redirect(`${BASE}/payouts?ok=payouts.created`, 303);
    } catch (e) {
      const errors = formErrors(req, e, {
        invalid_amount: 'amount', balance_not_enough: 'amount', daily_payout_limit_exceeded: 'amount',
        monthly_payout_limit_exceeded: 'amount', payout_account_not_found: 'payout_account_id',
        payout_account_banned: 'payout_account_id', direction_not_available: 'payout_account_id',
      });
      reply.status(422);
      return newForm(req, reply, { errors, values: b });
    }
  });
}
