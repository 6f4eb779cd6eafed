import type { FastifyInstance } from 'fastify';
import { merchantAuth } from './merchant-auth.js';
import { apiRateLimit } from '../plugins/rate-limit.js';
import { idempotency } from '../plugins/idempotency.js';
import billRoutes from './routes/bill/index.js';
import paymentRoutes from './routes/payment/index.js';
import merchantRoutes from './routes/merchant/index.js';
import payoutRoutes from './routes/payout/index.js';
import refundRoutes from './routes/refund/index.js';
import dictionaryRoutes from './routes/dictionaries/index.js';

/**
 * The merchant API (`/api/v1`, registered by src/app.ts under that prefix). Inside this scope
 * every route is rate-limited, requires the merchant's bearer token, and honours
 * Idempotency-Key on POST.
 */
export default async function merchantApi(api: FastifyInstance): Promise<void> {
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
}
