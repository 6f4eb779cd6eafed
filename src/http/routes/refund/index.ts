import type { FastifyInstance } from 'fastify';
import { refundFullCreateRoute } from './full-create.js';
import { refundPartialCreateRoute } from './partial-create.js';
import { refundStatusRoute } from './status.js';

/** /api/v1/refund/* routes (one file per endpoint beside this one). */
export default async function refundRoutes(app: FastifyInstance): Promise<void> {
  // Route schemas document the input for OpenAPI; `defineInput` validates it (Laravel-style
  // 422 per field), so Fastify's own validation is off in this scope.
  app.setValidatorCompiler(() => () => true);
  refundFullCreateRoute(app);
  refundPartialCreateRoute(app);
  refundStatusRoute(app);
}
