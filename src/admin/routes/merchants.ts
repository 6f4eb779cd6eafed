import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { ValidationError } from '../../errors.js';
import { bodyObject } from '../../lib/input-fields.js';
import { MailNotConfiguredError, operatorActions } from '../../backoffice/actions.js';
import { CreateInput, memberIdOf, resetReasonOf } from '../../backoffice/merchant-input.js';
import { balanceView, merchantView } from '../../domain/operator-views.js';
import { actorOf } from '../../audit/audit.js';
import { merchantAudit } from '../../domain/audit-steps.js';
import type { FastifyRequest } from 'fastify';
import { formatDateTime } from '../../lib/time.js';
import { BalanceSchema, both, HeldSchema, list, MerchantSchema, ok, TeamMemberSchema } from './schemas.js';

const IdParams = Type.Object({ id: Type.String() });

const ListInput = defineInput({
  email: v.string({ max: 255 }),
  limit: v.integer({ min: 1, max: 1000 }),
  offset: v.integer({ min: 0 }),
});

const DecStr = Type.Union([Type.String(), Type.Number(), Type.Null()]);
const PatchSchema = Type.Object({
  status: Type.Optional(Type.String({ enum: ['active', 'banned'] })),
  verified: Type.Optional(Type.Boolean()),
  subscription: Type.Optional(Type.String({ enum: ['active', 'inactive', 'none'] })),
  grants: Type.Optional(Type.Object({ refunds: Type.Optional(Type.Boolean()), regular_payouts: Type.Optional(Type.Boolean()) })),
  payout_daily_limit: Type.Optional(DecStr),
  payout_monthly_limit: Type.Optional(DecStr),
  moderation_threshold: Type.Optional(DecStr),
  payout_max_card: Type.Optional(DecStr),
  payout_max_sbp: Type.Optional(DecStr),
  api_ip_allowlist: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'Addresses or CIDRs (IPv4/IPv6) the merchant API accepts this merchant\'s token from; null or [] allows any',
    examples: [['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']],
  })),
  fees: Type.Optional(Type.Object(Object.fromEntries(
    ['payment_card', 'payment_sbp', 'payout_card', 'payout_sbp'].flatMap((k) => [[`${k}_percent`, Type.Optional(DecStr)], [`${k}_fixed`, Type.Optional(DecStr)]]),
  ))),
  routing: Type.Optional(Type.Object(Object.fromEntries(
    ['payment_card', 'payment_sbp', 'payout_card', 'payout_sbp'].map((k) => [k, Type.Optional(Type.Array(Type.String()))]),
  ), { description: 'Ordered connector names per route (default ["sandbox"])' })),
}, { additionalProperties: true });

const tags = ['admin'];
const Merchant = (description: string) => ok(MerchantSchema.properties, description);
const Token = (description: string) => Type.String({ description, examples: ['mk_5Gd8Qw2Zr7Lp4Xn9Vb3Tc6Hy1Jm0'] });
const TokenAnswer = ok({ api_token: Token('The new token, shown once') }, 'The new token');

const MemberBody = { member_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'A team member of this merchant; absent or null: the owner' })) };

