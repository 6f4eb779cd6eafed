import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { post } from '../../src/domain/ledger/ledger.js';
import { adjustment } from '../../src/domain/ledger/postings.js';
import { encrypt } from '../../src/lib/crypto.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { budget, sized } from './profile.js';

/**
 * Generated requests against every merchant endpoint and the payment form: whatever arrives,
 * the answer is JSON, never a 500, never a stack trace or HTML, and a rejected request changes
 * nothing. Seeded and reproducible: FUZZ_SEED, FUZZ_RUNS (1,000 in npm test, within the default
 * timeout; 10,000 in npm run test:reliability).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? sized(1000, 10_000));
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);

let t: TestApp;
let m: MerchantFixture;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await setupTestApp({ RATE_LIMIT_PER_TOKEN: '0', RATE_LIMIT_PER_IP: '0', PAY_ATTEMPTS_PER_BILL: '1000000', PAY_ATTEMPTS_PER_IP: '1000000' });
  m = await createMerchant(t, { merchant: { verified: true, grantRefunds: true, grantRegularPayouts: true } });
  await withPgTx(t.db.pool, (c) => post(c, adjustment({ adjustmentId: 'fuzz-fund', merchantId: m.merchantId, currency: 'RUB', amount: new Decimal('1000000') })));
  const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '100.00', shop_id: m.shopId, type: 'multi' } });
  ids.bill = bill.json().bill_id;
  const paid = await t.app.inject({
    method: 'POST', url: `/pay/${ids.bill}`, headers: { accept: 'application/json' },
    payload: { method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/39', card_cvc: '123' },
  });
  ids.payment = paid.json().payment_id;
  await t.db.pool.query(`INSERT INTO sbp_banks (member_id, name, name_en, bic) VALUES (100000000111, 'Сбербанк', 'Sberbank', '044525225') ON CONFLICT DO NOTHING`);
  const acct = await t.db.pool.query(
    `INSERT INTO payout_accounts (id, merchant_id, type, identifier_enc, identifier_masked, card_holder) VALUES ('fuzzacct00000001', $1, 'CARD', $2, '424242******4242', 'IVAN IVANOV') RETURNING id`,
    [m.merchantId, encrypt(t.config.tokenEncryptionKey, '4242424242424242')],
  );
  ids.account = acct.rows[0].id;
  ids.shop = m.shopId;
});
afterAll(async () => { await t.close(); });

type Endpoint = { method: 'GET' | 'POST'; url: string | (() => string); fields: string[]; auth: boolean };
const ENDPOINTS: Endpoint[] = [
  { method: 'POST', url: '/api/v1/bill/create', fields: ['amount', 'shop_id', 'order_id', 'description', 'type', 'currency_in', 'custom', 'payer_pays_commission', 'name', 'payment_method'], auth: true },
  { method: 'POST', url: '/api/v1/bill/toggle_activity', fields: ['id', 'active'], auth: true },
  { method: 'GET', url: '/api/v1/bill/payments', fields: ['id'], auth: true },
  { method: 'GET', url: '/api/v1/bill/status', fields: ['id'], auth: true },
  { method: 'GET', url: '/api/v1/bill/search', fields: ['start_date', 'finish_date', 'per_page', 'cursor', 'shop_id'], auth: true },
  { method: 'GET', url: '/api/v1/payment/status', fields: ['id'], auth: true },
  { method: 'GET', url: '/api/v1/payment/search', fields: ['start_date', 'finish_date', 'per_page', 'cursor', 'shop_id'], auth: true },
  { method: 'GET', url: '/api/v1/merchant/balance', fields: [], auth: true },
  { method: 'POST', url: '/api/v1/payout/personal/create', fields: ['amount', 'payout_account_id', 'order_id'], auth: true },
  { method: 'POST', url: '/api/v1/payout/regular/create', fields: ['amount', 'currency', 'account_type', 'account_identifier', 'account_bank', 'card_holder', 'order_id'], auth: true },
  { method: 'GET', url: '/api/v1/payout/status', fields: ['id', 'order_id'], auth: true },
  { method: 'GET', url: '/api/v1/payout/search', fields: ['start_date', 'finish_date', 'per_page', 'cursor'], auth: true },
  { method: 'GET', url: '/api/v1/payout/dictionaries/sbp_banks', fields: [], auth: true },
  { method: 'POST', url: '/api/v1/refund/full/create', fields: ['payment_id'], auth: true },
  { method: 'POST', url: '/api/v1/refund/partial/create', fields: ['payment_id', 'amount'], auth: true },
  { method: 'GET', url: '/api/v1/refund/status', fields: ['payment_id', 'id'], auth: true },
  { method: 'POST', url: () => `/pay/${ids.bill}`, fields: ['method', 'card_number', 'card_expiry', 'card_cvc', 'amount'], auth: false },
];

const nasty = fc.constantFrom(
  '1e309', '-1e309', '1e30000000', '-1e600000000', '1e-30000000', '9'.repeat(3000), `0.${'0'.repeat(3000)}1`, '1E+99999999', 'NaN', 'Infinity', '-1', '0', '0.00', '0.001', '1.005', '99999999.99', '100000000.00', '1,5', ' 10 ',
  "' OR 1=1 --", '"; DROP TABLE bills; --', '<script>alert(1)</script>', '\u0000', 'x'.repeat(5000), '💳', '../../etc/passwd',
  '4242424242424242', '4000000000000002', '12/39', '13/99', '00/00', '123', '+79001234567', '89001230002',
  'RUB', 'USD', 'EUR', 'XXX', 'credit_card', 'sbp', 'normal', 'multi', 'BANK_CARD', 'SBP', '1', '0', 'true', 'false',
  '2026-11-21', '2026-02-30', '2026-11-21 25:00:00', '1000', '1001', 'eyJ4Ijo',
);
const realId = fc.constantFrom('bill', 'payment', 'account', 'shop').map((k) => ids[k]!);
const scalar = fc.oneof(
  nasty, realId, fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }), fc.integer(), fc.double(),
  fc.boolean(), fc.constant(null), fc.constant(''),
);
const value = fc.oneof({ weight: 8, arbitrary: scalar }, { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 5 }), scalar, { maxKeys: 2 }) });

function multipart(fields: Record<string, unknown>): { body: string; type: string } {
  const b = `----fuzz${Math.random().toString(16).slice(2)}`;
  let body = '';
  for (const [k, v] of Object.entries(fields)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      body += `--${b}\r\nContent-Disposition: form-data; name="${k.replace(/"/g, '')}"\r\n\r\n${typeof item === 'object' ? JSON.stringify(item) : String(item)}\r\n`;
    }
  }
  return { body: `${body}--${b}--\r\n`, type: `multipart/form-data; boundary=${b}` };
}

function encodeForm(fields: Record<string, unknown>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) p.append(k, typeof item === 'object' ? JSON.stringify(item) : String(item));
  return p.toString();
}

async function snapshot(): Promise<string> {
  const r = await t.db.pool.query(`SELECT
    (SELECT count(*) FROM bills) AS bills, (SELECT md5(coalesce(string_agg(id || status || active::text, ',' ORDER BY id), '')) FROM bills) AS bill_state,
    (SELECT count(*) FROM payments) AS payments, (SELECT count(*) FROM payouts) AS payouts, (SELECT count(*) FROM refunds) AS refunds,
    (SELECT count(*) FROM ledger_entries) AS entries, (SELECT count(*) FROM ledger_transfers) AS transfers, (SELECT count(*) FROM outbox_events) AS events,
    (SELECT md5(string_agg(available::text || locked::text || hold::text, ',' ORDER BY merchant_id, currency)) FROM balances) AS balances`);
  return JSON.stringify(r.rows[0]);
}

describe('fuzzing every merchant endpoint and the payment form', () => {
  it(`${RUNS} generated requests (seed ${SEED}): JSON, never 500, no trace, no state change when rejected`, async () => {
    const request = fc.record({
      endpoint: fc.integer({ min: 0, max: ENDPOINTS.length - 1 }),
      known: fc.array(fc.tuple(fc.nat(), value), { maxLength: 8 }),
      extra: fc.dictionary(fc.string({ maxLength: 8 }), value, { maxKeys: 2 }),
      encoding: fc.constantFrom('json', 'form', 'multipart', 'query', 'text'),
      authRoll: fc.integer({ min: 0, max: 9 }),
    });
    await fc.assert(
      fc.asyncProperty(request, async (rq) => {
        const ep = ENDPOINTS[rq.endpoint]!;
        const fields: Record<string, unknown> = { ...rq.extra };
        for (const [i, v] of rq.known) if (ep.fields.length) fields[ep.fields[i % ep.fields.length]!] = v;
        const url = typeof ep.url === 'function' ? ep.url() : ep.url;
        const headers: Record<string, string> = {};
        if (ep.auth) headers.authorization = rq.authRoll === 0 ? 'Bearer nope' : m.auth.authorization;
        if (!ep.auth) headers.accept = 'application/json';
        let payload: string | undefined;
        let fullUrl = url;
        if (rq.encoding === 'query') fullUrl = `${url}?${encodeForm(fields)}`;
        else if (rq.encoding === 'json') { payload = JSON.stringify(fields); headers['content-type'] = 'application/json'; }
        else if (rq.encoding === 'form') { payload = encodeForm(fields); headers['content-type'] = 'application/x-www-form-urlencoded'; }
        else if (rq.encoding === 'multipart') { const mp = multipart(fields); payload = mp.body; headers['content-type'] = mp.type; }
        else { payload = JSON.stringify(fields); headers['content-type'] = 'text/plain'; }
        const before = await snapshot();
        const res = await t.app.inject({ method: ep.method, url: fullUrl, headers, payload });
        const ctx = `${ep.method} ${fullUrl} ${rq.encoding} ${payload?.slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
        expect(res.statusCode, ctx).toBeLessThan(500);
        expect(res.headers['content-type'], ctx).toMatch(/^application\/json/);
        expect(res.body, ctx).not.toMatch(/<html|\n\s+at |"stack"/i);
        const body = JSON.parse(res.body);
        if (res.statusCode >= 400) {
          expect(body.success, ctx).toBe(false);
          expect(await snapshot(), ctx).toBe(before);
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  }, budget(600_000));
});
