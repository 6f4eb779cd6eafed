import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../errors.js';
import { assertMerchantUsable } from '../../domain/merchant/merchant-guard.js';
import { billCreateInput } from '../../domain/bill/bill.input.js';
import { BASE, cabinetActor, formErrors, liveMerchantIdOf, merchantIdOf, render } from '../context.js';
import { formBody } from '../../lib/form-body.js';
import { listFilters, PAGE_SIZE } from '../paging.js';
import { peopleAmountText } from '../../lib/amount-text.js';
import { billToggleAudit } from '../../domain/audit-steps.js';
import { isBillExpired } from '../../domain/bill/bill.states.js';

const STATUSES = ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'] as const;

export default async function billRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, STATUSES);
    const [{ rows, hasNext }, shops] = await Promise.all([
      app.services.merchantLists.bills(merchantId, f, { page: f.page, size: PAGE_SIZE }),
      app.services.shops.list(liveMerchantIdOf(req)),
    ]);
    return render(req, reply, 'bills', {
      nav: 'bills', bills: rows.map((b) => ({ ...b, expired: isBillExpired(b) })), hasNext, f, shops, statuses: STATUSES, search: true,
    });
  });

  const newForm = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const shops = await app.services.shops.list(liveMerchantIdOf(req));
    return render(req, reply, 'bill-new', { nav: 'bills', shops, ...data });
  };

  app.get('/new', { schema: { hide: true } }, async (req, reply) => newForm(req, reply));

  // Same input rules and the same service as POST /api/v1/bill/create.
  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    try {
      // The API's auth hook checks the subscription for bill/create; so does the cabinet.
      assertMerchantUsable(req.cabinet.session!.merchant, { subscription: true });
      // "1 500,00" as people type it (lib/amount-text.ts), then the API's own rules.
      const p = billCreateInput.parse({ ...b, amount: peopleAmountText(b.amount, req.cabinet.lang) });
      const bill = await app.services.bills.create({ id: merchantIdOf(req) }, {
        amount: p.amount!, shopId: p.shop_id!, orderId: p.order_id, description: p.description,
        type: p.type === 'multi' ? 'MULTI' : 'NORMAL', currencyIn: p.currency_in, custom: p.custom,
        payerPaysCommission: p.payer_pays_commission, name: p.name, paymentMethod: p.payment_method,
      });
      return reply.redirect(`${BASE}/bills/${encodeURIComponent(bill.id)}?ok=bills.created`, 303);
    } catch (e) {
      const errors = formErrors(req, e, {
        invalid_amount: 'amount', shop_not_found: 'shop_id', shop_not_enabled: 'shop_id', access_denied: 'shop_id',
        'rate-not-found': 'currency_in',
      });
      reply.status(422);
      return newForm(req, reply, { errors, values: b });
    }
  });

  const showBill = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], id: string, data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const { bill, payments } = await app.services.merchantLists.bill(merchantId, id, 200);
    return render(req, reply, 'bill', {
      nav: 'bills', bill: { ...bill, expired: isBillExpired(bill) }, payments, pageUrl: app.services.bills.pageUrl(bill.id), qrUrl: app.services.bills.qrUrl(bill.id), ...data,
    });
  };

  app.get('/:id', { schema: { hide: true } }, async (req, reply) => showBill(req, reply, (req.params as { id: string }).id));

  // Same service as POST /api/v1/bill/toggle_activity (bill_is_finished etc. shown on the page).
  app.post('/:id/toggle', { schema: { hide: true } }, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const b = formBody(req);
    try {
      assertMerchantUsable(req.cabinet.session!.merchant, { subscription: true });
      await app.services.bills.toggle({ id: merchantIdOf(req) }, { id, active: b.active === '1' }, billToggleAudit(cabinetActor(req)));
      return reply.redirect(`${BASE}/bills/${encodeURIComponent(id)}?ok=bills.toggled`, 303);
    } catch (e) {
      const errors = formErrors(req, e);
      if (errors.top === req.cabinet.t('error.bill_not_found')) throw new NotFoundError();
      reply.status(422);
      return showBill(req, reply, id, { errors });
    }
  });
}
