import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../http/input.js';
import { NotFoundError } from '../../errors.js';
import { isIdLike } from '../input.js';
import { payoutAccountView } from '../views.js';
import { actorOf } from '../../audit/audit.js';
import { payoutAccountAudit } from '../../audit/steps.js';
import type { FastifyRequest } from 'fastify';
import { list, ok, PayoutAccountSchema } from './schemas.js';

const IdParams = Type.Object({ id: Type.String() });
const CreateSchema = Type.Object({
  type: Type.String({ enum: ['card', 'sbp'] }),
  identifier: Type.String({ description: 'Card number (Luhn-valid) or Russian mobile phone' }),
  card_holder: Type.Optional(Type.String({ description: 'Required for cards' })),
  bank_member_id: Type.Optional(Type.Integer({ description: 'SBP member id of an existing bank; required for sbp' })),
});
const StatusInput = defineInput({ status: v.enumOf(['active', 'banned'] as const, { required: true }) });

const tags = ['admin'];
const One = (description: string) => ok(PayoutAccountSchema.properties, description);

/** Operator API: stored payout accounts (card numbers encrypted at rest, shown masked). */
export default async function payoutAccountAdminRoutes(app: FastifyInstance): Promise<void> {
  const { merchants, payoutAccounts } = app.services;

  const merchant = async (id: string) => {
    if (!isIdLike(id)) throw new NotFoundError('Merchant not found.');
    return merchants.get(id);
  };

  const audited = (req: FastifyRequest, action: string) => payoutAccountAudit(app.config, actorOf(req), action);

  app.post<{ Params: { id: string } }>('/merchants/:id/payout-accounts', {
    schema: { tags, summary: 'Add a payout account (card or SBP phone)', params: IdParams, body: CreateSchema, response: { 201: One('The account (masked)') } },
  }, async (req, reply) => {
    const m = await merchant(req.params.id);
    const input = requestInput(req);
    const a = await payoutAccounts.create(m.id, {
      type: input.type, identifier: input.identifier, cardHolder: input.card_holder, bankMemberId: input.bank_member_id,
    }, audited(req, 'payout_account.create'));
    return reply.status(201).send({ success: true, ...payoutAccountView(app.config, a) });
  });

  app.get<{ Params: { id: string } }>('/merchants/:id/payout-accounts', {
    schema: { tags, summary: "The merchant's payout accounts (masked)", params: IdParams, response: { 200: list(PayoutAccountSchema, 'The accounts (masked)') } },
  }, async (req) => {
    const m = await merchant(req.params.id);
    return { success: true, data: (await payoutAccounts.list(m.id)).map((a) => payoutAccountView(app.config, a)) };
  });

  app.get<{ Params: { id: string } }>('/payout-accounts/:id', {
    schema: { tags, summary: 'A payout account (masked)', params: IdParams, response: { 200: One('The account (masked)') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Payout account not found.');
    return { success: true, ...payoutAccountView(app.config, await payoutAccounts.get(req.params.id)) };
  });

  app.patch<{ Params: { id: string } }>('/payout-accounts/:id', {
    schema: { tags, summary: 'Ban or unban a payout account', params: IdParams, body: StatusInput.schema, response: { 200: One('The account as changed') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Payout account not found.');
    await payoutAccounts.get(req.params.id);
    const { status } = StatusInput.parse(requestInput(req));
    const a = await payoutAccounts.setStatus(req.params.id, status === 'active' ? 'ACTIVE' : 'BANNED', audited(req, 'payout_account.status'));
    return { success: true, ...payoutAccountView(app.config, a) };
  });
}
