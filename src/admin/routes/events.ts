import type { FastifyInstance } from 'fastify';

/** Operator API: events routes. */
export default async function eventsAdminRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
