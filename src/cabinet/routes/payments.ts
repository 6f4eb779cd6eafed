import type { FastifyInstance } from 'fastify';
import { isMoneyReceived } from '../../domain/statuses.js';
import { NotFoundError, UnauthorizedActionError } from '../../http/errors.js';
import { defineInput, v } from '../../http/input.js';
import { cabinetActor, BASE, formBody, formErrors, merchantIdOf, render } from '../context.js';
import { listFilters, listWhere, pageArgs, PAGE_SIZE } from '../paging.js';
import { refundAudit } from '../../audit/steps.js';

const STATUSES = ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'] as const;

// The same fields as POST /api/v1/refund/{full,partial}/create.
const refundInput = defineInput({ mode: v.enumOf(['full', 'partial'] as const, { required: true }) });
const partialInput = defineInput({ amount: v.decimal({ required: true }) });

export default async function paymentRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, STATUSES);
    const where = listWhere<(typeof STATUSES)[number]>(merchantId, f);
    const [rows, shops] = await Promise.all([
      app.db.prisma.payment.findMany({ where, ...pageArgs(f), include: { shop: { select: { name: true } } } }),
      app.services.shops.list(merchantId),
    ]);
    return render(req, reply, 'payments', {
      nav: 'payments', payments: rows.slice(0, PAGE_SIZE), hasNext: rows.length > PAGE_SIZE, f, shops, statuses: STATUSES,
    });
  });

  const show = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], id: string, data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const payment = await app.db.prisma.payment.findFirst({ where: { id, merchantId }, include: { shop: { select: { name: true } } } });
    if (!payment) throw new NotFoundError();
    const refunds = await app.services.refunds.listForPayment(merchantId, id);
    const refundable = isMoneyReceived(payment.status)
      && payment.accountAmount !== null && payment.accountAmount.gt(payment.refundedAmount);
    return render(req, reply, 'payment', {
      nav: 'payments', payment, refunds, refundable, grant: req.cabinet.session!.merchant.grantRefunds, ...data,
    });
  };

  app.get('/:id', { schema: { hide: true } }, async (req, reply) => show(req, reply, (req.params as { id: string }).id));

  // Same service (grant, bounds, ledger) as the refund endpoints of the API.
  app.post('/:id/refund', { schema: { hide: true } }, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const b = formBody(req);
    const m = req.cabinet.session!.merchant;
    try {
      const p = refundInput.parse(b);
      const audited = refundAudit(cabinetActor(req));
      if (p.mode === 'full') await app.services.refunds.createFull(m, id, audited);
      else {
        const amount = partialInput.parse(b).amount!;
        await app.services.refunds.createPartial(m, id, amount, audited);
      }
      return reply.redirect(`${BASE}/payments/${encodeURIComponent(id)}?ok=payments.refund_created`, 303);
    } catch (e) {
      const errors = formErrors(req, e, { balance_not_enough: 'amount' });
      if (errors.fields.payment_id && !errors.fields.amount) { errors.top = errors.fields.payment_id; }
      reply.status(e instanceof UnauthorizedActionError ? 403 : 422);
      return show(req, reply, id, { errors, values: b });
    }
  });
}
