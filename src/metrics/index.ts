import type { FastifyInstance } from 'fastify';

/** GET /metrics (Prometheus). */
export default async function metricsRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
