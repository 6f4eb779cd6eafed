import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../errors.js';

const CURRENCIES = ['RUB', 'USD', 'EUR'];

/** Operator API: the books check and the accounts of the double-entry ledger. */
export default async function ledgerAdminRoutes(app: FastifyInstance): Promise<void> {
  app.get('/ledger/verify', {
    schema: { tags: ['admin'], summary: 'Trial balance per currency, every merchant balance against its entries, and what is wrong (ok: nothing)' },
  }, async () => app.services.ledger.verify());

  app.get('/ledger/accounts', {
    schema: { tags: ['admin'], summary: 'Every ledger account (optionally of one currency or merchant) with its debits, credits and balance' },
  }, async (req) => {
    const q = (req.query ?? {}) as { currency?: unknown; merchant_id?: unknown };
    const currency = typeof q.currency === 'string' && q.currency !== '' ? q.currency.toUpperCase() : undefined;
    if (currency !== undefined && !CURRENCIES.includes(currency)) throw ValidationError.field('currency', 'The currency must be RUB, USD or EUR.');
    const merchantId = typeof q.merchant_id === 'string' && q.merchant_id !== '' ? q.merchant_id : undefined;
    return { accounts: await app.services.ledger.accounts({ currency, merchantId }) };
  });
}
