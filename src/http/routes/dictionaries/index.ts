import type { FastifyInstance } from 'fastify';
import { sbpBanksRoute } from './sbp-banks.js';

/** /api/v1/payout/dictionaries/* routes. */
export default async function dictionaryRoutes(app: FastifyInstance): Promise<void> {
  // The route schemas document the input (OpenAPI); requestInput + defineInput validate it, from
  // query, JSON, urlencoded or multipart alike, so Fastify must not validate with them.
  app.setValidatorCompiler(() => () => true);
  sbpBanksRoute(app);
}
