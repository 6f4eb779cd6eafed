import type { FastifyInstance } from 'fastify';

/** /api/v1/refund/* routes (one file per endpoint beside this one). */
export default async function refundRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
