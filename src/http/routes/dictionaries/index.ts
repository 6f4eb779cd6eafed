import type { FastifyInstance } from 'fastify';
import { sbpBanksRoute } from './sbp-banks.js';

/** /api/v1/payout/dictionaries/* routes. */
export default async function dictionaryRoutes(app: FastifyInstance): Promise<void> {
  sbpBanksRoute(app);
}
