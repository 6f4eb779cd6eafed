import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../errors.js';

const CURRENCIES = ['RUB', 'USD', 'EUR'];

const Currency = Type.String({ enum: CURRENCIES });
const Sum = (description?: string) => Type.String({ examples: ['15000.00000000'], ...(description ? { description } : {}) });
const Problem = Type.Union([
  Type.Object({
    type: Type.Literal('balance_drift'), merchant_id: Type.String(), currency: Currency,
    available: Sum('The balances row'), sum_available: Sum('Its entries'), locked: Sum(), sum_locked: Sum(), hold: Sum(), sum_hold: Sum(),
  }, { description: "A merchant's balances row differs from its accounts' entries" }),
  Type.Object({ type: Type.Literal('unbalanced'), currency: Currency, debits: Sum(), credits: Sum() }, { description: 'A currency whose debits and credits differ' }),
  Type.Object({ type: Type.Literal('unknown_account'), account: Type.String({ examples: ['RUB:nowhere'] }) }, { description: 'An entry on an account the catalogue does not know' }),
  Type.Object({ type: Type.Literal('empty_transfer'), transfer_id: Type.String() }, { description: 'A transfer without entries' }),
]);
const Verify = Type.Object({
  ok: Type.Boolean({ description: 'Nothing wrong' }),
  trial_balance: Type.Array(Type.Object({ currency: Currency, debits: Sum('Debit-side balances'), credits: Sum('Credit-side balances: equal to debits') })),
  problems: Type.Array(Problem),
}, { description: 'The books check', examples: [{ ok: true, trial_balance: [{ currency: 'RUB', debits: '15000.00000000', credits: '15000.00000000' }], problems: [] }] });
const Accounts = Type.Object({
  accounts: Type.Array(Type.Object({
    id: Type.String({ examples: ['RUB:merchant:Zx8Wq2LmN4pR7tYv:available'] }),
    currency: Currency,
    kind: Type.String({ examples: ['available'] }),
    merchant_id: Type.Union([Type.String(), Type.Null()]),
    connector: Type.Union([Type.String(), Type.Null()], { examples: ['yk-live'] }),
    debits: Sum(), credits: Sum(),
    normal: Type.String({ enum: ['debit', 'credit'], description: 'The side its balance is read on' }),
    balance: Sum('On its normal side'),
  })),
}, { description: 'The accounts' });

/** Operator API: the books check and the accounts of the double-entry ledger. */
export default async function ledgerAdminRoutes(app: FastifyInstance): Promise<void> {
  app.get('/ledger/verify', {
    schema: { tags: ['admin'], summary: 'Trial balance per currency, every merchant balance against its entries, and what is wrong (ok: nothing)', response: { 200: Verify } },
  }, async () => app.services.ledger.verify());


  app.get('/ledger/accounts', {
    schema: { tags: ['admin'], summary: 'Every ledger account (optionally of one currency or merchant) with its debits, credits and balance',
      querystring: Type.Object({ currency: Type.Optional(Currency), merchant_id: Type.Optional(Type.String({ description: "Only this merchant's accounts" })) }),
      response: { 200: Accounts },
    },
  }, async (req) => {
    const q = (req.query ?? {}) as { currency?: unknown; merchant_id?: unknown };
    const currency = typeof q.currency === 'string' && q.currency !== '' ? q.currency.toUpperCase() : undefined;
    if (currency !== undefined && !CURRENCIES.includes(currency)) throw ValidationError.field('currency', 'The currency must be RUB, USD or EUR.');
    const merchantId = typeof q.merchant_id === 'string' && q.merchant_id !== '' ? q.merchant_id : undefined;
    return { accounts: await app.services.ledger.accounts({ currency, merchantId }) };
  });
}
