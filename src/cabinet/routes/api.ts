import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BASE, cabinetActor, formErrors, liveMerchantIdOf as merchantIdOf, putFlash, render, takeFlash } from '../context.js';
import { formBody } from '../../lib/form-body.js';
import { keyScopesAllowed, roleOf, teamAllows } from '../roles.js';
import type { ApiKeyView } from '../../domain/api-key/api-key.service.js';
import { isApiScope } from '../../domain/api-key/api-key.scopes.js';
import { Errors } from '../../lib/input-fields.js';
import { parseAllowlist } from '../../domain/merchant/merchant-patch.js';
import { ValidationError } from '../../errors.js';
import { apiKeyAudit, merchantAudit } from '../../domain/audit-steps.js';

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
    // The live token moves all the merchant's money, so it is the owner's alone; restricted keys are listed to every
    // role (no secret in the list), created and revoked within keyScopesAllowed.
    const s = req.cabinet.session!;
    const keys = {
      owner: roleOf(s) === 'owner', keys: await app.services.apiKeys.list(m.id), keyScopes: keyScopesAllowed(s),
      keyCanRevoke: (k: ApiKeyView) => k.revoked_at === null && mayHandle(req, k.scopes),
    };
    return render(req, reply, 'api', { nav: 'api', issuedAt: m.apiTokenIssuedAt, apiBase: `${app.config.publicBaseUrl}/api/v1`, allowlist, ...test, ...keys, ...data });
  };

  // A new token (of a refresh) or a new key's token, once: a reload of this page shows no token and issues none.
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const flash = await takeFlash<{ token?: string; key?: { token: string; name: string } }>(req, 'api.token');
    return page(req, reply, { ...(flash?.token ? { newToken: flash.token } : {}), ...(flash?.key ? { newKey: flash.key } : {}) });
  });

  // A restricted key: the owner any scopes; a developer none that move money out
  // (403, nothing created). The token goes to a one-time flash, as a refreshed token does.
  app.post('/keys', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const scopes = checkedScopes(req);
    if (!mayHandle(req, scopes)) return refused(req, reply);
    const who = cabinetActor(req);
    const user = req.cabinet.session!.user;
    try {
      const { key, token } = await app.services.apiKeys.create(merchantIdOf(req), { name: b.name ?? '', scopes }, { actor: who.actor, userId: user?.id ?? null }, apiKeyAudit(who, 'api_key.create'));
      const id = await putFlash(req, 'api.token', { key: { token, name: key.name } });
      return reply.redirect(`${BASE}/api?flash=${id}`, 303);
    } catch (e) {
      reply.status(422);
      return page(req, reply, { errors: formErrors(req, e), values: b, keyValues: scopes });
    }
  });

  // Revoking needs the power to create that key: a developer cannot switch off the owner's payout key.
  app.post<{ Params: { id: string } }>('/keys/:id/revoke', { schema: { hide: true } }, async (req, reply) => {
    const key = await app.services.apiKeys.get(merchantIdOf(req), req.params.id);
    if (!mayHandle(req, key.scopes)) return refused(req, reply);
    await app.services.apiKeys.revoke(merchantIdOf(req), key.id, apiKeyAudit(cabinetActor(req), 'api_key.revoke'));
    return reply.redirect(`${BASE}/api?ok=common.saved`, 303);
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
  // Owner only (src/cabinet/roles.ts): 403 for every other role before this runs.
  app.post('/refresh', { schema: { hide: true } }, async (req, reply) => {
    const token = await app.services.merchants.refreshToken(merchantIdOf(req), merchantAudit(app.config, cabinetActor(req), 'merchant.token.refresh'));
    const id = await putFlash(req, 'api.token', { token });
    return reply.redirect(`${BASE}/api?flash=${id}`, 303);
  });
}

/** The scope checkboxes of the key form (one field repeated: an array, or a string for one). */
function checkedScopes(req: FastifyRequest): string[] {
  const raw = (req.body as Record<string, unknown> | null)?.scopes;
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.filter((x): x is string => typeof x === 'string').slice(0, 20);
}

/**
 * Whether the signed-in role may create (or revoke) a key with these scopes. A name that is no
 * scope at all is the form's mistake (422 from the service), not a power the role lacks.
 */
function mayHandle(req: FastifyRequest, scopes: readonly string[]): boolean {
  const allowed: readonly string[] = keyScopesAllowed(req.cabinet.session!);
  return scopes.filter(isApiScope).every((x) => allowed.includes(x));
}

function refused(req: FastifyRequest, reply: FastifyReply) {
  reply.status(403);
  return render(req, reply, 'error', { status: 403, message: req.cabinet.t('error.unauthorized') });
}
