import type { FastifyInstance } from 'fastify';
import { verifyBalances } from '../../domain/ledger/ledger.js';

/** Operator API: the books check (every balance equals the sum of its ledger entries). */
export default async function ledgerAdminRoutes(app: FastifyInstance): Promise<void> {
  app.get('/ledger/verify', {
    schema: { tags: ['admin'], summary: 'Balances that drift from the sum of their ledger entries (empty: the books balance)' },
  }, async () => {
    const drift = await verifyBalances(app.db.pool);
    return { success: true, ok: drift.length === 0, drift };
  });
}
