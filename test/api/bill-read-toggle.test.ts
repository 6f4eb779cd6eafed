import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill, expect422, expectKeyed, insertPayment } from './support.js';

let t: TestApp;
let m: MerchantFixture;
let other: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp({ BILL_PAYMENTS_MAX: '5' });
  m = await createMerchant(t);
  other = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

const toggle = (payload: Record<string, unknown>, auth = m.auth) =>
  t.app.inject({ method: 'POST', url: '/api/v1/bill/toggle_activity', headers: auth, payload });
const get = (url: string, auth = m.auth) => t.app.inject({ method: 'GET', url, headers: auth });
const setStatus = (id: string, status: string, type?: string) =>
  t.db.pool.query(`UPDATE bills SET status = $2::"BillStatus", type = COALESCE($3::"BillType", type) WHERE id = $1`, [id, status, type ?? null]);
const activeOf = async (id: string) => (await t.db.pool.query('SELECT active FROM bills WHERE id = $1', [id])).rows[0].active;

describe('GET /api/v1/bill/status', () => {
  it('answers the bill with its status, amount as a JSON number, datetime Y-m-d H:i:s and active', async () => {
    const id = await createBill(t, m, { amount: '77.5', type: 'multi' });
    const r = await get(`/api/v1/bill/status?id=${id}`);
    expect(r.statusCode, r.body).toBe(200);
    const b = r.json();
    expect(b).toMatchObject({ id, status: 'NEW', type: 'MULTI', amount: 77.5, currency_in: 'RUB', active: true, success: true });
    expect(b.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(Object.keys(b).sort()).toEqual(['active', 'amount', 'created_at', 'currency_in', 'expires_at', 'id', 'order_id', 'status', 'success', 'ttl', 'type']);
  });

  it('created_at is written in the service time zone (Europe/Moscow, UTC+3)', async () => {
    const id = await createBill(t, m);
    await t.db.pool.query(`UPDATE bills SET created_at = '2026-01-15 10:20:30+00' WHERE id = $1`, [id]);
    expect((await get(`/api/v1/bill/status?id=${id}`)).json().created_at).toBe('2026-01-15 13:20:30');
  });

  it('reads the id from a JSON body on GET too', async () => {
    const id = await createBill(t, m);
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/bill/status', headers: { ...m.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ id }) });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().id).toBe(id);
  });

  it('an unknown bill is 422 api:error.bill_not_found; a missing id is 422 with errors.id', async () => {
    expectKeyed(await get('/api/v1/bill/status?id=nope'), 422, 'bill_not_found');
    expect422(await get('/api/v1/bill/status'), 'id');
  });

  it("merchant B never reads merchant A's bill: 422 api:error.bill_not_found", async () => {
    const id = await createBill(t, m);
    expectKeyed(await get(`/api/v1/bill/status?id=${id}`, other.auth), 422, 'bill_not_found');
  });
});

describe('POST /api/v1/bill/toggle_activity', () => {
  it('active=0 deactivates and active=1 activates; the answer carries the bill, active and activity', async () => {
    const id = await createBill(t, m, { amount: '10' });
    const off = await toggle({ id, active: 0 });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toMatchObject({ id, active: false, activity: false, status: 'NEW', amount: 10, type: 'NORMAL', currency_in: 'RUB', success: true });
    expect(await activeOf(id)).toBe(false);
    const on = await toggle({ id, active: '1' });
    expect(on.json()).toMatchObject({ active: true, activity: true });
    expect(await activeOf(id)).toBe(true);
    for (const [v, expected] of [['false', false], [true, true], ['0', false]] as const) {
      expect((await toggle({ id, active: v })).json().active).toBe(expected);
    }
  });

  it('setting the same state twice is not an error', async () => {
    const id = await createBill(t, m);
    expect((await toggle({ id, active: 1 })).json().active).toBe(true);
    expect((await toggle({ id, active: 1 })).json().active).toBe(true);
  });

  it.each(['SUCCESS', 'UNDERPAID', 'OVERPAID'])('a NORMAL bill in %s is 403 api:error.bill_is_finished and stays unchanged', async (status) => {
    const id = await createBill(t, m);
    await setStatus(id, status);
    expectKeyed(await toggle({ id, active: 0 }), 403, 'bill_is_finished');
    expect(await activeOf(id)).toBe(true);
  });

  it('a NORMAL bill in FAIL, PROCESS or NEW can be toggled; a paid MULTI bill too', async () => {
    for (const status of ['FAIL', 'PROCESS', 'NEW']) {
      const id = await createBill(t, m);
      await setStatus(id, status);
      expect((await toggle({ id, active: 0 })).statusCode).toBe(200);
    }
    const multi = await createBill(t, m, { type: 'multi' });
    await setStatus(multi, 'SUCCESS');
    const r = await toggle({ id: multi, active: 0 });
    expect(r.statusCode, r.body).toBe(200);
    expect(await activeOf(multi)).toBe(false);
  });

  it("an unknown bill, or merchant B toggling A's bill, is 422 api:error.bill_not_found and changes nothing", async () => {
    expectKeyed(await toggle({ id: 'nope', active: 0 }), 422, 'bill_not_found');
    const id = await createBill(t, m);
    expectKeyed(await toggle({ id, active: 0 }, other.auth), 422, 'bill_not_found');
    expect(await activeOf(id)).toBe(true);
  });

  it('missing or bad fields are 422 naming them', async () => {
    const id = await createBill(t, m);
    expect422(await toggle({ active: 1 }), 'id');
    expect422(await toggle({ id }), 'active');
    expect422(await toggle({ id, active: 2 }), 'active');
    expect422(await toggle({ id, active: 'yes please' }), 'active');
    expect(await activeOf(id)).toBe(true);
  });

  it('20 concurrent toggles of one bill all answer 200 and leave a consistent flag', async () => {
    const id = await createBill(t, m);
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => toggle({ id, active: i % 2 })));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(typeof (await activeOf(id))).toBe('boolean');
  });

  it('a toggle racing a payment that finishes the bill never changes a finished bill', async () => {
    const id = await createBill(t, m);
    const [r] = await Promise.all([toggle({ id, active: 0 }), setStatus(id, 'SUCCESS')]);
    const active = await activeOf(id);
    if (r.statusCode === 200) expect(r.json().active).toBe(false);
    else { expectKeyed(r, 403, 'bill_is_finished'); expect(active).toBe(true); }
  });
});

