import type { FastifyInstance } from 'fastify';
import { paymentStatusRoute } from './status.js';
import { paymentSearchRoute } from './search.js';
import { paymentChargeRoute } from './charge.js';
import { paymentMethodsRoutes } from './methods.js';

/** /api/v1/payment/* routes (one file per endpoint beside this one). */
export default async function paymentRoutes(app: FastifyInstance): Promise<void> {
  paymentStatusRoute(app);
  paymentSearchRoute(app);
  paymentChargeRoute(app);
  paymentMethodsRoutes(app);
}
