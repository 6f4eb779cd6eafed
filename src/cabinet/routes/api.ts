import type { FastifyInstance } from 'fastify';
import { BASE, cabinetActor, formBody, formErrors, liveMerchantIdOf as merchantIdOf, putFlash, render, takeFlash } from '../context.js';
import { teamAllows } from '../roles.js';
import { Errors } from '../../admin/input.js';
import { parseAllowlist } from '../../admin/merchant-patch.js';
import { ValidationError } from '../../errors.js';
import { merchantAudit } from '../../audit/steps.js';

export default async function apiRoutes(app: FastifyInstance): Promise<void> {
  const page = async (req: Parameters<typeof render>[0], reply: Parameters<typeof render>[1], data: Record<string, unknown> = {}) => {
    const m = await app.services.merchants.get(merchantIdOf(req));
    const allowlist = ((m.apiIpAllowlist as string[] | null) ?? []).join('\n');
    // The test token is shown in full (it moves no real money; the live one only once), and only
    // to the roles that hold tokens (roles.ts `api`: owner, developer). The others read the page
    // without any token and without creating the test twin (a read changes nothing).
    const tokens = teamAllows(req.cabinet.session!, 'api');
    const twin = tokens ? (await app.services.merchants.ensureTestTwin(m.id)).twin : await app.services.merchants.testTwinOf(m.id);
    const test = { tokens, testToken: tokens && twin ? app.services.merchants.decryptToken(twin.apiTokenEnc) : null, testIssuedAt: twin?.apiTokenIssuedAt ?? null };
    return render(req, reply, 'api', { nav: 'api', issuedAt: m.apiTokenIssuedAt, apiBase: `${app.config.publicBaseUrl}/api/v1`, allowlist, ...test, ...data });
  };

  // The new token of a refresh, once: a reload of this page shows no token and issues none.
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const flash = await takeFlash<{ token: string }>(req, 'api.token');
    return page(req, reply, flash ? { newToken: flash.token } : {});
  });

  // The IP allow-list, one address or CIDR per line; validated by the operator API's parser.
  app.post('/allowlist', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const raw = (b.api_ip_allowlist ?? '').slice(0, 8192);
    const errors = new Errors();
    const list = parseAllowlist(errors, 'api_ip_allowlist', raw.trim());
    if (!errors.empty) {
      // One message under the textarea, naming each bad line.
      const e = new ValidationError({ api_ip_allowlist: Object.values(errors.map).flat() });
      reply.status(422);
      return page(req, reply, { errors: formErrors(req, e), values: b });
    }
    await app.services.merchants.update(merchantIdOf(req), { apiIpAllowlist: list ?? null }, merchantAudit(app.config, cabinetActor(req), 'merchant.ip_allowlist.update'));
    return reply.redirect(`${BASE}/api?ok=common.saved`, 303);
  });

  // The test token: the old one fails at once, the live one is untouched (same service as the operator's).
  app.post('/test-token', { schema: { hide: true } }, async (req, reply) => {
    await app.services.merchants.refreshTestToken(merchantIdOf(req), merchantAudit(app.config, cabinetActor(req), 'merchant.test_token.refresh'));
    return page(req, reply, { newTestToken: true });
  });

  // A confirmation step that works without JavaScript.
  app.get('/refresh', { schema: { hide: true } }, async (req, reply) => render(req, reply, 'api-confirm', { nav: 'api' }));

  // Same service as the operator's refresh: the old token fails from the moment this commits.
  // Post/redirect/get: the new token goes to a one-time flash (encrypted, five minutes) that the
  // GET it redirects to shows once; reloading that page neither shows nor issues a token.
  app.post('/refresh', { schema: { hide: true } }, async (req, reply) => {
    const token = await app.services.merchants.refreshToken(merchantIdOf(req), merchantAudit(app.config, cabinetActor(req), 'merchant.token.refresh'));
    const id = await putFlash(req, 'api.token', { token });
    return reply.redirect(`${BASE}/api?flash=${id}`, 303);
  });
}
