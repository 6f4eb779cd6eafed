import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { NotFoundError } from '../../errors.js';
import type { ShopPatch } from '../../domain/shop/shop.service.js';
import { bodyObject, isIdLike } from '../../lib/input-fields.js';
import { shopView } from '../../domain/operator-views.js';
import { actorOf } from '../../audit/audit.js';
import { shopAudit } from '../../domain/audit-steps.js';
import { FFD_VERSIONS, PAYMENT_MODES, PAYMENT_SUBJECTS, TAX_SYSTEM_CODES, VAT_CODES } from '../../domain/receipt/fiscal.js';
import { list, ok, ShopSchema } from './schemas.js';

const IdParams = Type.Object({ id: Type.String() });
const CURRENCIES = ['RUB', 'USD', 'EUR'] as const;

const fields = (nameRequired: boolean) => defineInput({
  name: v.string({ required: nameRequired, max: 255 }),
  enabled: v.bool(),
  default_currency: v.enumOf(CURRENCIES),
  result_url: v.string({ max: 2048 }),
  success_url: v.string({ max: 2048 }),
  fail_url: v.string({ max: 2048 }),
});
const CreateInput = fields(true);
const PatchInput = fields(false);

/** 54-FZ settings (docs/adr/0026-fiscal-receipts.md); checked by the shop service, 422 per field as `fiscalization.<field>`. */
const FiscalizationSchema = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  // No enum: 4 (ENVD) gets its own 422 from the shop service, naming why (fiscal.ts).
  tax_system_code: Type.Optional(Type.Integer({ description: `YooKassa tax_system_code, one of ${TAX_SYSTEM_CODES.join(', ')} (T-Bank Taxation osn..patent; 4, ENVD, abolished)` })),
  vat_code: Type.Optional(Type.Integer({ enum: [...VAT_CODES], description: 'YooKassa vat_code 1..12 (T-Bank Tax none..vat122; docs/connectors/fiscal.md)' })),
  ffd_version: Type.Optional(Type.String({ enum: [...FFD_VERSIONS], description: 'The cash register\'s format: 1.2 sends each line\'s unit (T-Bank MeasurementUnit, YooKassa measure)' })),
  payment_subject: Type.Optional(Type.String({ enum: [...PAYMENT_SUBJECTS] })),
  payment_mode: Type.Optional(Type.String({ enum: [...PAYMENT_MODES] })),
}, { description: 'Fiscal receipts: fields not sent keep their value; enabled needs tax_system_code and vat_code' });
const withFiscal = (schema: typeof CreateInput.schema) => Type.Composite([schema, Type.Object({ fiscalization: Type.Optional(FiscalizationSchema) })]);

const URLS = [['result_url', 'resultUrl'], ['success_url', 'successUrl'], ['fail_url', 'failUrl']] as const;

/** Parsed shop fields; a URL sent as null or "" is cleared (the guard runs in the service). */
function toShopPatch(raw: Record<string, unknown>, body: Record<string, unknown>, nameRequired: boolean): ShopPatch {
  const spec = nameRequired ? CreateInput : PatchInput;
  const p = spec.parse(raw);
  const out: ShopPatch = {};
  if (p.name !== undefined) out.name = p.name;
  if (p.enabled !== undefined) out.enabled = p.enabled;
  if (p.default_currency !== undefined) out.defaultCurrency = p.default_currency;
  for (const [field, key] of URLS) {
    if (p[field] !== undefined) out[key] = p[field];
    else if (Object.prototype.hasOwnProperty.call(body, field) && (body[field] === null || body[field] === '')) out[key] = null;
  }
  if (raw.fiscalization !== undefined) out.fiscalization = { raw: raw.fiscalization };
  return out;
}

const tags = ['admin'];
const One = (description: string) => ok(ShopSchema.properties, description);

/** Operator API: shops (Result/Success/Fail URLs through the outbound URL guard). */
export default async function shopAdminRoutes(app: FastifyInstance): Promise<void> {
  const { merchants, shops } = app.services;

  app.post<{ Params: { id: string } }>('/merchants/:id/shops', {
    schema: { tags, summary: 'Create a shop for the merchant', params: IdParams, body: withFiscal(CreateInput.schema), response: { 201: One('The shop') } },
  }, async (req, reply) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Merchant not found.');
    const m = await merchants.get(req.params.id);
    const input = toShopPatch(requestInput(req), bodyObject(req), true);
    const shop = await shops.create(m.id, { ...input, name: input.name! }, shopAudit(app.config, actorOf(req), 'shop.create'));
    return reply.status(201).send({ success: true, ...shopView(app.config, shop) });
  });

  app.get<{ Params: { id: string } }>('/merchants/:id/shops', {
    schema: { tags, summary: "The merchant's shops", params: IdParams, response: { 200: list(ShopSchema, 'The shops') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Merchant not found.');
    const m = await merchants.get(req.params.id);
    return { success: true, data: (await shops.list(m.id)).map((s) => shopView(app.config, s)) };
  });

  app.get<{ Params: { id: string } }>('/shops/:id', {
    schema: { tags, summary: 'A shop', params: IdParams, response: { 200: One('The shop') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Shop not found.');
    return { success: true, ...shopView(app.config, await shops.getAny(req.params.id)) };
  });

  app.patch<{ Params: { id: string } }>('/shops/:id', {
    schema: { tags, summary: 'Change shop fields; null or "" clears a URL; fiscalization fields not sent keep their value', params: IdParams, body: withFiscal(PatchInput.schema), response: { 200: One('The shop as changed') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Shop not found.');
    const current = await shops.getAny(req.params.id);
    const input = toShopPatch(requestInput(req), bodyObject(req), false);
    const shop = await shops.update(current.merchantId, current.id, input, shopAudit(app.config, actorOf(req), 'shop.update'));
    return { success: true, ...shopView(app.config, shop) };
  });
}
