import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createPaidPayment, type PaidPayment } from '../factories/paid-payment.js';
import { createBill, heldPayment, payRequest, savedCardOf } from '../factories/payment.js';
import { card, fund, insertAccount } from '../payout/helpers.js';
import { admin } from '../admin/helpers.js';

/**
 * One amount format at every money input of the merchant API, the operator API and the payer's
 * page (docs/adr/0077-one-amount-format.md): digits with an optional dot and at most two
 * decimals; a JSON number read by the digits the client sent. A mistyped amount (`1e3`,
 * `+10`, `10.`, a stray space) is a 422 naming the format, and nothing is created, charged or
 * moved. The cabinet, the console and the CLI: test/cabinet/amount-format.test.ts,
 * test/operator/console-formats.test.ts, test/admin/cli.test.ts.
 */
let t: TestApp;
let m: MerchantFixture;
let paid: PaidPayment;
let methodId: string;
let heldId: string;
let accountId: string;

beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000', RATE_LIMIT_PER_TOKEN: '0', RATE_LIMIT_PER_IP: '0' });
  m = await createMerchant(t, { merchant: { verified: true, grantRefunds: true, grantRegularPayouts: true, paymentCardPercent: '0', paymentCardFixed: '0' } });
  paid = await createPaidPayment(t, m, { amount: '500.00' });
  methodId = await savedCardOf(t, m);
  heldId = await heldPayment(t, m, '250.00');
  await fund(t, m.merchantId, '5000');
  accountId = await insertAccount(t, m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
});
afterAll(async () => { await t.close(); });

/** Texts that are not the amount format; `-5` where no debit is meant. */
const BAD_TEXT = ['1e3', '1E2', ' 10', '10 ', '10.', '+10', '-5', '10.001', '.5', '1 000', '10,5', '0x10'];
/** JSON number tokens (sent as they are, not as strings) whose digits are not the format. */
const BAD_JSON_NUMBERS = ['1e3', '1E2', '1e+3', '1.5e2', '100.000', '10.001', '-5'];
const FORMAT = /digits with an optional dot and at most 2 decimals/;

/** Everything an amount could have created, charged or moved. */
const state = async () => JSON.stringify((await t.db.pool.query(`SELECT
  (SELECT count(*) FROM bills) bills, (SELECT count(*) FROM payments) payments, (SELECT count(*) FROM payouts) payouts,
  (SELECT count(*) FROM refunds) refunds, (SELECT count(*) FROM chargebacks) chargebacks, (SELECT count(*) FROM ledger_entries) entries,
  (SELECT json_agg(b ORDER BY merchant_id, currency) FROM balances b) balances,
  (SELECT json_agg(json_build_array(id, status, capture_amount, amount_received) ORDER BY id) FROM payments) payment_rows`)).rows[0]);

/** A JSON body with `amount` spliced in as a raw token. */
const rawJson = (fields: Record<string, unknown>, token: string) => JSON.stringify({ ...fields, amount: '\u0000' }).replace('"\\u0000"', token);

interface Entry { name: string; url: string; auth: () => Record<string, string>; fields: () => Record<string, unknown>; method?: 'POST' | 'PUT' }
const merchantAuth = () => m.auth;
const adminAuth = () => ({ authorization: `Bearer ${ADMIN_TOKEN}` });

const ENTRIES: Entry[] = [
  { name: 'bill/create', url: '/api/v1/bill/create', auth: merchantAuth, fields: () => ({ shop_id: m.shopId }) },
  { name: 'payment/charge', url: '/api/v1/payment/charge', auth: merchantAuth, fields: () => ({ payment_method_id: methodId }) },
  { name: 'refund/partial/create', url: '/api/v1/refund/partial/create', auth: merchantAuth, fields: () => ({ payment_id: paid.paymentId }) },
  { name: 'payout/regular/create', url: '/api/v1/payout/regular/create', auth: merchantAuth, fields: () => { const { amount: _a, ...rest } = card('1'); return rest; } },
  { name: 'payout/personal/create', url: '/api/v1/payout/personal/create', auth: merchantAuth, fields: () => ({ payout_account_id: accountId }) },
  { name: 'operator capture', url: '/admin/v1/payments/{held}/capture', auth: adminAuth, fields: () => ({}) },
  { name: 'operator chargeback', url: '/admin/v1/payments/{paid}/chargebacks', auth: adminAuth, fields: () => ({ reason: 'bank dispute' }) },
];
const urlOf = (e: Entry) => e.url.replace('{held}', heldId).replace('{paid}', paid.paymentId);

