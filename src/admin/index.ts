import type { FastifyInstance } from 'fastify';
import { installAdminAuth } from './auth.js';
import merchantAdminRoutes from './routes/merchants.js';
import shopAdminRoutes from './routes/shops.js';
import payoutAccountAdminRoutes from './routes/payout-accounts.js';
import adjustmentAdminRoutes from './routes/adjustments.js';
import deploymentAdminRoutes from './routes/deployment.js';
import rateAdminRoutes from './routes/rates.js';
import sbpBankAdminRoutes from './routes/sbp-banks.js';
import ledgerAdminRoutes from './routes/ledger.js';
import payoutAdminRoutes from './routes/payouts.js';
import eventAdminRoutes from './routes/events.js';
import chargebackAdminRoutes from './routes/chargebacks.js';
import holdAdminRoutes from './routes/holds.js';
import connectorAdminRoutes from './routes/connectors.js';
import rehearsalAdminRoutes from './routes/rehearsals.js';
import operatorAdminRoutes from './routes/operators.js';
import auditAdminRoutes from './routes/audit.js';
import attentionAdminRoutes from './routes/attention.js';
import apiKeyAdminRoutes from './routes/api-keys.js';

/** Operator API, /admin/v1/* (bearer ADMIN_API_TOKEN or an operator's personal token; roles per route). */
export default async function adminRoutes(app: FastifyInstance): Promise<void> {
  // Every route of this scope (and of the plugins below) requires an operator token and the
  // role its `config.permission` names (src/backoffice/permissions.ts).
  installAdminAuth(app);
  // Route schemas here document the API (OpenAPI at /docs); input is validated by each
  // handler (Laravel-style 422s), so Fastify's own validation is off in this scope.
  app.setValidatorCompiler(() => () => true);

  await app.register(merchantAdminRoutes);
  await app.register(shopAdminRoutes);
  await app.register(payoutAccountAdminRoutes);
  await app.register(adjustmentAdminRoutes);
  await app.register(deploymentAdminRoutes);
  await app.register(rateAdminRoutes);
  await app.register(sbpBankAdminRoutes);
  await app.register(ledgerAdminRoutes);
  await app.register(connectorAdminRoutes);
  await app.register(rehearsalAdminRoutes);
  // Payout moderation and events are owned by their areas; they are registered here so that
  // every operator route sits behind the same admin auth hook (installed above this line).
  await app.register(payoutAdminRoutes);
  await app.register(eventAdminRoutes);
  await app.register(chargebackAdminRoutes);
  await app.register(holdAdminRoutes);
  await app.register(operatorAdminRoutes);
  await app.register(auditAdminRoutes);
  await app.register(attentionAdminRoutes);
  await app.register(apiKeyAdminRoutes);
}
