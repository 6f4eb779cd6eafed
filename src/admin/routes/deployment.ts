import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { money8 } from '../../lib/money.js';
import { actorOf } from '../../audit/audit.js';

const ClearInput = defineInput({
  merchant_id: v.string({ max: 64, description: 'Only this merchant (default: every merchant the sandbox credited)' }),
  reason: v.string({ required: true, max: 1000 }),
});

const tags = ['admin'];

/**
 * Operator API: the deployment's profile, and the money the sandbox credited to live balances
 * while the database ran as `sandbox` (what a production start refuses until it is cleared).
 */
export default async function deploymentAdminRoutes(app: FastifyInstance): Promise<void> {
  const { deployment } = app.services;

  app.get('/deployment', {
    schema: { tags, summary: "The profile this process runs (PAYMENTS_PROFILE), the database's, and the sandbox's money on live balances" },
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
    schema: { tags, summary: 'Debit the money the sandbox credited from live balances (audited), so the database may start as production', body: ClearInput.schema },
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
