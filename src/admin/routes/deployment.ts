import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { money8 } from '../../lib/money.js';
import { actorOf } from '../../audit/audit.js';
import { ok } from './schemas.js';

const ClearInput = defineInput({
  merchant_id: v.string({ max: 64, description: 'Only this merchant (default: every merchant the sandbox credited)' }),
  reason: v.string({ required: true, max: 1000 }),
});

const tags = ['admin'];
const Profile = Type.String({ enum: ['sandbox', 'production'] });
const Currency = Type.String({ enum: ['RUB', 'USD', 'EUR'] });
const Amount = Type.String({ description: '8 decimals', examples: ['1500.00000000'] });
const Email = Type.String({ examples: ['owner@shop.example'] });
const State = ok({
  profile: Profile,
  database_profile: Type.String({ enum: ['sandbox', 'production'], description: 'The profile the database last ran as' }),
  sandbox_money: Type.Array(Type.Object({ merchant_id: Type.String(), email: Email, currency: Currency, amount: Amount, available: Amount }), {
    description: 'Money the sandbox credited to live balances, per merchant and currency',
  }),
  in_flight: Type.Array(Type.Object({
    merchant_id: Type.String(), email: Email, object_type: Type.String({ enum: ['payment', 'payout', 'refund'] }), id: Type.String(), status: Type.String({ examples: ['PROCESS'] }),
  }), { description: 'Live operations still moving through the sandbox' }),
}, 'The deployment');
const Cleared = ok({
  cleared: Type.Array(Type.Object({
    merchant_id: Type.String(), email: Email, currency: Currency, sandbox_money: Amount, debited: Amount,
    written_off: Type.String({ description: 'What available could not cover, 8 decimals', examples: ['0.00000000'] }),
    adjustment_id: Type.Union([Type.String(), Type.Null()], { description: 'The debit (null when nothing was available)' }),
  })),
}, 'What was debited, per merchant and currency');

/**
 * Operator API: the deployment's profile, and the money the sandbox credited to live balances
 * while the database ran as `sandbox` (what a production start refuses until it is cleared).
 */
export default async function deploymentAdminRoutes(app: FastifyInstance): Promise<void> {
  const { deployment } = app.services;

  app.get('/deployment', {
    schema: { tags, summary: "The profile this process runs (PAYMENTS_PROFILE), the database's, and the sandbox's money on live balances", response: { 200: State } },
  }, async () => {
    const s = await deployment.state();
    return {
      success: true, profile: s.profile, database_profile: s.databaseProfile,
      sandbox_money: s.sandboxMoney.map((m) => ({ merchant_id: m.merchantId, email: m.email, currency: m.currency, amount: money8(m.amount), available: money8(m.available) })),
      in_flight: s.inFlight.map((o) => ({ merchant_id: o.merchantId, email: o.email, object_type: o.objectType, id: o.id, status: o.status })),
    };
  });

  app.post('/deployment/sandbox-money/clear', {
    config: { permission: 'admin' },
    schema: { tags, summary: 'Debit the money the sandbox credited from live balances (audited), so the database may start as production', body: ClearInput.schema, response: { 200: Cleared } },
  }, async (req) => {
    const input = ClearInput.parse(requestInput(req));
    const cleared = await deployment.clearSandboxMoney(actorOf(req), { merchantId: input.merchant_id, reason: input.reason! });
    return {
      success: true,
      cleared: cleared.map((c) => ({
        merchant_id: c.merchantId, email: c.email, currency: c.currency, sandbox_money: money8(c.amount), debited: money8(c.debited),
        written_off: money8(c.amount.minus(c.debited)), adjustment_id: c.adjustmentId,
      })),
    };
  });
}
