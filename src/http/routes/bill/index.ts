import type { FastifyInstance } from 'fastify';
import { billCreateRoute } from './create.js';
import { billToggleActivityRoute } from './toggle-activity.js';
import { billStatusRoute } from './status.js';
import { billSearchRoute } from './search.js';
import { billPaymentsRoute } from './payments.js';

/** /api/v1/bill/* routes (one file per endpoint beside this one). */
export default async function billRoutes(app: FastifyInstance): Promise<void> {
  billCreateRoute(app);
  billToggleActivityRoute(app);
  billStatusRoute(app);
  billSearchRoute(app);
  billPaymentsRoute(app);
}
