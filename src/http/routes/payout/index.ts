import type { FastifyInstance } from 'fastify';
import { personalCreateRoute } from './personal-create.js';
import { regularCreateRoute } from './regular-create.js';
import { statusRoute } from './status.js';
import { searchRoute } from './search.js';

/** /api/v1/payout/* routes (one file per endpoint beside this one). */
export default async function payoutRoutes(app: FastifyInstance): Promise<void> {
  personalCreateRoute(app);
  regularCreateRoute(app);
  statusRoute(app);
  searchRoute(app);
}
