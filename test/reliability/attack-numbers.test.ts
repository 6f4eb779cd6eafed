import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { admin } from '../admin/helpers.js';
import { cabinetMerchant, signedIn, type CabinetClient, type CabinetMerchant } from '../cabinet/helpers.js';

/**
 * Attack (issue 19.1): a number with a huge exponent or thousands of digits, formatted or
 * computed with before its range was checked, blocked the event loop for seconds
 * (`1e30000000`) or exhausted the heap (`1e600000000`). Every face must refuse it by its text,
 * quickly, with its usual answer for a bad amount, and change nothing.
 */
let t: TestApp;
let m: MerchantFixture;
let cm: CabinetMerchant;
let cab: CabinetClient;
let billId: string;

beforeAll(async () => {
  t = await setupTestApp({ RATE_LIMIT_PER_TOKEN: '0', RATE_LIMIT_PER_IP: '0' });
  m = await createMerchant(t, { merchant: { verified: true, grantRefunds: true, grantRegularPayouts: true } });
  cm = await cabinetMerchant(t, { merchant: { verified: true } });
  cab = await signedIn(t, cm);
  const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '100.00', shop_id: m.shopId, type: 'multi' } });
  billId = bill.json().bill_id;
});
afterAll(async () => { await t.close(); });

// Without the bound, '1e30000000' alone took about 3 s per request and '1e600000000' ran the
// process out of heap; both are sent, the slower only after the faster was refused quickly.
const HUGE = ['1e30000000', '-1e30000000', '1e-30000000', '9'.repeat(5000), `0.${'0'.repeat(4000)}1`, '1e600000000'];
const QUICK_MS = 1000;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; r: T }> {
  const t0 = performance.now();
  const r = await fn();
  return { ms: performance.now() - t0, r };
}

const counts = async () => JSON.stringify((await t.db.pool.query(`SELECT (SELECT count(*) FROM bills) b, (SELECT count(*) FROM payouts) p,
  (SELECT count(*) FROM refunds) r, (SELECT count(*) FROM ledger_entries) l, (SELECT count(*) FROM fx_rates) x, (SELECT count(*) FROM payout_accounts) a`)).rows[0]);

