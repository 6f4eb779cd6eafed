import type { FastifyInstance } from 'fastify';
import { defineInput, v } from '../../lib/input.js';
import { BASE, cabinetActor, formErrors, liveMerchantIdOf as merchantIdOf, render } from '../context.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import { testPostback, shopAudit } from '../../domain/audit-steps.js';
import { shopWords } from './shop-new.js';
import { FFD_VERSIONS, fiscalJson, fiscalOf, PAYMENT_MODES, PAYMENT_SUBJECTS, TAX_SYSTEM_CODES, VAT_CODES } from '../../domain/receipt/fiscal.js';

const settingsInput = defineInput({
  default_currency: v.enumOf(['RUB', 'USD', 'EUR'] as const, { required: true }),
  result_url: v.string({ max: 2048 }),
  success_url: v.string({ max: 2048 }),
  fail_url: v.string({ max: 2048 }),
});

export default async function shopRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const shops = await app.services.shops.list(merchantIdOf(req));
    return render(req, reply, 'shops', { nav: 'shops', shops, w: shopWords(req.cabinet.lang) });
  });

  const show = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    // NotFoundError for another merchant's shop: the cabinet answers 404.
    const shop = await app.services.shops.get(merchantIdOf(req), (req.params as { id: string }).id);
    return render(req, reply, 'shop', {
      nav: 'shops', shop, fiscal: fiscalJson(fiscalOf(shop.fiscalization)),
      fiscalOptions: { taxSystems: TAX_SYSTEM_CODES, vatCodes: VAT_CODES, subjects: PAYMENT_SUBJECTS, modes: PAYMENT_MODES, ffdVersions: FFD_VERSIONS }, ...data,
    });
  };

  // `?test=<event id>`: the answer of a test postback sent from this page, read from the
  // delivery log (a reload shows it again and sends nothing).
  app.get('/:id', { schema: { hide: true } }, async (req, reply) => {
    const testId = queryOf(req).test;
    if (!testId) return show(req, reply);
    const event = await app.services.outbox.get(testId, merchantIdOf(req)).catch(() => null);
    const test = event && event.kind === 'TEST_POSTBACK' ? { delivered: event.status === 'delivered', event, attempt: event.attempts.at(-1) ?? null } : null;
    return show(req, reply, { test });
  });

  // Same service (ownership, the outbound URL guard of DESIGN.md) as the operator API.
  app.post('/:id', { schema: { hide: true } }, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const b = formBody(req);
    try {
      const p = settingsInput.parse(b);
      await app.services.shops.update(merchantIdOf(req), id, {
        defaultCurrency: p.default_currency, resultUrl: p.result_url ?? null, successUrl: p.success_url ?? null, failUrl: p.fail_url ?? null,
        // 54-FZ receipts: the same checks as the operator API's (errors next to each field).
        fiscalization: {
          raw: {
            enabled: b.fiscal_enabled === '1', tax_system_code: b.tax_system_code ?? '', vat_code: b.vat_code ?? '',
            payment_subject: b.payment_subject, payment_mode: b.payment_mode, ffd_version: b.ffd_version,
          },
          prefix: '',
        },
      }, shopAudit(app.config, cabinetActor(req), 'shop.update'));
      return reply.redirect(`${BASE}/shops/${encodeURIComponent(id)}?ok=common.saved`, 303);
    } catch (e) {
      reply.status(422);
      return show(req, reply, { errors: formErrors(req, e), values: b });
    }
  });

  // One attempt, now, outside any transaction; the receiver's answer is shown.
  app.post('/:id/test-postback', { schema: { hide: true } }, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    try {
      const r = await testPostback(app.services, cabinetActor(req), merchantIdOf(req), id);
      return reply.redirect(`${BASE}/shops/${encodeURIComponent(id)}?test=${r.event.id}`, 303);
    } catch (e) {
      reply.status(422);
      return show(req, reply, { errors: formErrors(req, e) });
    }
  });
}
