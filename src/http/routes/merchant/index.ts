import type { FastifyInstance } from 'fastify';

/** /api/v1/merchant/* routes (one file per endpoint beside this one). */
export default async function merchantRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
