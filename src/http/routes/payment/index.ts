import type { FastifyInstance } from 'fastify';
import { paymentStatusRoute } from './status.js';
import { paymentSearchRoute } from './search.js';

/** /api/v1/payment/* routes (one file per endpoint beside this one). */
export default async function paymentRoutes(app: FastifyInstance): Promise<void> {
  // The route schemas document the input (OpenAPI); requestInput + defineInput validate it, from
  // query, JSON, urlencoded or multipart alike, so Fastify must not validate with them.
  app.setValidatorCompiler(() => () => true);
  paymentStatusRoute(app);
  paymentSearchRoute(app);
}
