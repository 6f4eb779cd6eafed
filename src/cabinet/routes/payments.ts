import type { FastifyInstance } from 'fastify';
import { isMoneyReceived } from '../../kernel/statuses.js';
import { paymentError } from '../../domain/payment/payment-errors.js';
import { UnauthorizedActionError } from '../../errors.js';
import { defineInput, v } from '../../lib/input.js';
import { actingMerchant, BASE, cabinetActor, formErrors, liveMerchantIdOf, merchantIdOf, paymentStatusText, render, cabinetTz } from '../context.js';
import { holdReadingOf } from '../../domain/payment/hold-reading.js';
import { formBody } from '../../lib/form-body.js';
import { filterQuery, listFilters, PAGE_SIZE } from '../paging.js';
import { csvFormat, exportFilename, sendCsv } from '../export.js';
import { peopleAmountText } from '../../lib/amount-text.js';
import { holdAudit, refundAudit } from '../../domain/audit-steps.js';

const STATUSES = ['NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL'] as const;
const REFUND_STATUSES = ['NEW', 'PROCESS', 'SUCCESS', 'FAIL'] as const;

// The same fields as POST /api/v1/refund/{full,partial}/create.
const captureInput = defineInput({ amount: v.decimal({}) });
const refundInput = defineInput({ mode: v.enumOf(['full', 'partial'] as const, { required: true }) });
const partialInput = defineInput({ amount: v.decimal({ required: true }) });