function expectFormatError(r: { statusCode: number; body: string }, what: string) {
  expect(r.statusCode, `${what}: ${r.body}`).toBe(422);
  expect(JSON.parse(r.body).errors.amount?.[0], what).toMatch(FORMAT);
}

describe('1e3 is not 1000', () => {
  it('1e3 is refused by bill/create, payment/charge and the operator capture (text, form and JSON number): no bill, nothing charged, the hold untouched', async () => {
    const before = await state();
    for (const e of ENTRIES.filter((x) => ['bill/create', 'payment/charge', 'operator capture'].includes(x.name))) {
      const sends = [
        t.app.inject({ method: 'POST', url: urlOf(e), headers: e.auth(), payload: { ...e.fields(), amount: '1e3' } }),
        t.app.inject({ method: 'POST', url: urlOf(e), headers: { ...e.auth(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ ...(e.fields() as Record<string, string>), amount: '1e2' }).toString() }),
        t.app.inject({ method: 'POST', url: urlOf(e), headers: { ...e.auth(), 'content-type': 'application/json' }, payload: rawJson(e.fields(), '1e3') }),
      ];
      for (const r of await Promise.all(sends)) expect(r.statusCode, `${e.name}: ${r.body}`).toBe(422);
    }
    expect(await state()).toBe(before);
  });
});

describe('an amount not in the format is a 422 naming it at every entry, and nothing is created, charged or moved', () => {
  it.each(ENTRIES.map((e) => [e.name, e] as const))('%s: every bad text as a form field and a JSON string', async (_n, e) => {
    const before = await state();
    for (const amount of BAD_TEXT) {
      const form = new URLSearchParams({ ...(e.fields() as Record<string, string>), amount }).toString();
      expectFormatError(await t.app.inject({ method: 'POST', url: urlOf(e), headers: { ...e.auth(), 'content-type': 'application/x-www-form-urlencoded' }, payload: form }), `${e.name} form ${JSON.stringify(amount)}`);
      expectFormatError(await t.app.inject({ method: 'POST', url: urlOf(e), headers: e.auth(), payload: { ...e.fields(), amount } }), `${e.name} JSON ${JSON.stringify(amount)}`);
    }
    expect(await state()).toBe(before);
  });

  it.each(ENTRIES.map((e) => [e.name, e] as const))('%s: a JSON number is read by its digits (1e3, 100.000 refused)', async (_n, e) => {
    const before = await state();
    for (const token of BAD_JSON_NUMBERS) {
      const r = await t.app.inject({ method: 'POST', url: urlOf(e), headers: { ...e.auth(), 'content-type': 'application/json' }, payload: rawJson(e.fields(), token) });
      expectFormatError(r, `${e.name} ${token}`);
    }
    expect(await state()).toBe(before);
  });

  it('operator rates: an exponent, a sign or a space is refused; six decimals are the rate\'s format', async () => {
    const before = await state();
    for (const rub_per_unit of ['9e1', '+90', ' 90', '90.', '90.1234567']) {
      const r = await admin(t, 'PUT', '/rates/USD', { rub_per_unit });
      expect(r.status, rub_per_unit).toBe(422);
      expect(r.body.errors.rub_per_unit[0]).toMatch(/at most 6 decimals/);
    }
    expect(await state()).toBe(before);
    expect((await admin(t, 'PUT', '/rates/USD', { rub_per_unit: '92.123456' })).status).toBe(200);
  });

  it('operator balance adjustment: a leading minus debits, nothing else outside the format is taken', async () => {
    const before = await state();
    for (const amount of ['1e3', '1E2', ' 10', '10 ', '10.', '+10', '--5', '- 5', '5-', '1.123456789']) {
      const r = await admin(t, 'POST', `/merchants/${m.merchantId}/balance-adjustments`, { amount, currency: 'RUB', reason: 'format' });
      expect(r.status, amount).toBe(422);
      expect(r.body.errors.amount[0], amount).toMatch(/optional leading minus/);
    }
    expect(await state()).toBe(before);
    const debit = await admin(t, 'POST', `/merchants/${m.merchantId}/balance-adjustments`, { amount: '-5', currency: 'RUB', reason: 'debit' });
    expect(debit.status, JSON.stringify(debit.body)).toBe(201);
    expect(debit.body.amount).toBe('-5.00000000');
  });

  it('operator merchant limits and fees: an exponent is refused (422 on the field), nothing changes', async () => {
    const row = async () => JSON.stringify((await t.db.pool.query(`SELECT payout_daily_limit, payout_max_card, payment_card_percent, payment_card_fixed FROM merchants WHERE id = $1`, [m.merchantId])).rows[0]);
    const before = await row();
    for (const [field, body] of [
      ['payout_daily_limit', { payout_daily_limit: '1e6' }], ['payout_max_card', { payout_max_card: '+100' }],
      ['fees.payment_card_percent', { fees: { payment_card_percent: '1e1' } }], ['fees.payment_card_fixed', { fees: { payment_card_fixed: '1.005' } }],
    ] as const) {
      const r = await admin(t, 'PATCH', `/merchants/${m.merchantId}`, body);
      expect(r.status, field).toBe(422);
      expect(Object.keys(r.body.errors), field).toContain(field);
    }
    expect(await row()).toBe(before);
  });

  it('bill items: a price or a quantity in exponent form is refused, no bill', async () => {
    const before = await state();
    for (const item of [{ name: 'x', price: '1e2', quantity: 1 }, { name: 'x', price: '10', quantity: '1e1' }, { name: 'x', price: ' 10', quantity: 1 }]) {
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '10', shop_id: m.shopId, items: [item] } });
      expect(r.statusCode, JSON.stringify(item)).toBe(422);
      expect(r.json().errors.items, JSON.stringify(item)).toBeDefined();
    }
    expect(await state()).toBe(before);
  });
});

