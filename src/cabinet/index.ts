import type { FastifyInstance } from 'fastify';

/** Merchant cabinet, /cabinet/*. */
export default async function cabinetRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
