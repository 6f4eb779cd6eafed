import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

/**
 * Generated requests against every operator route (seeded, reproducible): whatever arrives,
 * the answer is JSON and never a 500 or a stack trace. ADMIN_FUZZ_RUNS sets the count.
 */
const RUNS = Number(process.env.ADMIN_FUZZ_RUNS ?? 1500);
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp({ ALLOW_PRIVATE_WEBHOOK_URLS: 'false' });
  m = await createMerchant(t);
  await t.db.pool.query(`INSERT INTO sbp_banks (member_id, name, name_en, bic) VALUES (100000000111, 'Сбербанк', 'Sberbank', '044525225') ON CONFLICT DO NOTHING`);
});
afterAll(async () => { await t.close(); });

const ROUTES: Array<['GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', string]> = [
  ['GET', '/events'], ['GET', '/ledger/verify'], ['GET', '/merchants'], ['GET', '/payouts'], ['GET', '/rates'], ['GET', '/sbp-banks'],
  ['GET', '/events/:id'], ['GET', '/merchants/:id'], ['GET', '/merchants/:id/balance-adjustments'], ['GET', '/merchants/:id/payout-accounts'],
  ['GET', '/merchants/:id/shops'], ['GET', '/payout-accounts/:id'], ['GET', '/shops/:id'], ['PATCH', '/merchants/:id'],
  ['PATCH', '/payout-accounts/:id'], ['PATCH', '/shops/:id'], ['PATCH', '/sbp-banks/:id'], ['POST', '/merchants'],
  ['POST', '/payouts/:id/approve'], ['POST', '/payouts/:id/decline'], ['POST', '/events/:id/redeliver'],
  ['POST', '/merchants/:id/balance-adjustments'], ['POST', '/merchants/:id/events/redeliver-dead'], ['POST', '/merchants/:id/payout-accounts'],
  ['POST', '/merchants/:id/shops'], ['POST', '/merchants/:id/token'], ['PUT', '/rates/:id'], ['DELETE', '/rates/:id'],
  ['PUT', '/merchants/:id/payout-webhook'],
];
const FIELDS = ['name', 'email', 'password', 'status', 'verified', 'subscription', 'grants', 'refunds', 'regular_payouts', 'payout_daily_limit',
  'payout_monthly_limit', 'moderation_threshold', 'payout_max_card', 'payout_max_sbp', 'fees', 'payment_card_percent', 'enabled',
  'default_currency', 'result_url', 'success_url', 'fail_url', 'url', 'type', 'identifier', 'card_holder', 'bank_member_id',
  'currency', 'amount', 'reason', 'rub_per_unit', 'active', 'merchant_id', 'limit', 'kind', 'before_id'];

const nasty = fc.constantFrom(
  '1e309', '1e30000000', '-1e600000000', '1e-30000000', '9'.repeat(3000), '1E+99999999', 'NaN', '-1', '0', '0.001', '99999999.99', '1e20', '100000000000000000000000', "' OR 1=1 --", '\u0000', 'x'.repeat(3000), '💳',
  'active', 'banned', 'ACTIVE', 'inactive', 'none', 'card', 'sbp', 'RUB', 'USD', 'EUR', 'XXX', 'true', 'false', '4242424242424242',
  '+79161234567', '100000000111', 'http://127.0.0.1/x', 'https://example.com/r', 'ftp://x', 'pending', 'dead', '9223372036854775808',
);
const scalar = fc.oneof(nasty, fc.string({ maxLength: 30 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(''));
const value = fc.oneof({ weight: 6, arbitrary: scalar }, { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 2, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), scalar, { maxKeys: 4 }) });
const id = fc.oneof(fc.constantFrom('MERCHANT', 'SHOP', 'nope', '0', '-1', '9223372036854775808', '1e3', '%00', 'USD', '100000000111'), fc.string({ maxLength: 12 }));

describe('fuzzing the operator API', () => {
  it(`${RUNS} generated requests (seed ${SEED}): JSON, never 500, no trace`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          route: fc.integer({ min: 0, max: ROUTES.length - 1 }),
          id,
          body: fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 6 }),
          asQuery: fc.boolean(),
        }),
        async (rq) => {
          const [method, path] = ROUTES[rq.route]!;
          const realId = rq.id === 'MERCHANT' ? m.merchantId : rq.id === 'SHOP' ? m.shopId : rq.id;
          const url = `/admin/v1${path.replace(':id', encodeURIComponent(realId))}`;
          const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
          const res = method === 'GET' || rq.asQuery
            ? await t.app.inject({ method, url, headers: { authorization: headers.authorization }, query: Object.fromEntries(Object.entries(rq.body).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)])) })
            : await t.app.inject({ method, url, headers, payload: JSON.stringify(rq.body) });
          const ctx = `${method} ${url} ${JSON.stringify(rq.body).slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
          expect(res.statusCode, ctx).toBeLessThan(500);
          expect(res.headers['content-type'], ctx).toMatch(/^application\/json/);
          expect(res.body, ctx).not.toMatch(/<html|\n\s+at |"stack"/i);
        },
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  });
});