describe('amounts the format takes', () => {
  it('JSON numbers clients send (150.5, 99, 100.0, 150.50) and strings are bills of those amounts', async () => {
    for (const [token, stored] of [['150.5', '150.50'], ['99', '99.00'], ['100.0', '100.00'], ['150.50', '150.50'], ['"0.01"', '0.01'], ['"99999999.99"', '99999999.99']]) {
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: { ...m.auth, 'content-type': 'application/json' }, payload: rawJson({ shop_id: m.shopId }, token!) });
      expect(r.statusCode, `${token} ${r.body}`).toBe(200);
      const row = (await t.db.pool.query(`SELECT amount::text FROM bills WHERE id = $1`, [r.json().bill_id])).rows[0];
      expect(row.amount, token).toBe(stored);
    }
  });

  it('a charge of 10.00 and a capture of 100 go through (the refusals above are the format, not the setup)', async () => {
    const c = await t.app.inject({ method: 'POST', url: '/api/v1/payment/charge', headers: m.auth, payload: { payment_method_id: methodId, amount: '10.00' } });
    expect(c.statusCode, c.body).toBe(200);
    expect(c.json()).toMatchObject({ status: 'SUCCESS', amount: 10 });
    const cap = await admin(t, 'POST', `/payments/${heldId}/capture`, { amount: 100 });
    expect(cap.status, JSON.stringify(cap.body)).toBe(200);
    expect(cap.body.amount).toBe('100.00');
  });
});

describe('the payer\'s page (SBP amount)', () => {
  it('an exponent, a sign, a bare dot or three decimals are 422 on the amount, no payment; surrounding spaces are dropped (a person typed it)', async () => {
    const billId = await createBill(t, m, { amount: '100.00', paymentMethod: 'SBP' });
    const payments = async () => (await t.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE bill_id = $1`, [billId])).rows[0].n;
    for (const amount of ['1e3', '1E2', '10.', '+10', '-5', '10.001', '.5', '1 000']) {
      const r = await payRequest(t, billId, { method: 'SBP', amount });
      expect(r.statusCode, amount).toBe(422);
      expect(r.json().errors.amount, amount).toBeDefined();
    }
    const json = await t.app.inject({ method: 'POST', url: `/pay/${billId}`, headers: { accept: 'application/json', 'content-type': 'application/json' }, payload: '{"method":"SBP","amount":1e2}' });
    expect(json.statusCode).toBe(422);
    expect(await payments()).toBe(0);
    const ok = await payRequest(t, billId, { method: 'SBP', amount: ' 10 ' });
    expect(ok.statusCode, ok.body).toBe(200);
  });
});
