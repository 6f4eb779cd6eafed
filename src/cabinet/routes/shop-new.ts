import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defineInput, v } from '../../lib/input.js';
import { shopAudit } from '../../domain/audit-steps.js';
import { BASE, cabinetActor, formErrors, liveMerchantIdOf, render } from '../context.js';
import { formBody } from '../../lib/form-body.js';
import type { Lang } from '../../lib/i18n.js';

const CURRENCIES = ['RUB', 'USD', 'EUR'] as const;
const input = defineInput({
  name: v.string({ required: true, max: 255 }),
  default_currency: v.enumOf(CURRENCIES, { required: true }),
});

// The page's words (kept beside the page, as the team page does).
const WORDS: Record<Lang, Record<string, string>> = {
  en: {
    title: 'New shop', text: 'A shop is where bills are issued from: its postbacks, Success and Fail pages and receipts are set on its page once it exists.',
    name: 'Shop name', currency: 'Default currency', submit: 'Create shop', cancel: 'Cancel', add: 'New shop',
  },
  ru: {
    title: 'Новый магазин', text: 'Магазин — то, от чьего имени выставляются счета: его уведомления, страницы успеха и ошибки и чеки настраиваются на его странице после создания.',
    name: 'Название магазина', currency: 'Валюта по умолчанию', submit: 'Создать магазин', cancel: 'Отмена', add: 'Новый магазин',
  },
};
export const shopWords = (lang: Lang) => (k: string) => WORDS[lang][k] ?? k;

/**
 * Shop creation in the cabinet (the owner's: src/cabinet/roles.ts): the shop
 * service the operator API uses, audited as the cabinet account; then the shop's own page.
 */
export default async function shopCreateRoutes(app: FastifyInstance): Promise<void> {
  const form = (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) =>
    render(req, reply, 'shop-new', { nav: 'shops', w: shopWords(req.cabinet.lang), currencies: CURRENCIES, values: { default_currency: 'RUB' }, ...data });

  app.get('/new', { schema: { hide: true } }, async (req, reply) => form(req, reply));

  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    try {
      const p = input.parse({ name: b.name?.trim(), default_currency: b.default_currency });
      const shop = await app.services.shops.create(liveMerchantIdOf(req), { name: p.name!, defaultCurrency: p.default_currency! },
        shopAudit(app.config, cabinetActor(req), 'shop.create'));
      return reply.redirect(`${BASE}/shops/${encodeURIComponent(shop.id)}?ok=common.saved`, 303);
    } catch (e) {
      reply.status(422);
      return form(req, reply, { errors: formErrors(req, e), values: b });
    }
  });
}
