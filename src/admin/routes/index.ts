import type { FastifyInstance } from 'fastify';
import payoutAdminRoutes from './payouts.js';
import eventAdminRoutes from './events.js';

/** Operator API, /admin/v1/* (bearer ADMIN_API_TOKEN). */
export default async function adminRoutes(app: FastifyInstance): Promise<void> {
  // Payout moderation and events are owned by their areas; they are registered here so that
  // every operator route sits behind the same admin auth hook (installed above this line).
  await app.register(payoutAdminRoutes);
  await app.register(eventAdminRoutes);
}
