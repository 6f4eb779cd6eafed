import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actorOf } from '../../audit/audit.js';
import { shopAudit } from '../../domain/audit-steps.js';
import type { ShopPatch } from '../../domain/shop/shop.service.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { formBody } from '../../lib/form-body.js';
import { isIdLike } from '../../lib/input-fields.js';
import { BASE, done, render } from '../context.js';
import { FFD_VERSIONS, fiscalJson, fiscalOf, parseFiscalization, PAYMENT_MODES, PAYMENT_SUBJECTS, TAX_SYSTEM_CODES, VAT_CODES, type FiscalSettings } from '../../domain/receipt/fiscal.js';
import { FISCAL_WORDS, fiscalWord } from '../../domain/receipt/fiscal-words.js';

const CURRENCIES = ['RUB', 'USD', 'EUR'] as const;
const URLS = [['result_url', 'resultUrl'], ['success_url', 'successUrl'], ['fail_url', 'failUrl']] as const;

/** The console form to the shop service's patch: every field of the form is sent; an empty URL clears it. */
function patchOf(b: Record<string, string>, current: FiscalSettings | null): ShopPatch {
  const errors: Record<string, string[]> = {};
  const name = (b.name ?? '').trim();
  if (!name || name.length > 255) errors.name = ['Required, at most 255 characters.'];
  const currency = b.default_currency as (typeof CURRENCIES)[number];
  if (!CURRENCIES.includes(currency)) errors.default_currency = ['Choose RUB, USD or EUR.'];
  const out: ShopPatch = { name, enabled: b.enabled === 'true', defaultCurrency: currency };
  for (const [field, key] of URLS) {
    const v = (b[field] ?? '').trim();
    if (v.length > 2048) errors[field] = ['At most 2048 characters.'];
    out[key] = v === '' ? null : v;
  }
  // 54-FZ receipts: checked by the shop service as the operator API's `fiscalization` (ENVD refused by name).
  const raw = {
    enabled: b.fiscal_enabled === 'true', tax_system_code: b.tax_system_code ?? '', vat_code: b.vat_code ?? '',
    payment_subject: b.payment_subject, payment_mode: b.payment_mode, ffd_version: b.ffd_version,
  };
  if (Object.keys(errors).length > 0) {
    // The same check ahead, so one answer names every bad field of the form.
    try { parseFiscalization(raw, current, ''); } catch (e) { if (e instanceof ValidationError) Object.assign(errors, e.errors); else throw e; }
    throw new ValidationError(errors);
  }
  out.fiscalization = { raw, prefix: '' };
  return out;
}

/** The form's fields by the labels the page shows them with (an error names the label, not the field). */
const W = FISCAL_WORDS.en;
const LABELS: Record<string, string> = {
  name: 'Name', default_currency: 'Default currency', enabled: 'Takes payments', result_url: 'Result URL', success_url: 'Success URL', fail_url: 'Fail URL',
  fiscal_enabled: W.labels.enabled, tax_system_code: W.labels.tax_system, vat_code: W.labels.vat,
  payment_subject: W.labels.payment_subject, payment_mode: W.labels.payment_mode, ffd_version: W.labels.ffd_version,
};
/**
 * The shop service's messages that name a field by its API name ("The vat code field is required
 * when fiscalization is enabled.") said for a form that shows the label next to them; the others
 * (ENVD's reason, the URL guard's) are kept as they are.
 */
function saidByLabel(errors: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, list] of Object.entries(errors)) {
    out[k] = list.map((m) => (/field is required when fiscalization is enabled\.$/.test(m) ? 'Required when receipts are sent: choose one.'
      : /^The [\w ]+ must be one of [\w., ]+\.$/.test(m) ? 'Choose one of the listed values.' : m));
  }
  return out;
}
const FISCAL_OPTIONS = { tax: TAX_SYSTEM_CODES, vat: VAT_CODES, subject: PAYMENT_SUBJECTS, mode: PAYMENT_MODES, ffd: FFD_VERSIONS };

/**
 * The console's shop page: its settings, the shop's Result, Success and Fail URLs and its 54-FZ
 * receipts, each code in words (read by every role), changed by an admin through the operator
 * API's shop service (the outbound URL guard, the fiscal checks, the `shop.update` audit entry).
 */
export default async function consoleShopRoutes(app: FastifyInstance): Promise<void> {
  const { shops, merchants } = app.services;
  const load = async (req: FastifyRequest) => {
    const id = (req.params as { id: string }).id;
    if (!isIdLike(id)) throw new NotFoundError('Shop not found.');
    return shops.getAny(id);
  };
  const page = async (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const s = await load(req);
    const m = await merchants.get(s.merchantId);
    return render(req, reply, 'shop', {
      nav: 'merchants', s, merchant: { id: m.id, name: m.name }, currencies: CURRENCIES,
      fiscal: fiscalJson(fiscalOf(s.fiscalization)), fiscalOptions: FISCAL_OPTIONS, fw: W, word: (kind: Parameters<typeof fiscalWord>[1], c: string | number | null) => fiscalWord('en', kind, c),
      labels: LABELS, ...data,
    });
  };

  app.get('/shops/:id', { schema: { hide: true } }, async (req, reply) => page(req, reply));

  app.post('/shops/:id', { config: { permission: 'admin' }, schema: { hide: true } }, async (req, reply) => {
    const s = await load(req);
    const b = formBody(req);
    try {
      await shops.update(s.merchantId, s.id, patchOf(b, fiscalOf(s.fiscalization)), shopAudit(app.config, actorOf(req), 'shop.update'));
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      reply.status(422);
      return page(req, reply, { errors: saidByLabel(e.errors), values: b });
    }
    return done(reply, `${BASE}/shops/${s.id}`, 'Saved.');
  });
}
