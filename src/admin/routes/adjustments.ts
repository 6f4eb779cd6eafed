import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { DomainError, NotFoundError } from '../../errors.js';
import { money8 } from '../../lib/money.js';
import { formatDateTime } from '../../lib/time.js';
import { decimalField, Errors, isIdLike } from '../../lib/input-fields.js';
import { balanceView } from '../../domain/operator-views.js';
import { AdjustmentSchema, BalanceSchema, list, ok } from './schemas.js';
import { actorOf, writeAudit } from '../../audit/audit.js';

const IdParams = Type.Object({ id: Type.String() });
const CreateInput = defineInput({
  currency: v.enumOf(['RUB', 'USD', 'EUR'] as const, { required: true }),
  amount: v.decimal({ required: true, signed: true, places: 8, description: 'Signed: positive credits, negative debits available' }),
  reason: v.string({ required: true, max: 1000 }),
});

const tags = ['admin'];

/** Operator API: balance adjustments, each one ledger ADJUSTMENT entry. */
export default async function adjustmentAdminRoutes(app: FastifyInstance): Promise<void> {
  const { merchants, adjustments } = app.services;

  app.post<{ Params: { id: string } }>('/merchants/:id/balance-adjustments', {
    config: { permission: 'balance.adjust' },
    schema: {
      tags, summary: 'Credit (positive) or debit (negative) available balance; never below zero', params: IdParams, body: CreateInput.schema,
      response: { 201: ok({ ...AdjustmentSchema.properties, balance: BalanceSchema }, 'The adjustment, and the balance after it') },
    },
  }, async (req, reply) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Merchant not found.');
    await merchants.get(req.params.id);
    const input = CreateInput.parse(requestInput(req));
    const errors = new Errors();
    const amount = decimalField(errors, 'amount', input.amount!.toFixed(), { min: '-999999999999.99999999', max: '999999999999.99999999', places: 8 });
    if (amount?.isZero()) errors.add('amount', 'The amount must not be zero.');
    errors.throwIfAny();
    try {
      const who = actorOf(req);
      const a = await adjustments.create(req.params.id, { currency: input.currency!, amount: amount!, reason: input.reason! }, (c, a) => writeAudit(c, who, {
        action: 'balance.adjust', objectType: 'merchant', objectId: a.merchantId, before: null,
        after: { adjustment_id: a.id, currency: a.currency, amount: money8(a.amount), reason: a.reason },
      }));
      return reply.status(201).send({
        success: true, id: a.id, merchant_id: a.merchantId, currency: a.currency, amount: money8(a.amount), reason: a.reason,
        created_at: formatDateTime(a.createdAt, app.config.tz), balance: balanceView({ currency: a.currency, ...a.balance }),
      });
    } catch (e) {
      // A debit past available: a 422 on the amount, carrying the ledger's key (docs/adr/0039-operator-api-and-cli.md).
      if (e instanceof DomainError && e.code === 'balance_not_enough') {
        return reply.status(422).send({
          success: false, message: e.message,
          errors: { amount: ['The amount would take the available balance below zero.'] },
        });
      }
      throw e;
    }
  });

  app.get<{ Params: { id: string } }>('/merchants/:id/balance-adjustments', {
    schema: { tags, summary: "The merchant's balance adjustments (newest first, at most 1000)", params: IdParams,
      response: { 200: list(AdjustmentSchema, 'The adjustments, newest first') } },
  }, async (req) => {
    if (!isIdLike(req.params.id)) throw new NotFoundError('Merchant not found.');
    await merchants.get(req.params.id);
    const rows = await adjustments.list(req.params.id);
    return {
      success: true,
      data: rows.map((a) => ({
        id: a.id, merchant_id: a.merchantId, currency: a.currency, amount: money8(a.amount.toString()), reason: a.reason,
        created_at: formatDateTime(a.createdAt, app.config.tz),
      })),
    };
  });
}