describe('GET /api/v1/bill/payments', () => {
  it("lists the bill's payments, oldest first, with bill_id and the payment fields", async () => {
    const id = await createBill(t, m, { type: 'multi' });
    const p1 = await insertPayment(t, m, id, { status: 'FAIL', amountReceived: '0', fromCard: '400000******0002', createdAt: new Date(Date.now() - 60000), accountAmount: null });
    const p2 = await insertPayment(t, m, id, { status: 'SUCCESS', amount: '100', amountReceived: '100', commission: '2.5', accountAmount: '97.5' });
    const r = await get(`/api/v1/bill/payments?id=${id}`);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body.success).toBe(true);
    expect(body.data.map((p: { id: string }) => p.id)).toEqual([p1, p2]);
    expect(body.data[1]).toMatchObject({
      id: p2, bill_id: id, status: 'SUCCESS', amount: 100, amount_received: 100, from_card: '424242******4242',
      currency_in: 'RUB', commission: 2.5, account_amount: 97.5, account_currency_code: 'RUB', refunded_amount: 0,
    });
    expect(body.data[0]).toMatchObject({ status: 'FAIL', amount_received: 0, account_amount: null });
  });

  it('a bill without payments answers an empty list', async () => {
    const id = await createBill(t, m);
    expect((await get(`/api/v1/bill/payments?id=${id}`)).json()).toEqual({
      data: [], success: true, links: { prev: null, next: null },
      meta: { path: 'http://pay.test/api/v1/bill/payments', per_page: 5, next_cursor: null, prev_cursor: null },
    });
  });

  it('per_page above BILL_PAYMENTS_MAX is 400 api:error.too_many_payments; more payments than the max are paged, oldest first', async () => {
    const id = await createBill(t, m, { type: 'multi' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await insertPayment(t, m, id, { createdAt: new Date(Date.now() - (10 - i) * 1000) }));
    expectKeyed(await get(`/api/v1/bill/payments?id=${id}&per_page=6`), 400, 'too_many_payments');
    const first = (await get(`/api/v1/bill/payments?id=${id}`)).json();
    expect(first.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 5));
    expect(first.meta.per_page).toBe(5);
    expect(first.links.next).toContain(`id=${id}`);
    const second = (await get(`/api/v1/bill/payments?id=${id}&cursor=${first.meta.next_cursor}`)).json();
    expect(second.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(5));
    expect(second.links.next).toBeNull();
    const back = (await get(`/api/v1/bill/payments?id=${id}&cursor=${second.meta.prev_cursor}`)).json();
    expect(back.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 5));
    const small = (await get(`/api/v1/bill/payments?id=${id}&per_page=2&cursor=${first.meta.next_cursor}`)).json();
    expect(small.data).toHaveLength(1);
    expect422(await get(`/api/v1/bill/payments?id=${id}&cursor=garbage!`), 'cursor');
  });

  it("an unknown bill, or merchant B asking for A's bill, is 403 api:error.bill_not_found", async () => {
    expectKeyed(await get('/api/v1/bill/payments?id=nope'), 403, 'bill_not_found');
    const id = await createBill(t, m);
    await insertPayment(t, m, id);
    expectKeyed(await get(`/api/v1/bill/payments?id=${id}`, other.auth), 403, 'bill_not_found');
  });

  it('a missing id is 422', async () => {
    expect422(await get('/api/v1/bill/payments'), 'id');
  });
});

describe('GET /api/v1/payment/status', () => {
  it('answers the payment with bill_id and success', async () => {
    const billId = await createBill(t, m);
    const id = await insertPayment(t, m, billId, { status: 'UNDERPAID', amount: '100', amountReceived: '60', refundedAmount: '10' });
    const r = await get(`/api/v1/payment/status?id=${id}`);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ id, bill_id: billId, status: 'UNDERPAID', amount: 100, amount_received: 60, refunded_amount: 10, success: true });
    expect(r.json().created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  it("an unknown payment, or merchant B asking for A's payment, is 422 api:error.payment_not_found", async () => {
    expectKeyed(await get('/api/v1/payment/status?id=nope'), 422, 'payment_not_found');
    const id = await insertPayment(t, m, await createBill(t, m));
    expectKeyed(await get(`/api/v1/payment/status?id=${id}`, other.auth), 422, 'payment_not_found');
  });

  it('a missing id is 422 with errors.id', async () => {
    expect422(await get('/api/v1/payment/status'), 'id');
  });
});