describe('numbers with huge exponents or thousands of digits are refused by their text', () => {
  test('merchant API: payout, bill, refund amounts answer 422 on the field at once, nothing stored', async () => {
    const before = await counts();
    for (const amount of HUGE) {
      for (const [url, body] of [
        ['/api/v1/payout/personal/create', { amount, payout_account_id: 'nope', order_id: 'o1' }],
        ['/api/v1/payout/regular/create', { amount, currency: 'RUB', account_type: 'sbp', account_identifier: '+79001234567', account_bank: 1 }],
        ['/api/v1/bill/create', { amount, shop_id: m.shopId }],
        ['/api/v1/refund/partial/create', { payment_id: 'nope', amount }],
      ] as const) {
        const { ms, r } = await timed(() => t.app.inject({ method: 'POST', url, headers: m.auth, payload: body }));
        expect(r.statusCode, `${url} ${amount.slice(0, 20)}`).toBe(422);
        expect(r.json().errors.amount, url).toBeDefined();
        expect(ms, `${url} ${amount.slice(0, 20)}`).toBeLessThan(QUICK_MS);
      }
    }
    expect(await counts()).toBe(before);
  });

  test('an exponent is not the amount format (422 on the field); a plain amount out of range keeps its endpoint answer (invalid_amount)', async () => {
    for (const amount of ['1e20', '1e309', '-1e309']) {
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount, shop_id: m.shopId } });
      expect(r.statusCode, amount).toBe(422);
      expect(r.json().errors.amount[0]).toMatch(/digits with an optional dot and at most 2 decimals/);
    }
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '100000000.00', shop_id: m.shopId } });
    expect(r.statusCode).toBe(403);
    expect(r.json().message).toBe('api:error.invalid_amount');
  });

  test('operator API: adjustments, rates and merchant limits answer 422 on the field at once', async () => {
    const before = await counts();
    for (const amount of HUGE) {
      for (const [method, url, body, field] of [
        ['POST', `/merchants/${m.merchantId}/balance-adjustments`, { amount, currency: 'RUB', reason: 'x' }, 'amount'],
        ['PUT', '/rates/USD', { rub_per_unit: amount }, 'rub_per_unit'],
        ['PATCH', `/merchants/${m.merchantId}`, { payout_daily_limit: amount }, 'payout_daily_limit'],
        ['PATCH', `/merchants/${m.merchantId}`, { fees: { payment_card_percent: amount } }, 'fees.payment_card_percent'],
      ] as const) {
        const { ms, r } = await timed(() => admin(t, method, url, body));
        expect(r.status, `${url} ${amount.slice(0, 20)}`).toBe(422);
        expect(r.body.errors[field], `${url} ${JSON.stringify(r.body)}`).toBeDefined();
        expect(ms, `${url} ${amount.slice(0, 20)}`).toBeLessThan(QUICK_MS);
      }
    }
    expect(await counts()).toBe(before);
  });

  test('payment page: the SBP amount is refused (422 amount) at once', async () => {
    for (const amount of HUGE) {
      const { ms, r } = await timed(() => t.app.inject({
        method: 'POST', url: `/pay/${billId}`, headers: { accept: 'application/json' }, payload: { method: 'SBP', amount },
      }));
      expect(r.statusCode).toBe(422);
      expect(r.json().errors.amount).toBeDefined();
      expect(ms).toBeLessThan(QUICK_MS);
    }
    expect((await t.db.pool.query('SELECT count(*)::int n FROM payments')).rows[0].n).toBe(0);
  });

  test('cabinet: payout and bill forms show the amount error (422 page) at once', async () => {
    const before = await counts();
    for (const amount of HUGE) {
      for (const [from, url, form] of [
        ['/cabinet/payouts/new', '/cabinet/payouts', { amount, payout_account_id: 'nope' }],
        ['/cabinet/bills/new', '/cabinet/bills', { amount, shop_id: cm.shopId }],
      ] as const) {
        const { ms, r } = await timed(() => cab.submit(from, url, form));
        expect(r.statusCode, `${url} ${amount.slice(0, 20)}`).toBe(422);
        expect(r.headers['content-type']).toMatch(/text\/html/);
        expect(ms, `${url} ${amount.slice(0, 20)}`).toBeLessThan(QUICK_MS * 2);
      }
    }
    expect(await counts()).toBe(before);
  });
});

describe('surrounding whitespace: refused by the machine faces, dropped by the forms people type in (decision)', () => {
  test('merchant API and operator API refuse "  10 " (422 on the amount); the pay page and the cabinet read it as 10', async () => {
    const before = await counts();
    const api = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '  10 ', shop_id: m.shopId } });
    expect(api.statusCode).toBe(422);
    expect(api.json().errors.amount).toBeDefined();
    const adj = await admin(t, 'POST', `/merchants/${m.merchantId}/balance-adjustments`, { amount: ' 10 ', currency: 'RUB', reason: 'whitespace' });
    expect(adj.status).toBe(422);
    expect(await counts()).toBe(before);

    const bill = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '10', shop_id: m.shopId } });
    const id = bill.json().bill_id;
    const pay = await t.app.inject({ method: 'POST', url: `/pay/${id}`, headers: { accept: 'application/json' }, payload: { method: 'SBP', amount: ' 10 ' } });
    expect(pay.statusCode).toBe(200);

    const c = await cab.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '  10 ', shop_id: cm.shopId });
    expect(c.statusCode).toBe(303);
    const row = await t.db.pool.query('SELECT amount::text FROM bills WHERE merchant_id = $1', [cm.merchantId]);
    expect(row.rows.map((x) => x.amount)).toEqual(['10.00']);
  });

  test('whitespace inside a number, or other text around it, is not a number', async () => {
    for (const amount of ['1 0', '1,5', '10 RUB', '+ 10']) {
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount, shop_id: m.shopId } });
      expect(r.statusCode, JSON.stringify(amount)).toBe(422);
    }
  });
});
