import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { DuplicatePostingError, post, verifyBalances } from '../../src/domain/ledger/ledger.js';
import { paymentReceived } from '../../src/domain/ledger/postings.js';
import { Decimal } from 'decimal.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { cardForm, createBill, DECLINED_CARD, payRequest } from '../factories/payment.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' }); });
afterAll(async () => { await t.close(); });

const rows = async (sql: string, params: unknown[] = []) => (await t.db.pool.query(sql, params)).rows;
const balance = async (merchantId: string) =>
  (await rows(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [merchantId]))[0].available as string;

describe('money safety under concurrent requests', () => {
  it('a NORMAL bill is paid at most once: 20 concurrent POSTs give one payment that receives money', async () => {
    const m = await createMerchant(t);
    const billId = await createBill(t, m, { amount: '100.00' });
    const res = await Promise.all(Array.from({ length: 20 }, () => payRequest(t, billId)));
    const codes = res.map((r) => r.statusCode);
    const ok = res.filter((r) => r.statusCode === 200);
    expect(ok.length).toBe(1);
    expect(ok[0]!.json().status).toBe('SUCCESS');
    // Every other request is refused: in progress (409) or finished (403), never a 500.
    for (const r of res.filter((x) => x.statusCode !== 200)) {
      expect([403, 409]).toContain(r.statusCode);
      expect(['api:error.bill_is_finished', 'api:error.payment_in_progress']).toContain(r.json().message);
    }
    expect(codes).not.toContain(500);
    const pays = await rows(`SELECT status::text FROM payments WHERE bill_id = $1`, [billId]);
    expect(pays).toEqual([{ status: 'SUCCESS' }]);
    expect(await balance(m.merchantId)).toBe('100.00000000');
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('two tabs, declined and good cards racing: at most one payment of a NORMAL bill receives money', async () => {
    const m = await createMerchant(t);
    const billId = await createBill(t, m, { amount: '70.00' });
    const res = await Promise.all(Array.from({ length: 20 }, (_, i) => payRequest(t, billId, cardForm(i % 2 ? DECLINED_CARD : '4242424242424242'))));
    expect(res.map((r) => r.statusCode)).not.toContain(500);
    const paid = await rows(`SELECT id FROM payments WHERE bill_id = $1 AND status IN ('SUCCESS','UNDERPAID','OVERPAID')`, [billId]);
    expect(paid.length).toBeLessThanOrEqual(1);
    // Retry until paid (declines let the payer try again), then it is finished for good.
    let status = (await rows(`SELECT status::text FROM bills WHERE id = $1`, [billId]))[0].status;
    if (status !== 'SUCCESS') {
      expect((await payRequest(t, billId)).json().status).toBe('SUCCESS');
      status = 'SUCCESS';
    }
    expect(await balance(m.merchantId)).toBe('70.00000000');
    expect((await payRequest(t, billId)).statusCode).toBe(403);
  });

  it('a MULTI bill takes many: 20 concurrent POSTs give 20 payments, each credited once', async () => {
    const m = await createMerchant(t);
    const billId = await createBill(t, m, { amount: '15.50', type: 'MULTI' });
    const res = await Promise.all(Array.from({ length: 20 }, () => payRequest(t, billId)));
    expect(res.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(new Set(res.map((r) => r.json().payment_id)).size).toBe(20);
    const pays = await rows(`SELECT id FROM payments WHERE bill_id = $1 AND status = 'SUCCESS'`, [billId]);
    expect(pays.length).toBe(20);
    const entries = await rows(`SELECT ref_id, count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYMENT_CREDIT' AND merchant_id = $1 GROUP BY ref_id`, [m.merchantId]);
    expect(entries.length).toBe(20);
    expect(entries.every((e) => e.n === 1)).toBe(true);
    expect(await balance(m.merchantId)).toBe('310.00000000');
    expect((await rows(`SELECT status::text FROM bills WHERE id = $1`, [billId]))[0].status).toBe('SUCCESS');
    expect((await rows(`SELECT count(*)::int AS n FROM outbox_events WHERE kind = 'PAYMENT_POSTBACK' AND merchant_id = $1`, [m.merchantId]))[0].n).toBe(20);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a payment is credited exactly once: a second PAYMENT_CREDIT for it is refused by the ledger', async () => {
    const m = await createMerchant(t);
    const billId = await createBill(t, m);
    const id = (await payRequest(t, billId)).json().payment_id;
    await expect(withPgTx(t.db.pool, (c) => post(c, paymentReceived({
      paymentId: id, merchantId: m.merchantId, currency: 'RUB', connector: 'sandbox', receivedRub: new Decimal('100'), accountAmount: new Decimal('100'), commission: new Decimal(0),
    })))).rejects.toThrow(DuplicatePostingError);
    expect(await balance(m.merchantId)).toBe('100.00000000');
  });

  it('the balance equals the sum of its entries after all of the above', async () => {
    expect(await verifyBalances(t.db.pool)).toEqual([]);
    const drift = await rows(`
      SELECT b.merchant_id FROM balances b
      LEFT JOIN (SELECT acct, sum(v) s FROM (SELECT credit_account acct, amount v FROM ledger_entries
                                              UNION ALL SELECT debit_account, -amount FROM ledger_entries) x GROUP BY 1) e
             ON e.acct = b.currency::text || ':merchant:' || b.merchant_id || ':available'
      WHERE b.available <> coalesce(e.s, 0)`);
    expect(drift).toEqual([]);
  });
});
