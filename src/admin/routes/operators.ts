import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { formatDateTime } from '../../lib/time.js';
import { actorOf, writeAudit } from '../../audit/audit.js';
import { ROLES } from '../../domain/operator/roles.js';
import { isIdLike } from '../../lib/input-fields.js';
import type { OperatorView } from '../../domain/operator/operator.service.js';
import { list, ok, OperatorSchema, OperatorTokenSchema } from './schemas.js';
import { MailNotConfiguredError, operatorActions, operatorAuditView } from '../../backoffice/actions.js';

const IdParams = Type.Object({ id: Type.String() });
const CreateInput = defineInput({
  email: v.string({ required: true, max: 255, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/ }),
  role: v.enumOf(ROLES, { required: true }),
  password: v.string({ max: 255 }),
});
const PatchInput = defineInput({
  role: v.enumOf(ROLES),
  status: v.enumOf(['active', 'disabled'] as const),
});
const TokenInput = defineInput({ name: v.string({ max: 255, description: 'What the token is for (default "api")' }) });

const tags = ['admin'];
const NewToken = Type.String({ description: 'Shown once, stored as SHA-256', examples: ['op_3Vb8Nc2Md7Tf4Wy9Lx1Qa6Zp5'] });

/** Operator accounts and their personal API tokens (admin only; listing is a read). */
export default async function operatorAdminRoutes(app: FastifyInstance): Promise<void> {
  const { operators } = app.services;
  const out = (o: OperatorView) => ({ ...o, created_at: formatDateTime(o.created_at, app.config.tz) });
  const auditView = operatorAuditView;

  app.post('/operators', {
    config: { permission: 'admin' },
    schema: { tags, summary: 'Create an operator (email, role admin|finance|support|auditor, optional password)', body: CreateInput.schema, response: { 201: ok({ id: Type.String({ examples: ['Op3Kz8Lm2Qx'] }) }, 'The new operator') } },
  }, async (req, reply) => {
    const input = CreateInput.parse(requestInput(req));
    if (input.password !== undefined && input.password.length < 12) throw ValidationError.field('password', 'The password must be at least 12 characters.');
    const who = actorOf(req);
    const o = await operators.create({ email: input.email!, role: input.role!, password: input.password ?? null }, (c, o) => writeAudit(c, who, {
      action: 'operator.create', objectType: 'operator', objectId: o.id, before: null, after: auditView(o),
    }));
    return reply.status(201).send({ success: true, id: o.id });
  });

  app.get('/operators', {
    config: { permission: 'read' },
    schema: { tags, summary: 'Every operator (newest first)', response: { 200: list(OperatorSchema, 'Operators, newest first') } },
  }, async () => ({ success: true, data: (await operators.list()).map(out) }));

  app.get<{ Params: { id: string } }>('/operators/:id', {
    config: { permission: 'read' },
    schema: { tags, summary: 'An operator with its tokens (never the tokens themselves)', params: IdParams, response: { 200: ok({ ...OperatorSchema.properties, tokens: Type.Array(OperatorTokenSchema) }, 'The operator and its tokens') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Operator not found.');
    const o = await operators.get(req.params.id);
    const tokens = (await operators.listTokens(o.id)).map((t) => ({
      id: t.id, name: t.name, created_at: formatDateTime(t.created_at, app.config.tz),
      last_used_at: t.last_used_at ? formatDateTime(t.last_used_at, app.config.tz) : null,
      revoked_at: t.revoked_at ? formatDateTime(t.revoked_at, app.config.tz) : null,
    }));
    return { success: true, ...out(o), tokens };
  });

  app.patch<{ Params: { id: string } }>('/operators/:id', {
    config: { permission: 'admin' },
    schema: { tags, summary: "Change an operator's role or status; disabling revokes every token and ends every console session (re-enabling restores none)", params: IdParams, body: PatchInput.schema, response: { 200: ok(OperatorSchema.properties, 'The operator as changed') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Operator not found.');
    const input = PatchInput.parse(requestInput(req));
    const o = await operatorActions(app).updateOperator(actorOf(req), req.params.id, { role: input.role, status: input.status });
    return { success: true, ...out(o) };
  });

  app.post<{ Params: { id: string } }>('/operators/:id/tokens', {
    config: { permission: 'admin' },
    schema: { tags, summary: 'Issue a personal API token for the operator; shown once, stored as SHA-256', params: IdParams, body: TokenInput.schema,
      response: { 201: ok({ id: Type.String({ examples: ['Tk9Wq2Lm4Rx'] }), api_token: NewToken }, 'The token (answered once)') } },
  }, async (req, reply) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Operator not found.');
    const input = TokenInput.parse(requestInput(req));
    const who = actorOf(req);
    const operatorId = req.params.id;
    const t = await operators.issueToken(operatorId, input.name ?? 'api', (c, t) => writeAudit(c, who, {
      action: 'operator.token.create', objectType: 'operator', objectId: operatorId, before: null, after: { token_id: t.id, name: t.name },
    }));
    return reply.status(201).send({ success: true, id: t.id, api_token: t.apiToken });
  });

  app.delete<{ Params: { id: string; token_id: string } }>('/operators/:id/tokens/:token_id', {
    config: { permission: 'admin' },
    schema: { tags, summary: 'Revoke a personal API token (it fails at once)', params: Type.Object({ id: Type.String(), token_id: Type.String() }),
      response: { 200: ok({ id: Type.String({ examples: ['Tk9Wq2Lm4Rx'] }), revoked: Type.Literal(true) }, 'The token, revoked') } },
  }, async (req) => {
    const { id, token_id: tokenId } = req.params;
    if (!isIdLike(id) || !isIdLike(tokenId)) throw new NotFoundError('Token not found.');
    const who = actorOf(req);
    await operators.revokeToken(id, tokenId, (c) => writeAudit(c, who, {
      action: 'operator.token.revoke', objectType: 'operator', objectId: id, before: { token_id: tokenId }, after: null,
    }));
    return { success: true, id: tokenId, revoked: true };
  });

  app.post<{ Params: { id: string } }>('/operators/:id/password-reset', {
    config: { permission: 'admin' },
    schema: {
      tags, summary: "Mail an active operator a one-time link to set a new password (valid 1 hour) and end every console session of theirs now; answers 202 with the masked address. No password is ever answered",
      params: IdParams,
      response: { 202: ok({ sent_to: Type.String({ description: 'Where the link went, masked', examples: ['o***@ops.example'] }) }, 'The link is mailed') },
    },
  }, async (req, reply) => {
    try {
      const r = await operatorActions(app).sendOperatorPasswordReset(actorOf(req), req.params.id);
      return reply.status(202).send({ success: true, sent_to: r.sentTo });
    } catch (e) {
      if (e instanceof MailNotConfiguredError) return reply.status(503).send({ success: false, message: e.message });
      throw e;
    }
  });

  app.post<{ Params: { id: string } }>('/operators/:id/totp-reset', {
    config: { permission: 'admin' },
    schema: { tags, summary: "Turn an operator's TOTP off (a lost phone): recovery codes dropped, console sessions ended; the next console sign-in enrols again", params: IdParams,
      response: { 200: ok({ id: Type.String({ examples: ['Op3Kz8Lm2Qx'] }), totp_enabled: Type.Literal(false) }, 'TOTP is off') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Operator not found.');
    const id = req.params.id;
    const found = await operatorActions(app).resetOperatorTwoFactor(actorOf(req), id);
    if (!found) throw new NotFoundError('Operator not found.');
    return { success: true, id, totp_enabled: false };
  });
}
