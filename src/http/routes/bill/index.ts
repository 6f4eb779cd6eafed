import type { FastifyInstance } from 'fastify';

/** /api/v1/bill/* routes (one file per endpoint beside this one). */
export default async function billRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
