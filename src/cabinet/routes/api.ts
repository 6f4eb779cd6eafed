import type { FastifyInstance } from 'fastify';
import { cabinetActor, merchantIdOf, render } from '../context.js';
import { merchantAudit } from '../../audit/steps.js';

export default async function apiRoutes(app: FastifyInstance): Promise<void> {
  const page = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const m = await app.services.merchants.get(merchantIdOf(req));
    return render(req, reply, 'api', { nav: 'api', issuedAt: m.apiTokenIssuedAt, apiBase: `${app.config.publicBaseUrl}/api/v1`, ...data });
  };

  app.get('/', { schema: { hide: true } }, async (req, reply) => page(req, reply));

  // A confirmation step that works without JavaScript.
  app.get('/refresh', { schema: { hide: true } }, async (req, reply) => render(req, reply, 'api-confirm', { nav: 'api' }));

  // Same service as the operator's refresh: the old token fails from the moment this commits.
  // The new token is shown in this response only (no redirect, no-store), never again.
  app.post('/refresh', { schema: { hide: true } }, async (req, reply) => {
    const token = await app.services.merchants.refreshToken(merchantIdOf(req), merchantAudit(app.config, cabinetActor(req), 'merchant.token.refresh'));
    return page(req, reply, { newToken: token });
  });
}
