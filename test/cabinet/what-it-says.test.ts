import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { cabinetMerchant, signedIn } from './helpers.js';

/** Issue 30 item 4: what the cabinet says is what is true. */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const createBill = async (auth: Record<string, string>, shopId: string, extra: Record<string, unknown> = {}) => {
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: auth, payload: { amount: '100.00', shop_id: shopId, ...extra } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
};

describe('an expired bill', () => {
  it('says Expired in the bill list and on the bill page, with no activate button; a live one says Active', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const gone = await createBill(m.auth, m.shopId, { ttl: 60, order_id: 'gone-1' });
    const live = await createBill(m.auth, m.shopId, { ttl: 600, order_id: 'live-1' });
    await t.db.pool.query(`UPDATE bills SET expires_at = now() - interval '1 second' WHERE id = $1`, [gone]);
    const list = await c.get('/cabinet/bills');
    const rowOf = (id: string) => new RegExp(`<tr><td[^>]*><a href="/cabinet/bills/${id}">[\\s\\S]*?</tr>`).exec(list.body)?.[0] ?? '';
    expect(rowOf(gone)).toContain('>Expired<');
    expect(rowOf(live)).not.toContain('Expired');
    expect(rowOf(live)).toContain('>Yes<');
    const page = await c.get(`/cabinet/bills/${gone}`);
    expect(page.body).toContain('data-testid="bill-expired">Expired<');
    expect(page.body).not.toContain(`/bills/${gone}/toggle`);
    const livePage = await c.get(`/cabinet/bills/${live}`);
    expect(livePage.body).not.toContain('bill-expired');
    expect(livePage.body).toContain(`/bills/${live}/toggle`);
  });
});
