import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill, payRequest } from '../factories/payment.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

/**
 * The statement that finishes a payment (pay_finish) runs once per payment. Since payments are
 * partitioned by month, a lookup by id alone visits every month's partition, and its "is this
 * the bill's latest payment" anti-join was planned as a hash over a sequential scan of the
 * month's payments: every payment read the whole month; its
 * latest-payment check then probed every month kept (now the bill records its latest payment,
 * and the check over payments is for bills that do not; docs/performance.md "The latest payment
 * of a bill").
 */
describe('the payment finishing statement', () => {
  it('updates the one partition of its payment, never scans the month of payments, and looks for later payments of the bill from its month on', async () => {
    const m = await createMerchant(t);
    // A month with payments in it, its statistics known.
    await t.db.pool.query(
      `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type, status)
       SELECT 'F' || lpad(to_hex(n), 9, '0'), $1, $2, 100.00, 'RUB', 'NORMAL', 'SUCCESS' FROM generate_series(1, 3000) n`, [m.merchantId, m.shopId]);
    await t.db.pool.query(
      `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, bill_currency, account_currency)
       SELECT 'FP' || lpad(to_hex(n), 9, '0'), 'F' || lpad(to_hex(n), 9, '0'), $1, $2, 'SUCCESS', 'BANK_CARD', 100.00, 'RUB', 'RUB'
         FROM generate_series(1, 3000) n`, [m.merchantId, m.shopId]);
    // Two earlier months kept, with payments in them.
    const earlier: string[] = [];
    for (const k of [1, 2]) {
      const at = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - k, 15));
      await t.db.pool.query(`SELECT create_month_partition('payments', $1::date)`, [at.toISOString().slice(0, 10)]);
      earlier.push(`payments_p${at.getUTCFullYear()}_${String(at.getUTCMonth() + 1).padStart(2, '0')}`);
      await t.db.pool.query(
        `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, bill_currency, account_currency, created_at)
         SELECT 'E${k}' || lpad(to_hex(n), 9, '0'), 'F' || lpad(to_hex(n), 9, '0'), $1, $2, 'SUCCESS', 'BANK_CARD', 100.00, 'RUB', 'RUB', $3
           FROM generate_series(1, 100) n`, [m.merchantId, m.shopId, at]);
    }
    await t.db.pool.query('ANALYZE payments');

    // The statement as the service sends it, caught on its way to the pool.
    let finish: { text: string; values: unknown[] } | null = null;
    const pool = t.db.pool;
    const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
    (pool as unknown as { query: (...a: unknown[]) => unknown }).query = (cfg: unknown, ...rest: unknown[]) => {
      if (typeof cfg === 'object' && cfg !== null && (cfg as { name?: string }).name === 'pay_finish') finish = cfg as { text: string; values: unknown[] };
      return query(cfg, ...rest);
    };
    try {
      const res = await payRequest(t, await createBill(t, m));
      expect(res.statusCode).toBe(200);
      expect(res.json().status).toBe('SUCCESS');
    } finally {
      delete (pool as unknown as { query?: unknown }).query;
    }
    expect(finish).not.toBeNull();
    const { text, values } = finish!;

    const plan = (await t.db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values)).rows.map((r) => r['QUERY PLAN']).join('\n');
    const month = (await t.db.pool.query<{ p: string }>(
      `SELECT c.relname AS p FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'payments'::regclass AND c.relname LIKE 'payments_p%' ORDER BY c.reltuples DESC LIMIT 1`)).rows[0]!.p;
    // The payment's own partition only (its creation time is the partition key).
    expect(plan.match(/Update on payments_\w+/g) ?? []).toEqual([`Update on ${month}`]);
    // The month's payments are reached by index, never read whole.
    expect(plan).not.toMatch(new RegExp(`Seq Scan on ${month}\\b`));
    // "Is this the bill's latest payment", for a bill that does not record it (last paid before
    // bills.last_payment_id), looks from the payment's month on: no earlier month's partition is
    // in the plan, however many months are kept.
    for (const p of earlier) expect(plan).not.toContain(p);
    expect(plan).toMatch(new RegExp(`Index Scan Backward using ${month}_bill_id_created_at_idx`));
  });
});
