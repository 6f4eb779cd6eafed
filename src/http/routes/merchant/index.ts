import type { FastifyInstance } from 'fastify';
import { merchantBalanceRoute } from './balance.js';

/** /api/v1/merchant/* routes (one file per endpoint beside this one). */
export default async function merchantRoutes(app: FastifyInstance): Promise<void> {
  // The route schemas document the input (OpenAPI); requestInput + defineInput validate it, from
  // query, JSON, urlencoded or multipart alike, so Fastify must not validate with them.
  app.setValidatorCompiler(() => () => true);
  merchantBalanceRoute(app);
}
