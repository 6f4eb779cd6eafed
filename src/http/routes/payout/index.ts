import type { FastifyInstance } from 'fastify';

/** /api/v1/payout/* routes (one file per endpoint beside this one). */
export default async function payoutRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
