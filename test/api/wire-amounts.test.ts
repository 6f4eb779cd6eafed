import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createPaidPayment, type PaidPayment } from '../factories/paid-payment.js';
import { createBill } from './support.js';
import { card, fund, regular } from '../payout/helpers.js';

/**
 * The JSON type of every client-visible amount (docs/adr/0001-money-as-decimal-and-wire-amounts.md):
 * bill, payment, payout and refund amounts are JSON numbers (go-cent-app decodes them into
 * float64 and fails on a string), balances are 8-decimal JSON strings (go-cent-app decodes them
 * with `,string` and fails on a number). Each row checks the parsed type and the raw text.
 */

let t: TestApp;
let m: MerchantFixture;
let billId: string;
let paid: PaidPayment;
let payoutId: string;
let refundId: string;
const raw: Record<string, string> = {};

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: m.auth });
const post = (url: string, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, headers: m.auth, payload });

beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t, {
    merchant: { verified: true, grantRegularPayouts: true, grantRefunds: true, payoutCardPercent: '1', payoutCardFixed: '0.40' },
  });
  billId = await createBill(t, m, { amount: '77.50', type: 'multi' });
  paid = await createPaidPayment(t, m, { amount: '1234.50', commission: '12.30' });
  await fund(t, m.merchantId, '500');
  const refund = await post('/api/v1/refund/partial/create', { payment_id: paid.paymentId, amount: '10.25' });
  expect(refund.statusCode, refund.body).toBe(200);
  refundId = refund.json().id;
  raw['refund/create'] = refund.body;
  const payout = await regular(t, m, card('12.50'));
  expect(payout.statusCode, payout.body).toBe(200);
  payoutId = payout.json().data[0].id;
  raw['payout/create'] = payout.body;

  raw['bill/status'] = (await get(`/api/v1/bill/status?id=${billId}`)).body;
  raw['bill/search'] = (await get('/api/v1/bill/search')).body;
  raw['bill/toggle_activity'] = (await post('/api/v1/bill/toggle_activity', { id: billId, active: 1 })).body;
  raw['bill/payments'] = (await get(`/api/v1/bill/payments?id=${paid.billId}`)).body;
  raw['payment/status'] = (await get(`/api/v1/payment/status?id=${paid.paymentId}`)).body;
  raw['payment/search'] = (await get('/api/v1/payment/search')).body;
  raw['payout/status'] = (await get(`/api/v1/payout/status?id=${payoutId}`)).body;
  raw['payout/search'] = (await get('/api/v1/payout/search')).body;
  raw['refund/status'] = (await get(`/api/v1/refund/status?id=${refundId}`)).body;
  raw['merchant/balance'] = (await get('/api/v1/merchant/balance')).body;
});
afterAll(async () => { await t.close(); });

type Pick = (body: any) => unknown; // eslint-disable-line @typescript-eslint/no-explicit-any
const bill: Pick = (b) => (b.data ? b.data.find((x: { id: string }) => x.id === billId) : b);
const payment: Pick = (b) => (b.data ? b.data.find((x: { id: string }) => x.id === paid.paymentId) : b);
const payout: Pick = (b) => (b.data ? b.data.find((x: { id: string }) => x.id === payoutId) : b);
const rub: Pick = (b) => b.balances.find((x: { currency: string }) => x.currency === 'RUB');

/** [endpoint, field, the object carrying it, expected value, raw JSON text of the value] */
const NUMBERS: [string, string, Pick, number, string][] = [
  ['bill/status', 'amount', bill, 77.5, '77.5'],
  ['bill/search', 'amount', bill, 77.5, '77.5'],
  ['bill/toggle_activity', 'amount', bill, 77.5, '77.5'],
  ['bill/payments', 'amount', payment, 1234.5, '1234.5'],
  ['bill/payments', 'amount_received', payment, 1234.5, '1234.5'],
  ['bill/payments', 'commission', payment, 12.3, '12.3'],
  ['bill/payments', 'account_amount', payment, 1222.2, '1222.2'],
  ['bill/payments', 'refunded_amount', payment, 10.25, '10.25'],
  ['payment/status', 'amount', payment, 1234.5, '1234.5'],
  ['payment/status', 'amount_received', payment, 1234.5, '1234.5'],
  ['payment/status', 'commission', payment, 12.3, '12.3'],
  ['payment/status', 'account_amount', payment, 1222.2, '1222.2'],
  ['payment/status', 'refunded_amount', payment, 10.25, '10.25'],
  ['payment/search', 'amount', payment, 1234.5, '1234.5'],
  ['payment/search', 'amount_received', payment, 1234.5, '1234.5'],
  ['payment/search', 'commission', payment, 12.3, '12.3'],
  ['payment/search', 'account_amount', payment, 1222.2, '1222.2'],
  ['payment/search', 'refunded_amount', payment, 10.25, '10.25'],
  ['payout/create', 'amount', payout, 12.5, '12.5'],
  ['payout/create', 'commission', payout, 0.53, '0.53'],
  ['payout/status', 'amount', payout, 12.5, '12.5'],
  ['payout/status', 'commission', payout, 0.53, '0.53'],
  ['payout/search', 'amount', payout, 12.5, '12.5'],
  ['payout/search', 'commission', payout, 0.53, '0.53'],
  ['refund/create', 'amount', (b) => b, 10.25, '10.25'],
  ['refund/status', 'amount', (b) => b, 10.25, '10.25'],
];

describe('amounts on the wire', () => {
  it.each(NUMBERS)('%s %s is a JSON number (shortest form, never a string)', (endpoint, field, pick, value, text) => {
    const body = raw[endpoint]!;
    const obj = pick(JSON.parse(body)) as Record<string, unknown>;
    expect(obj, body).toBeDefined();
    expect(typeof obj[field]).toBe('number');
    expect(obj[field]).toBe(value);
    expect(body).toMatch(new RegExp(`"${field}":${text.replace('.', '\\.')}[,}]`));
    expect(body).not.toMatch(new RegExp(`"${field}":"`));
  });

  it.each(['balance_available', 'balance_locked', 'balance_hold'])(
    'merchant/balance %s is an 8-decimal JSON string (go-cent-app decodes it with ,string)',
    (field) => {
      const body = raw['merchant/balance']!;
      const obj = rub(JSON.parse(body)) as Record<string, unknown>;
      expect(typeof obj[field]).toBe('string');
      expect(obj[field]).toMatch(/^-?\d+\.\d{8}$/);
      expect(body).toMatch(new RegExp(`"${field}":"-?\\d+\\.\\d{8}"`));
    },
  );

  it('merchant/balance carries the exact amounts: available, locked by the refund and the payout, held commission', () => {
    const obj = rub(JSON.parse(raw['merchant/balance']!)) as Record<string, unknown>;
    // 1222.20 credited + 500 funded - 10.25 refund - 12.50 payout - 0.53 commission
    expect(obj).toMatchObject({ balance_available: '1698.92000000', balance_locked: '22.75000000', balance_hold: '0.53000000' });
  });

  it('a payment not credited yet answers account_amount null, the other amounts numbers', async () => {
    const p = await createPaidPayment(t, m, { amount: '5.00', status: 'NEW' });
    const body = (await get(`/api/v1/payment/status?id=${p.paymentId}`)).json();
    expect(body).toMatchObject({ amount: 5, amount_received: 0, commission: 0, account_amount: null, refunded_amount: 0 });
  });
});
