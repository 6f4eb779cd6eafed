import type { FastifyInstance } from 'fastify';

/** Operator API: payouts routes. */
export default async function payoutsAdminRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
