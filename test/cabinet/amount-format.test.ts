import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { heldPayment, payNewBill } from '../factories/payment.js';
import { cabinetMerchant, signedIn, type CabinetClient, type CabinetMerchant } from './helpers.js';

/**
 * The cabinet's amount fields (docs/adr/0077-one-amount-format.md): people's marks are taken
 * ("1 500,00", "1,234.50", a pasted space around the number), then the API's one format, so
 * an exponent, a sign, a bare dot or a third decimal is refused on the field and nothing is
 * created, captured, refunded or paid out.
 */
let t: TestApp;
let m: CabinetMerchant;
let c: CabinetClient;
let paidId: string;
let heldId: string;
let accountId: string;

beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true, paymentCardPercent: '0', paymentCardFixed: '0' } });
  c = await signedIn(t, m);
  paidId = (await payNewBill(t, m, { amount: '1000.00' })).paymentId;
  heldId = await heldPayment(t, m, '250.00');
  accountId = (await t.app.services.payoutAccounts.create(m.merchantId, { type: 'card', identifier: '4111111111111111', cardHolder: 'IVAN IVANOV' })).id;
});
afterAll(async () => { await t.close(); });

const BAD = ['1e3', '1E2', '10.', '+10', '-5', '10.001', '1 500,001', '-1 500,00', '1e3 ', '1 0'];

const state = async () => JSON.stringify((await t.db.pool.query(`SELECT
  (SELECT count(*) FROM bills WHERE merchant_id = $1) bills, (SELECT count(*) FROM payouts WHERE merchant_id = $1) payouts,
  (SELECT count(*) FROM refunds WHERE merchant_id = $1) refunds, (SELECT json_agg(b ORDER BY currency) FROM balances b WHERE merchant_id = $1) balances,
  (SELECT json_agg(json_build_array(id, status, capture_amount, amount_received) ORDER BY id) FROM payments WHERE merchant_id = $1) payments`, [m.merchantId])).rows[0]);

describe('cabinet amount fields', () => {
  test('bill, capture, partial refund and payout forms refuse every amount outside the format on the field; nothing changes', async () => {
    const forms: [string, string, Record<string, string>][] = [
      ['/cabinet/bills/new', '/cabinet/bills', { shop_id: m.shopId }],
      [`/cabinet/payments/${heldId}`, `/cabinet/payments/${heldId}/capture`, {}],
      [`/cabinet/payments/${paidId}`, `/cabinet/payments/${paidId}/refund`, { mode: 'partial' }],
      ['/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: accountId }],
    ];
    const before = await state();
    for (const lang of ['ru', 'en']) {
      await c.get(`/cabinet?lang=${lang}`);
      for (const [from, url, form] of forms) {
        for (const amount of BAD) {
          const r = await c.submit(from, url, { ...form, amount });
          expect(r.statusCode, `${lang} ${url} ${JSON.stringify(amount)}`).toBe(422);
          expect(r.body, `${lang} ${url} ${JSON.stringify(amount)}`).toContain('id="err-amount"');
        }
      }
    }
    expect(await state()).toBe(before);
  });

  test('people\'s marks and a pasted space are the same amount: " 1 500,50 " (ru) and " 1,500.50" (en) are bills of 1500.50', async () => {
    await c.get('/cabinet?lang=ru');
    expect((await c.submit('/cabinet/bills/new', '/cabinet/bills', { shop_id: m.shopId, amount: ' 1 500,50 ', order_id: 'typed-ru' })).statusCode).toBe(303);
    await c.get('/cabinet?lang=en');
    expect((await c.submit('/cabinet/bills/new', '/cabinet/bills', { shop_id: m.shopId, amount: ' 1,500.50', order_id: 'typed-en' })).statusCode).toBe(303);
    const rows = await t.db.pool.query(`SELECT order_id, amount::text FROM bills WHERE merchant_id = $1 AND order_id LIKE 'typed-%' ORDER BY order_id`, [m.merchantId]);
    expect(rows.rows).toEqual([{ order_id: 'typed-en', amount: '1500.50' }, { order_id: 'typed-ru', amount: '1500.50' }]);
  });
});
