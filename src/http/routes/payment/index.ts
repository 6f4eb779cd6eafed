import type { FastifyInstance } from 'fastify';

/** /api/v1/payment/* routes (one file per endpoint beside this one). */
export default async function paymentRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
