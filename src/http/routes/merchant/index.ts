import type { FastifyInstance } from 'fastify';
import { merchantBalanceRoute } from './balance.js';

/** /api/v1/merchant/* routes (one file per endpoint beside this one). */
export default async function merchantRoutes(app: FastifyInstance): Promise<void> {
  merchantBalanceRoute(app);
}
