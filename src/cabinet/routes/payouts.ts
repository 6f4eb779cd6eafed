import type { FastifyInstance } from 'fastify';
import { assertMerchantUsable } from '../../domain/merchant/merchant-guard.js';
import { actingMerchant, cabinetActor, BASE, formErrors, merchantIdOf, render, cabinetTz } from '../context.js';
import { formBody } from '../../lib/form-body.js';
import { filterQuery, listFilters, PAGE_SIZE } from '../paging.js';
import { csvFormat, exportFilename, sendCsv } from '../export.js';
import { peopleAmountText } from '../../lib/amount-text.js';
import { parsePersonal } from '../../domain/payout/payout.input.js';
import { payoutCreateAudit } from '../../domain/audit-steps.js';

const STATUSES = ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'] as const;

export default async function payoutRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, STATUSES);
    const { rows, hasNext } = await app.services.merchantLists.payouts(merchantId, f, { page: f.page, size: PAGE_SIZE });
    return render(req, reply, 'payouts', {
      nav: 'payouts', payouts: rows, hasNext, f, statuses: STATUSES,
      search: true, exportUrl: `${BASE}/payouts/export.csv${filterQuery(f)}`,
    });
  });

  app.get('/export.csv', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, STATUSES);
    const { t } = req.cabinet;
    const c = csvFormat(req.cabinet.lang, cabinetTz(req));
    async function* rows() {
      for await (const p of app.services.merchantLists.payoutsForExport(merchantId, f)) {
        yield [p.id, p.orderId ?? '', t(`status.${p.status}`), c.num(p.amount), c.num(p.commission), p.currency, p.accountMasked,
          p.cardHolder ?? '', isFailed(p.status) ? p.failureReason ?? '' : '', c.date(p.createdAt), c.date(p.finishedAt)];
      }
    }
    return sendCsv(req, reply, exportFilename('payouts', f), [
      t('common.id'), t('payouts.order_id'), t('common.status'), t('common.amount'), t('payouts.commission'), t('common.currency'),
      t('acc.account'), t('acc.card_holder'), t('common.failure_reason'), t('common.created'), t('payments.finished'),
    ], rows());
  });

  const newForm = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const [accounts, balances] = await Promise.all([
      app.services.payoutAccounts.list(merchantId),
      app.services.merchants.balances(merchantId),
    ]);
    const balance = balances.find((b) => b.currency === 'RUB') ?? null;
    return render(req, reply, 'payout-new', { nav: 'payouts', accounts: accounts.filter((a) => a.status === 'ACTIVE'), balance, ...data });
  };

  app.get('/new', { schema: { hide: true } }, async (req, reply) => newForm(req, reply));

  // Same service as POST /api/v1/payout/personal/create (limits, split, moderation, ledger lock).
  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    // Test mode: a test payout from the test balance to a test payout account, through the sandbox.
    const m = actingMerchant(req);
    try {
      assertMerchantUsable(m, { subscription: true });
      // "1 500,00" as people type it (lib/amount-text.ts), then the API's own rules.
      const input = parsePersonal({ amount: peopleAmountText(b.amount, req.cabinet.lang), payout_account_id: b.payout_account_id, order_id: b.order_id || undefined });
      await app.services.payouts.createPersonal(m, input, payoutCreateAudit(cabinetActor(req)));
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

  // One payout: everything the list shows, plus when it finished and why it failed.
  app.get('/:id', { schema: { hide: true } }, async (req, reply) => {
    const payout = await app.services.merchantLists.payout(merchantIdOf(req), (req.params as { id: string }).id);
    return render(req, reply, 'payout', { nav: 'payouts', payout, failed: isFailed(payout.status) });
  });
}

const isFailed = (s: string) => s === 'FAIL' || s === 'ERROR' || s === 'DECLINED';
