import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { pageView, type PageCtx } from './render.js';
import { negotiateLang, type Lang } from '../lib/i18n.js';
import { formatMoney } from '../lib/money-format.js';
import { readNumber } from '../lib/amount-text.js';
import { SANDBOX_SHOP_PATH } from '../domain/shop/sandbox-shop.js';

/**
 * A built-in receiver standing in for the demo merchant's shop, so a
 * newcomer's first payment shows a delivered postback in the cabinet's webhook log and a
 * return to the shop: the Result URL answers `OK<InvId>` with 200, the Success and Fail URLs a
 * small page. Registered only where private webhook URLs are allowed (the sandbox/dev profile):
 * it stores nothing and checks no signature (a real shop must, see the README).
 */
export function registerSandboxShop(app: FastifyInstance): void {
  const fieldsOf = (body: unknown, query: unknown): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const src of [query, body]) {
      if (src && typeof src === 'object') for (const [k, v] of Object.entries(src)) if (typeof v === 'string') out[k] = v.slice(0, 200);
    }
    return out;
  };
  app.post(`${SANDBOX_SHOP_PATH}/result`, { schema: { hide: true } }, async (req, reply) => {
    const f = fieldsOf(req.body, req.query);
    return reply.type('text/plain; charset=utf-8').send(`OK${f.InvId ?? ''}`);
  });
  for (const outcome of ['success', 'fail'] as const) {
    app.route({
      method: ['GET', 'POST'], url: `${SANDBOX_SHOP_PATH}/${outcome}`, schema: { hide: true },
      handler: async (req, reply) => {
        const f = fieldsOf(req.body, req.query);
        const ctx: PageCtx = { lang: negotiateLang(req.headers['accept-language'], f.lang), nonce: randomBytes(16).toString('hex'), sandbox: true, profile: app.config.profile };
        reply.header('content-security-policy', `default-src 'none'; style-src 'nonce-${ctx.nonce}'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`).header('cache-control', 'no-store');
        return reply.type('text/html; charset=utf-8').send(shopPage(ctx, outcome, f));
      },
    });
  }
}

const WORDS: Record<Lang, Record<string, string>> = {
  en: {
    shop: 'Demo shop', note: 'Sandbox: this page stands in for your shop',
    success: 'Thank you! The payment is received.', fail: 'The payment did not go through.',
    successText: 'Your shop would now show the order as paid. Its postback went to the Result URL and is in the cabinet.',
    failText: 'Your shop would now offer the payer another try. No money was taken.',
    InvId: 'Order', OutSum: 'Amount', TrsId: 'Payment', log: 'Open the webhook log', other: 'Русский',
  },
  ru: {
    shop: 'Демо-магазин', note: 'Песочница: эта страница заменяет ваш магазин',
    success: 'Спасибо! Оплата получена.', fail: 'Оплата не прошла.',
    successText: 'Здесь ваш магазин показал бы заказ оплаченным. Уведомление ушло на Result URL и видно в кабинете.',
    failText: 'Здесь ваш магазин предложил бы плательщику попробовать ещё раз. Деньги не списаны.',
    InvId: 'Заказ', OutSum: 'Сумма', TrsId: 'Платёж', log: 'Открыть журнал уведомлений', other: 'English',
  },
};

/** The stand-in shop's Success or Fail page, styled as the payer's pages, in the payer's language. */
function shopPage(ctx: PageCtx, outcome: 'success' | 'fail', f: Record<string, string>): string {
  const w = WORDS[ctx.lang];
  const sum = f.OutSum ? readNumber(f.OutSum, { places: 8 }) : null;
  const value = (k: string) => (k === 'OutSum' && sum ? formatMoney(sum, ctx.lang, f.CurrencyIn && /^[A-Z]{3,4}$/.test(f.CurrencyIn) ? f.CurrencyIn : 'RUB') : f[k]!);
  const rows = ['InvId', 'OutSum', 'TrsId'].filter((k) => f[k]).map((k) => ({ key: k, label: w[k], value: value(k), mono: k !== 'OutSum' }));
  const other: Lang = ctx.lang === 'ru' ? 'en' : 'ru';
  const q = new URLSearchParams({ ...Object.fromEntries(['InvId', 'OutSum', 'CurrencyIn', 'TrsId'].filter((k) => f[k]).map((k) => [k, f[k]!])), lang: other });
  return pageView('sandbox-shop', ctx, {
    title: `${outcome === 'success' ? w.success : w.fail} — ${w.shop}`, w, outcome, rows, path: SANDBOX_SHOP_PATH, query: q.toString(), otherLang: other,
  });
}