export default async function paymentRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, STATUSES);
    const [{ rows, hasNext }, shops] = await Promise.all([
      app.services.merchantLists.payments(merchantId, f, { page: f.page, size: PAGE_SIZE }),
      app.services.shops.list(liveMerchantIdOf(req)),
    ]);
    return render(req, reply, 'payments', {
      nav: 'payments', payments: rows, hasNext, f, shops, statuses: STATUSES,
      search: true, exportUrl: `${BASE}/payments/export.csv${filterQuery(f)}`,
    });
  });

  // The list's rows (same filters and search), every page of them, oldest first.
  app.get('/export.csv', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, STATUSES);
    const { t } = req.cabinet;
    const c = csvFormat(req.cabinet.lang, cabinetTz(req));
    async function* rows() {
      for await (const p of app.services.merchantLists.paymentsForExport(merchantId, f)) {
        // Why a FAIL failed: the API's error_code, and its error_message in the cabinet's language (empty otherwise).
        const err = holdReadingOf(p) === 'CANCELLED_BY_SHOP' ? { code: null, message: null } : paymentError(p.status, p.failureReason, req.cabinet.lang);
        yield [p.id, p.billId, p.bill.orderId ?? '', paymentStatusText(t, p), c.num(p.amount), c.num(p.amountReceived), p.currencyIn,
          c.num(p.commission), c.num(p.refundedAmount), p.method, p.fromCard ?? '', p.payerEmail ?? p.bill.payerEmail ?? '', p.shop.name,
          c.date(p.createdAt), c.date(p.finishedAt), err.code ?? '', err.message ?? ''];
      }
    }
    return sendCsv(req, reply, exportFilename('payments', f), [
      t('common.id'), t('payments.bill'), t('bills.order_id'), t('common.status'), t('common.amount'), t('payments.received'),
      t('common.currency'), t('payments.commission'), t('payments.refunded'), t('payments.method'), t('payments.card'),
      t('payments.payer_email'), t('common.shop'), t('common.created'), t('payments.finished'), t('payments.error_code'),
      t('payments.error_message'),
    ], rows());
  });

  // Refunds of the merchant (filters: refund status, the payment's shop, dates, search).
  app.get('/refunds', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, REFUND_STATUSES);
    const [{ rows, hasNext }, shops] = await Promise.all([
      app.services.merchantLists.refunds(merchantId, f, { page: f.page, size: PAGE_SIZE }),
      app.services.shops.list(liveMerchantIdOf(req)),
    ]);
    return render(req, reply, 'refunds', {
      nav: 'refunds', refunds: rows, hasNext, f, shops, statuses: REFUND_STATUSES,
      search: true, exportUrl: `${BASE}/payments/refunds/export.csv${filterQuery(f)}`,
    });
  });

  app.get('/refunds/export.csv', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, REFUND_STATUSES);
    const { t } = req.cabinet;
    const c = csvFormat(req.cabinet.lang, cabinetTz(req));
    async function* rows() {
      for await (const r of app.services.merchantLists.refundsForExport(merchantId, f)) {
        yield [r.id, r.paymentId, r.payment.billId, r.payment.bill.orderId ?? '', t(`status.${r.status}`), c.num(r.amount), r.currency,
          r.failureReason ?? '', r.payment.shop.name, c.date(r.createdAt), c.date(r.finishedAt)];
      }
    }
    return sendCsv(req, reply, exportFilename('refunds', f), [
      t('common.id'), t('payments.payment_col'), t('payments.bill'), t('bills.order_id'), t('common.status'), t('common.amount'),
      t('common.currency'), t('common.failure_reason'), t('common.shop'), t('common.created'), t('payments.finished'),
    ], rows());
  });

  const show = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], id: string, data: Record<string, unknown> = {}) => {
    const merchantId = merchantIdOf(req);
    const payment = await app.services.merchantLists.payment(merchantId, id);
    const refunds = await app.services.refunds.listForPayment(merchantId, id);
    const refundable = isMoneyReceived(payment.status)
      && payment.accountAmount !== null && payment.accountAmount.gt(payment.refundedAmount);
    // Two-stage (docs/adr/0073-two-stage-payments.md): what it holds, to capture or cancel.
    const held = await app.services.payments.capturable(merchantId, id);
    return render(req, reply, 'payment', {
      nav: 'payments', payment, refunds, refundable, held, grant: req.cabinet.session!.merchant.grantRefunds, ...data,
    });
  };

  app.get('/:id', { schema: { hide: true } }, async (req, reply) => show(req, reply, (req.params as { id: string }).id));

  // Two-stage: the same service as the operator API's capture and cancel (the owner's: money in).
  app.post('/:id/capture', { schema: { hide: true } }, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const b = formBody(req);
    try {
      const raw = typeof b.amount === 'string' && b.amount.trim() !== '' ? peopleAmountText(b.amount, req.cabinet.lang) : undefined;
      const amount = captureInput.parse({ amount: raw }).amount ?? null;
      await app.services.payments.captureHold(id, amount, holdAudit(cabinetActor(req)), merchantIdOf(req));
      return reply.redirect(`${BASE}/payments/${encodeURIComponent(id)}?ok=payments.captured`, 303);
    } catch (e) {
      reply.status(422);
      return show(req, reply, id, { errors: formErrors(req, e, {}), values: b });
    }
  });

  app.post('/:id/cancel', { schema: { hide: true } }, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    try {
      await app.services.payments.cancelHold(id, holdAudit(cabinetActor(req)), merchantIdOf(req));
      return reply.redirect(`${BASE}/payments/${encodeURIComponent(id)}?ok=payments.hold_canceled`, 303);
    } catch (e) {
      reply.status(422);
      return show(req, reply, id, { errors: formErrors(req, e, {}) });
    }
  });

  // Same service (grant, bounds, ledger) as the refund endpoints of the API.
  app.post('/:id/refund', { schema: { hide: true } }, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const b = formBody(req);
    // Test mode: a refund of a test payment, from the test balance.
    const m = actingMerchant(req);
    try {
      const p = refundInput.parse(b);
      const audited = refundAudit(cabinetActor(req));
      if (p.mode === 'full') await app.services.refunds.createFull(m, id, audited);
      else {
        // "1 500,00" as people type it (lib/amount-text.ts), then the API's own rules.
        const amount = partialInput.parse({ ...b, amount: peopleAmountText(b.amount, req.cabinet.lang) }).amount!;
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
