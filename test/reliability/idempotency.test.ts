import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

const create = (key: string, amount: string, extra: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST', url: '/api/v1/bill/create',
    headers: { ...m.auth, 'idempotency-key': key, ...extra },
    payload: { amount, shop_id: m.shopId },
  });
const billCount = async () => Number((await t.db.pool.query('SELECT count(*) FROM bills WHERE merchant_id = $1', [m.merchantId])).rows[0].count);

describe('Idempotency-Key on merchant POSTs', () => {
  it('the same key and body replays the first answer and creates nothing more', async () => {
    const before = await billCount();
    const a = await create('k-1', '100.00');
    const b = await create('k-1', '100.00');
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(b.json().bill_id).toBe(a.json().bill_id);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(await billCount()).toBe(before + 1);
  });

  it('the same key with another body is a 422 and creates nothing', async () => {
    const before = await billCount();
    const r = await create('k-1', '101.00');
    expect(r.statusCode).toBe(422);
    expect(r.json().errors['Idempotency-Key']).toBeDefined();
    expect(await billCount()).toBe(before);
  });

  it('20 concurrent requests with one key create one bill; the others replay it or get 409', async () => {
    const before = await billCount();
    const rs = await Promise.all(Array.from({ length: 20 }, () => create('k-concurrent', '5.00')));
    const ok = rs.filter((r) => r.statusCode === 200);
    const conflicts = rs.filter((r) => r.statusCode === 409);
    expect(ok.length + conflicts.length).toBe(20);
    expect(new Set(ok.map((r) => r.json().bill_id)).size).toBe(1);
    for (const c of conflicts) expect(c.json()).toMatchObject({ success: false });
    expect(await billCount()).toBe(before + 1);
  });

  it('keys are per merchant: another merchant may use the same key', async () => {
    const other = await createMerchant(t);
    const r = await t.app.inject({
      method: 'POST', url: '/api/v1/bill/create',
      headers: { ...other.auth, 'idempotency-key': 'k-1' },
      payload: { amount: '100.00', shop_id: other.shopId },
    });
    expect(r.statusCode).toBe(200);
  });

  it('a rejected request is replayed as the same rejection', async () => {
    // A zero amount is well formed but refused by the range rule (403 invalid_amount).
    const a = await create('k-bad', '0');
    const b = await create('k-bad', '0');
    expect(a.statusCode).toBe(403);
    expect(b.statusCode).toBe(403);
    expect(b.json()).toEqual(a.json());
  });

  it('an expired key runs the request again', async () => {
    await t.db.pool.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'k-1'`);
    const before = await billCount();
    const r = await create('k-1', '100.00');
    expect(r.statusCode).toBe(200);
    expect(r.headers['idempotent-replayed']).toBeUndefined();
    expect(await billCount()).toBe(before + 1);
  });

  it('a malformed key is a 422', async () => {
    const r = await create('x'.repeat(300), '1.00');
    expect(r.statusCode).toBe(422);
  });
});