/** Operator API: merchants, their settings and API tokens. */
export default async function merchantAdminRoutes(app: FastifyInstance): Promise<void> {
  const { merchants } = app.services;

  const actions = operatorActions(app);
  const audited = (req: FastifyRequest, action: string) => merchantAudit(app.config, actorOf(req), action);
  const load = actions.loadMerchant;

  app.post('/merchants', {
    schema: { tags, summary: 'Create a merchant (active, unverified, subscription active, no grants); returns its API token once', body: CreateInput.schema,
      response: {
        201: ok({ ...MerchantSchema.properties, api_token: Token('The live API token, shown once'), test_api_token: Token('The test-mode API token, shown once') }, 'The merchant and its tokens (answered once)'),
      },
    },
  }, async (req, reply) => {
    const input = CreateInput.parse(requestInput(req));
    const { merchant, apiToken, testApiToken } = await actions.createMerchant(actorOf(req), { name: input.name!, email: input.email!, password: input.password });
    return reply.status(201).send({ success: true, ...merchantView(app.config, merchant), api_token: apiToken, test_api_token: testApiToken });
  });

  app.get('/merchants', {
    schema: { tags, summary: 'List merchants (newest first)', querystring: ListInput.schema, response: { 200: list(MerchantSchema, 'Merchants, newest first') } },
  }, async (req) => {
    const q = ListInput.parse(requestInput(req));
    const rows = await merchants.list({ email: q.email, limit: q.limit ?? 100, offset: q.offset ?? 0 });
    return { success: true, data: rows.map((m) => merchantView(app.config, m)) };
  });

  app.get<{ Params: { id: string } }>('/merchants/:id', {
    schema: { tags, summary: 'A merchant with its balances', params: IdParams,
      response: {
        200: ok({
          ...MerchantSchema.properties,
          balances: Type.Array(BalanceSchema),
          held: HeldSchema,
          test_mode: Type.Union([Type.Object({ api_token_issued_at: Type.String({ examples: ['2026-11-23 18:42:11'] }), balances: Type.Array(BalanceSchema) }), Type.Null()], {
            description: 'Test mode: its token\'s issue time and balances; null until it has a test token',
          }),
        }, 'The merchant with its balances'),
      },
    },
  }, async (req) => {
    const m = await load(req.params.id);
    const [balances, held, twin] = await Promise.all([merchants.balances(m.id), merchants.held(m.id), merchants.testTwinOf(m.id)]);
    const testBalances = twin ? await merchants.balances(twin.id) : [];
    return {
      success: true, ...merchantView(app.config, m), balances: balances.map(balanceView),
      held: held.map((x) => ({ currency: x.currency, amount: x.amount.toFixed(2) })),
      // Test mode: its token's issue time and its balances (null until it has a test token).
      test_mode: twin ? { api_token_issued_at: formatDateTime(twin.apiTokenIssuedAt, app.config.tz), balances: testBalances.map(balanceView) } : null,
    };
  });

  app.patch<{ Params: { id: string } }>('/merchants/:id', {
    schema: { tags, summary: 'Change status, verification, subscription, grants, payout limits, fees, the API IP allow-list and connector routing', params: IdParams, body: PatchSchema, response: { 200: Merchant('The merchant as changed') } },
  }, async (req) => {
    const m = await actions.updateMerchant(actorOf(req), req.params.id, bodyObject(req));
    return { success: true, ...merchantView(app.config, m) };
  });

  app.post<{ Params: { id: string } }>('/merchants/:id/token', {
    schema: { tags, summary: 'Refresh the API token: the old one fails at once', params: IdParams, response: { 200: TokenAnswer } },
  }, async (req) => {
    return { success: true, api_token: await actions.refreshMerchantToken(actorOf(req), req.params.id) };
  });

  app.post<{ Params: { id: string } }>('/merchants/:id/test-token', {
    schema: { tags, summary: 'Refresh the test-mode API token (201 when it is the first): the old test token fails at once, the live token is untouched', params: IdParams, response: both([200, 201], TokenAnswer) },
  }, async (req, reply) => {
    await load(req.params.id);
    const r = await merchants.refreshTestToken(req.params.id, audited(req, 'merchant.test_token.refresh'));
    return reply.status(r.created ? 201 : 200).send({ success: true, api_token: r.apiToken });
  });

  app.post<{ Params: { id: string } }>('/merchants/:id/password-reset', {
    config: { permission: 'merchants.password-reset' },
    schema: {
      tags, summary: 'Mail the cabinet account (the owner, or the team member `member_id`) a one-time link to set a new password (valid 1 hour) and end that account\'s open sessions at once; answers 202 with the masked address. No password is ever answered',
      params: IdParams, body: Type.Object(MemberBody),
      response: {
        202: ok({ sent_to: Type.String({ description: 'Where the link went, masked', examples: ['o***@shop.example'] }) }, 'The link is mailed'),
      },
    },
  }, async (req, reply) => {
    try {
      const r = await actions.sendPasswordResetLink(actorOf(req), req.params.id, memberIdOf(bodyObject(req)));
      return reply.status(202).send({ success: true, sent_to: r.sentTo });
    } catch (e) {
      if (e instanceof MailNotConfiguredError) return reply.status(503).send({ success: false, message: e.message });
      throw e;
    }
  });

  app.get<{ Params: { id: string } }>('/merchants/:id/team', {
    schema: { tags, summary: "The merchant's cabinet team: each member's id (for two-factor-reset), email, role, state and whether two-factor sign-in is on", params: IdParams, response: { 200: list(TeamMemberSchema, 'The team') } },
  }, async (req) => {
    const m = await load(req.params.id);
    const members = await app.services.team.list(m.id);
    return {
      success: true,
      data: members.map((x) => ({ id: x.id, email: x.email, role: x.role, state: x.state, two_factor: x.two_factor, created_at: formatDateTime(x.created_at, app.config.tz) })),
    };
  });

  app.post<{ Params: { id: string } }>('/merchants/:id/two-factor-reset', {
    config: { permission: 'merchants.two-factor-reset' },
    schema: {
      tags, summary: "Admin only: reset a cabinet account's two-factor sign-in (the owner, or the team member `member_id`) with a `reason`: TOTP and recovery codes cleared, that person's sessions ended, the person mailed",
      params: IdParams, body: Type.Object({ ...MemberBody, reason: Type.Optional(Type.String({ description: 'Required: how the person was identified (kept in the audit trail)' })) }),
      response: { 200: ok({ ok: Type.Literal(true) }, 'Two-factor sign-in is off for that person') },
    },
  }, async (req) => {
    const body = bodyObject(req);
    await actions.resetMerchantTwoFactor(actorOf(req), req.params.id, memberIdOf(body), resetReasonOf(body));
    return { success: true, ok: true };
  });

  app.put<{ Params: { id: string } }>('/merchants/:id/payout-webhook', {
    schema: {
      tags, summary: 'Set (or clear with null or "") the payout webhook URL; private addresses refused unless allowed',
      params: IdParams, body: Type.Object({ url: Type.Union([Type.String(), Type.Null()]) }),
      response: { 200: Merchant('The merchant as changed') },
    },
  }, async (req) => {
    await load(req.params.id);
    const body = bodyObject(req);
    // The key must be sent; null or "" clears.
    if (!Object.prototype.hasOwnProperty.call(body, 'url')) throw new ValidationError({ url: ['The url field must be present (null clears it).'] });
    const url = body.url;
    if (url !== null && typeof url !== 'string') throw new ValidationError({ url: ['The url must be a string.'] });
    const m = await merchants.setPayoutWebhookUrl(req.params.id, url, audited(req, 'merchant.payout_webhook.set'));
    return { success: true, ...merchantView(app.config, m) };
  });
}
