import type { FastifyInstance } from 'fastify';
import { refundFullCreateRoute } from './full-create.js';
import { refundPartialCreateRoute } from './partial-create.js';
import { refundStatusRoute } from './status.js';
import { refundSearchRoute } from './search.js';

/** /api/v1/refund/* routes (one file per endpoint beside this one). */
export default async function refundRoutes(app: FastifyInstance): Promise<void> {
  refundFullCreateRoute(app);
  refundPartialCreateRoute(app);
  refundStatusRoute(app);
  refundSearchRoute(app);
}
