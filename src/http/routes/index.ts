import type { FastifyInstance } from 'fastify';

/** Every route group of the service; each group installs its own auth in its own scope. */
export async function registerRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
