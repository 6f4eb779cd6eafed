import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { API_SCOPES } from '../../domain/api-key/api-key.scopes.js';
import { actorOf } from '../../audit/audit.js';
import { apiKeyAudit } from '../../domain/audit-steps.js';
import { NotFoundError } from '../../errors.js';
import { bodyObject, isIdLike } from '../../lib/input-fields.js';
import { operatorActions } from '../../backoffice/actions.js';
import { apiKeyView } from '../../domain/operator-views.js';
import { ApiKeySchema, list, ok } from './schemas.js';

const IdParams = Type.Object({ id: Type.String() });
const KeyParams = Type.Object({ id: Type.String(), key_id: Type.String() });
const CreateSchema = Type.Object({
  name: Type.String({ maxLength: 100, description: 'What the key is for (shown in lists)' }),
  scopes: Type.Array(Type.String({ enum: [...API_SCOPES] }), { minItems: 1, description: 'What the key may do; an unknown scope is a 422 on scopes' }),
});

const tags = ['admin'];

/**
 * Operator API: a merchant's restricted API keys (scoped tokens:
 * src/domain/api-key/api-key.scopes.ts). Creating and revoking are for
 * `admin` operators (no declared permission: src/backoffice/permissions.ts fails closed), since a new key
 * is a merchant secret answered once; every role may list them (never a token).
 */
export default async function apiKeyAdminRoutes(app: FastifyInstance): Promise<void> {
  const { apiKeys } = app.services;
  const { loadMerchant } = operatorActions(app);

  app.post<{ Params: { id: string } }>('/merchants/:id/keys', {
    schema: { tags, summary: 'Create a restricted API key limited to scopes; its token is answered once', params: IdParams, body: CreateSchema,
      response: { 201: ok({ ...ApiKeySchema.properties, api_token: Type.String({ description: 'Shown once', examples: ['rk_7Hq2Zp9Lx4Vb8Nc3Md6Tf1Wy5'] }) }, 'The key, and its token (answered once)') } },
  }, async (req, reply) => {
    const m = await loadMerchant(req.params.id);
    const who = actorOf(req);
    const body = bodyObject(req);
    const { key, token } = await apiKeys.create(m.id, { name: body.name, scopes: body.scopes }, { actor: who.actor, userId: null }, apiKeyAudit(who, 'api_key.create'));
    return reply.status(201).send({ success: true, ...apiKeyView(app.config, key), api_token: token });
  });

  app.get<{ Params: { id: string } }>('/merchants/:id/keys', {
    schema: { tags, summary: "The merchant's restricted API keys, live first (never a token)", params: IdParams,
      response: { 200: list(ApiKeySchema, 'The keys') } },
  }, async (req) => {
    const m = await loadMerchant(req.params.id);
    return { success: true, data: (await apiKeys.list(m.id)).map((k) => apiKeyView(app.config, k)) };
  });

  app.delete<{ Params: { id: string; key_id: string } }>('/merchants/:id/keys/:key_id', {
    schema: { tags, summary: 'Revoke a restricted API key: it fails (401) from now on; revoking it again changes nothing', params: KeyParams,
      response: { 200: ok(ApiKeySchema.properties, 'The key, revoked') } },
  }, async (req) => {
    const m = await loadMerchant(req.params.id);
    if (!isIdLike(req.params.key_id)) throw new NotFoundError('API key not found.');
    const key = await apiKeys.revoke(m.id, req.params.key_id, apiKeyAudit(actorOf(req), 'api_key.revoke'));
    return { success: true, ...apiKeyView(app.config, key) };
  });
}
