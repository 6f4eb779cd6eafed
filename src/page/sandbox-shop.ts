import type { FastifyInstance } from 'fastify';
import { SANDBOX_SHOP_PATH } from '../domain/shop/sandbox-shop.js';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A built-in receiver standing in for the demo merchant's shop (issue 16 item 5), so a
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
        const title = outcome === 'success' ? 'Thank you! The payment is received.' : 'The payment did not go through.';
        const rows = ['InvId', 'OutSum', 'CurrencyIn', 'TrsId'].filter((k) => f[k]).map((k) => `<dt>${k}</dt><dd>${esc(f[k]!)}</dd>`).join('');
        reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'").header('cache-control', 'no-store');
        return reply.type('text/html; charset=utf-8').send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Demo shop</title></head>
<body data-testid="sandbox-shop" data-outcome="${outcome}"><h1>Demo shop</h1><p>${title}</p><dl>${rows}</dl>
<p>This page stands in for your shop (sandbox). Its postback is in the cabinet's <a href="/cabinet/webhooks">webhook log</a>.</p></body></html>`);
      },
    });
  }
}
