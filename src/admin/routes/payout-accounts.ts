import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { NotFoundError } from '../../errors.js';
import { isIdLike } from '../../lib/input-fields.js';
import { payoutAccountView } from '../../domain/operator-views.js';
import { actorOf } from '../../audit/audit.js';
import { payoutAccountAudit } from '../../domain/audit-steps.js';
import type { FastifyRequest } from 'fastify';
import { list, ok, PayoutAccountSchema } from './schemas.js';

const IdParams = Type.Object({ id: Type.String() });
const CreateSchema = Type.Object({
  type: Type.String({ enum: ['card', 'sbp'] }),
  identifier: Type.Optional(Type.String({ description: 'Card number (Luhn-valid) or Russian mobile phone; absent for a card given by payout_token' })),
  card_holder: Type.Optional(Type.String({ description: 'Required for cards given by number' })),
  payout_token: Type.Optional(Type.String({ examples: ['pt-2d7b5b5e-000f-5000-9000-1b6f3c1a2b3c'], description: 'A card by YooKassa\'s payout widget: its payout_token, instead of the number (no card number is stored)' })),
  first6: Type.Optional(Type.String({ examples: ['555555'], description: 'With payout_token: the card\'s first 6 digits, as the widget gave them' })),
  last4: Type.Optional(Type.String({ examples: ['4477'], description: 'With payout_token: the card\'s last 4 digits' })),
  card_type: Type.Optional(Type.String({ examples: ['MasterCard'], description: 'With payout_token: the card type the widget named (e.g. MasterCard)' })),
  issuer_name: Type.Optional(Type.String({ examples: ['Sberbank'], description: 'With payout_token: the issuing bank the widget named' })),
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
    schema: { tags, summary: 'Add a payout account (a card by number or by YooKassa payout_token, or an SBP phone)', params: IdParams, body: CreateSchema, response: { 201: One('The account (masked)') } },
  }, async (req, reply) => {
    const m = await merchant(req.params.id);
    const input = requestInput(req);
    const a = await payoutAccounts.create(m.id, {
      type: input.type, identifier: input.identifier, cardHolder: input.card_holder, bankMemberId: input.bank_member_id,
      payoutToken: input.payout_token, first6: input.first6, last4: input.last4, cardType: input.card_type, issuerName: input.issuer_name,
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
