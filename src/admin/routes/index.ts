import type { FastifyInstance } from 'fastify';

/** Operator API, /admin/v1/* (bearer ADMIN_API_TOKEN). */
export default async function adminRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
