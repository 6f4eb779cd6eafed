import type { FastifyInstance } from 'fastify';
import { merchantAuth } from '../../plugins/merchant-auth.js';
import { apiRateLimit } from '../../plugins/rate-limit.js';
import { idempotency } from '../../plugins/idempotency.js';
import billRoutes from './bill/index.js';
import paymentRoutes from './payment/index.js';
import merchantRoutes from './merchant/index.js';
import payoutRoutes from './payout/index.js';
import refundRoutes from './refund/index.js';
import dictionaryRoutes from './dictionaries/index.js';
import adminRoutes from '../../admin/routes/index.js';
import pageRoutes from '../../page/index.js';
import sandboxBankRoutes from '../../page/sandbox-bank.js';
import providerNotificationRoutes from './providers/notifications.js';
import cabinetRoutes from '../../cabinet/index.js';
import operatorConsole from '../../operator/index.js';
import metricsRoutes from '../../metrics/index.js';

/** Every route group of the service; each group installs its own auth in its own scope. */
export async function registerRoutes(app: FastifyInstance): Promise<void> {
  await app.register(async (api) => {
    // Inside this scope every route is rate-limited, requires the merchant's bearer token,
    // and honours Idempotency-Key on POST.
    // Route schemas here document the API (OpenAPI) and shape responses; input is validated by
    // requestInput + defineInput from query, JSON, urlencoded or multipart alike (Laravel-style
    // 422s), so Fastify must not validate requests with them.
    api.setValidatorCompiler(() => () => true);
    await api.register(apiRateLimit);
    await api.register(merchantAuth);
    await api.register(idempotency);
    await api.register(billRoutes, { prefix: '/bill' });
    await api.register(paymentRoutes, { prefix: '/payment' });
    await api.register(merchantRoutes, { prefix: '/merchant' });
    await api.register(payoutRoutes, { prefix: '/payout' });
    await api.register(refundRoutes, { prefix: '/refund' });
    await api.register(dictionaryRoutes, { prefix: '/payout/dictionaries' });
  }, { prefix: '/api/v1' });
  await app.register(adminRoutes, { prefix: '/admin/v1' });
  await app.register(pageRoutes, { prefix: '/pay' });
  await app.register(sandboxBankRoutes, { prefix: '/sandbox' });
  await app.register(providerNotificationRoutes, { prefix: '/providers' });
  await app.register(cabinetRoutes, { prefix: '/cabinet' });
  await app.register(operatorConsole, { prefix: '/operator' });
  await app.register(metricsRoutes);
}
