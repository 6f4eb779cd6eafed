import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { payNewBill } from '../factories/payment.js';
import { formatDateTime } from '../../src/lib/time.js';
import { cabinetMerchant, signedIn, type CabinetClient, type CabinetMerchant } from './helpers.js';

/**
 * Issue 30 item 4: one time zone setting per merchant (Team page), used by every page of the
 * cabinet, its CSVs and the payer's receipt; the deployment's TZ until it is set.
 */
let t: TestApp;
let m: CabinetMerchant;
let c: CabinetClient;
let paid: { billId: string; paymentId: string };
let created: Date;

beforeAll(async () => {
  t = await setupTestApp({ TZ: 'Europe/Moscow' });
  m = await cabinetMerchant(t);
  c = await signedIn(t, m);
  paid = await payNewBill(t, m, { amount: '100.00', orderId: 'tz-1' });
  created = (await t.db.pool.query<{ created_at: Date }>('SELECT created_at FROM payments WHERE id = $1', [paid.paymentId])).rows[0]!.created_at;
});
afterAll(async () => { await t.close(); });

describe('the merchant\'s time zone', () => {
  test('until set, the cabinet writes times in the deployment\'s TZ', async () => {
    const r = await c.get(`/cabinet/payments?lang=en`);
    expect(r.body).toContain(formatDateTime(created, 'Europe/Moscow'));
  });

  test('a name the runtime does not know is refused on its field and stores nothing', async () => {
    const r = await c.submit('/cabinet/team', '/cabinet/team/time-zone', { time_zone: 'Mars/Olympus' });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('id="err-time_zone"');
    expect((await t.db.pool.query('SELECT time_zone FROM merchants WHERE id = $1', [m.merchantId])).rows[0].time_zone).toBeNull();
  });

  test('once set (audited), the lists, the payment page and the CSV write times in it; the API keeps the deployment\'s', async () => {
    const r = await c.submit('/cabinet/team', '/cabinet/team/time-zone', { time_zone: 'Asia/Vladivostok' });
    expect(r.statusCode).toBe(303);
    const audit = await t.db.pool.query("SELECT before, after FROM audit_log WHERE action = 'merchant.time_zone' AND object_id = $1", [m.merchantId]);
    expect(audit.rows).toEqual([{ before: { time_zone: null }, after: { time_zone: 'Asia/Vladivostok' } }]);
    const local = formatDateTime(created, 'Asia/Vladivostok');
    expect(local).not.toBe(formatDateTime(created, 'Europe/Moscow'));
    expect((await c.get('/cabinet/payments?lang=en')).body).toContain(local);
    expect((await c.get(`/cabinet/payments/${paid.paymentId}?lang=en`)).body).toContain(local);
    expect((await c.get('/cabinet/payments/export.csv?lang=en')).body).toContain(local);
    const team = await c.get('/cabinet/team?lang=en');
    expect(team.body).toMatch(/<option value="Asia\/Vladivostok" selected>/);
    const api = await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${paid.paymentId}`, headers: m.auth });
    expect(api.json().created_at).toBe(formatDateTime(created, 'Europe/Moscow'));
  });
});
