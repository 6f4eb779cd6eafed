import type { FastifyInstance } from 'fastify';
import { operatorDocument } from './documents.js';

/**
 * The operators' document, apart from the merchants' /docs: `/admin/docs/json` and a page that
 * shows it with the same Swagger UI assets. Public, as /docs is: it describes routes, holds no
 * data, and every route it lists still needs the operator token (docs/adr/0068).
 */
export function registerOperatorDocs(app: FastifyInstance): void {
  let cached: unknown = null;
  app.get('/admin/docs/json', { schema: { hide: true } }, async () => (cached ??= operatorDocument(app.swagger() as unknown as Record<string, unknown>)));
  app.get('/admin/docs', { schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Operator API</title><link rel="stylesheet" href="/docs/static/swagger-ui.css"></head>
<body><div id="swagger-ui"></div><script src="/docs/static/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/admin/docs/json', dom_id: '#swagger-ui' });</script></body></html>`));
}
