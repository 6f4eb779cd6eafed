import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill, SUCCESS_CARD } from '../factories/payment.js';

// The same rule as money-safety.test.ts, over real sockets: 40 clients POST at once, so their
// reads of the bill really overlap (in-process injections tend to run one after another).
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000', PAY_ATTEMPTS_PER_IP: '1000' });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => { await t.close(); });

const pay = (billId: string) => fetch(`${base}/pay/${billId}`, {
  method: 'POST',
  headers: { accept: 'application/json', 'content-type': 'application/json' },
  body: JSON.stringify({ method: 'BANK_CARD', card_number: SUCCESS_CARD, card_expiry: '12/39', card_cvc: '123' }),
});

describe('money safety over real HTTP connections', () => {
  it('a NORMAL bill is paid at most once: 40 concurrent clients, one payment receives money, no 500', async () => {
    const m = await createMerchant(t);
    for (let round = 0; round < 3; round++) {
      const billId = await createBill(t, m, { amount: '10.00' });
      const res = await Promise.all(Array.from({ length: 40 }, () => pay(billId)));
      const codes = res.map((r) => r.status);
      expect(codes.filter((c) => c === 200)).toHaveLength(1);
      expect(codes.every((c) => c === 200 || c === 403 || c === 409)).toBe(true);
      const paid = await t.db.pool.query(`SELECT count(*)::int AS n FROM payments WHERE bill_id = $1 AND status = 'SUCCESS'`, [billId]);
      expect(paid.rows[0].n).toBe(1);
    }
    const bal = await t.db.pool.query(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId]);
    expect(bal.rows[0].available).toBe('30.00000000');
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });
});
