import type { FastifyInstance } from 'fastify';

/** /api/v1/dictionaries/* routes (one file per endpoint beside this one). */
export default async function dictionariesRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
