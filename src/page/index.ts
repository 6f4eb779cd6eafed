import type { FastifyInstance } from 'fastify';

/** Hosted payment page /pay/{bill_id} and QR page /pay/{bill_id}/qr. */
export default async function pageRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
