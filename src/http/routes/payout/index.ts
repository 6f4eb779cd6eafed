import type { FastifyInstance } from 'fastify';
import { personalCreateRoute } from './personal-create.js';
import { regularCreateRoute } from './regular-create.js';
import { statusRoute } from './status.js';
import { searchRoute } from './search.js';

/** /api/v1/payout/* routes (one file per endpoint beside this one). */
export default async function payoutRoutes(app: FastifyInstance): Promise<void> {
  // Route schemas document the input for OpenAPI; `defineInput` validates it (Laravel-style
  // 422 per field), so Fastify's own validation is off in this scope.
  app.setValidatorCompiler(() => () => true);
  personalCreateRoute(app);
  regularCreateRoute(app);
  statusRoute(app);
  searchRoute(app);
}
