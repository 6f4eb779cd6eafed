import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { grantedMerchant, refundPartial } from '../refund/helpers.js';
import { fund, insertAccount, payoutMerchant, personal } from '../payout/helpers.js';
import { createBill, expect422, insertPayment } from './support.js';

let t: TestApp;
let m: MerchantFixture;
let other: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await grantedMerchant(t);
  other = await grantedMerchant(t);
});
afterAll(async () => { await t.close(); });

const get = (url: string, who: MerchantFixture = m) => t.app.inject({ method: 'GET', url, headers: who.auth });

describe('payment/status with refunds=1 and chargeback=1', () => {
  it('adds the payment\'s refunds (refund view fields, newest first) and its chargeback list; without the flags neither key', async () => {
    const p = await createPaidPayment(t, m);
    const r1 = (await refundPartial(t, m, p.paymentId, '10.00')).json();
    await t.app.services.refunds.processDue();
    const r2 = (await refundPartial(t, m, p.paymentId, '5.50')).json();
    const plain = (await get(`/api/v1/payment/status?id=${p.paymentId}`)).json();
    expect(plain).not.toHaveProperty('refunds');
    expect(plain).not.toHaveProperty('chargeback');
    const full = (await get(`/api/v1/payment/status?id=${p.paymentId}&refunds=1&chargeback=true`)).json();
    expect(full.refunds.map((x: { id: string }) => x.id)).toEqual([r2.id, r1.id]);
    expect(full.refunds[1]).toEqual({
      id: r1.id, status: 'SUCCESS', amount: 10, currency: 'RUB', entity_type: 'payment', entity_id: p.paymentId,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });
    expect(full.chargeback).toEqual([]);
    expect(full.success).toBe(true);
    expect((await get(`/api/v1/payment/status?id=${p.paymentId}&refunds=0`)).json()).not.toHaveProperty('refunds');
  });
});

describe('booleans as clients write them (issue 30: Python sends str(True))', () => {
  it('payment/status?refunds=True&chargeback=False adds refunds only; yes/no, TRUE, 1/0 too; anything else is 422 on the field', async () => {
    const p = await createPaidPayment(t, m);
    const py = await get(`/api/v1/payment/status?id=${p.paymentId}&refunds=True&chargeback=False`);
    expect(py.statusCode, py.body).toBe(200);
    expect(py.json().refunds).toEqual([]);
    expect(py.json()).not.toHaveProperty('chargeback');
    const words = (await get(`/api/v1/payment/status?id=${p.paymentId}&refunds=no&chargeback=YES`)).json();
    expect(words).not.toHaveProperty('refunds');
    expect(words.chargeback).toEqual([]);
    expect((await get(`/api/v1/payment/status?id=${p.paymentId}&refunds=TRUE&chargeback=0`)).json().refunds).toEqual([]);
    expect422(await get(`/api/v1/payment/status?id=${p.paymentId}&refunds=maybe`), 'refunds');
  });

  it('bill/toggle_activity takes active=False / True, and bill/create payer_pays_commission=True', async () => {
    const id = await createBill(t, m);
    const toggle = (active: string) => t.app.inject({
      method: 'POST', url: '/api/v1/bill/toggle_activity', payload: `id=${id}&active=${active}`,
      headers: { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect((await toggle('False')).json()).toMatchObject({ id, active: false });
    expect((await toggle('True')).json()).toMatchObject({ id, active: true });
    expect((await toggle('no')).json()).toMatchObject({ id, active: false });
    const c = await t.app.inject({
      method: 'POST', url: '/api/v1/bill/create', payload: `amount=10&shop_id=${m.shopId}&payer_pays_commission=True`,
      headers: { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(c.statusCode, c.body).toBe(200);
    const row = (await t.db.pool.query('SELECT payer_pays_commission FROM bills WHERE id = $1', [c.json().bill_id])).rows[0];
    expect(row.payer_pays_commission).toBe(true);
  });
});

describe('payout/status payout_id', () => {
  it('payout_id is an alias of id (and a wrong one is payout_not_found)', async () => {
    const pm = await payoutMerchant(t);
    await fund(t, pm.merchantId, '1000');
    const acc = await insertAccount(t, pm.merchantId, { type: 'CARD', identifier: '4111111111111111' });
    const created = await personal(t, pm, { amount: '100', payout_account_id: acc });
    expect(created.statusCode, created.body).toBe(200);
    const payoutId = created.json().data[0].id as string;
    const a = (await get(`/api/v1/payout/status?payout_id=${payoutId}`, pm)).json();
    expect(a).toMatchObject({ id: payoutId, success: true });
    const r = await get('/api/v1/payout/status?payout_id=nope', pm);
    expect(r.statusCode).toBe(422);
    expect(r.json().message).toBe('api:error.payout_not_found');
  });
});

describe('refund/status by refund id', () => {
  it('answers that refund, not the latest of its payment', async () => {
    const p = await createPaidPayment(t, m);
    const first = (await refundPartial(t, m, p.paymentId, '1.00')).json();
    await refundPartial(t, m, p.paymentId, '2.00');
    const r = (await get(`/api/v1/refund/status?id=${first.id}`)).json();
    expect(r).toMatchObject({ id: first.id, amount: 1 });
  });
});

describe('GET /api/v1/refund/search', () => {
  it('pages the merchant\'s refunds newest first, filters by payment_id and dates, never shows another merchant\'s', async () => {
    const a = await createPaidPayment(t, m);
    const b = await createPaidPayment(t, m);
    const ra1 = (await refundPartial(t, m, a.paymentId, '1.00')).json();
    const rb = (await refundPartial(t, m, b.paymentId, '2.00')).json();
    const ra2 = (await refundPartial(t, m, a.paymentId, '3.00')).json();
    const o = await createPaidPayment(t, other);
    await refundPartial(t, other, o.paymentId, '4.00');

    const byPayment = (await get(`/api/v1/refund/search?payment_id=${a.paymentId}`)).json();
    expect(byPayment.data.map((x: { id: string }) => x.id)).toEqual([ra2.id, ra1.id]);
    expect(byPayment.links).toEqual({ prev: null, next: null });
    expect(byPayment.meta).toMatchObject({ path: 'http://pay.test/api/v1/refund/search', per_page: 15 });

    const page1 = (await get('/api/v1/refund/search?per_page=2')).json();
    const ids = page1.data.map((x: { id: string }) => x.id);
    expect(ids).toEqual([ra2.id, rb.id]);
    expect(page1.links.next).toContain('per_page=2');
    const page2 = (await get(`/api/v1/refund/search?per_page=2&cursor=${page1.meta.next_cursor}`)).json();
    expect(page2.data.map((x: { id: string }) => x.id)).toContain(ra1.id);
    for (const x of [...page1.data, ...page2.data]) expect(x.entity_id).not.toBe(o.paymentId);

    await t.db.pool.query(`UPDATE refunds SET created_at = '2026-01-10T09:00:00Z' WHERE id = $1`, [ra1.id]);
    const dated = (await get('/api/v1/refund/search?start_date=2026-01-10&finish_date=2026-01-10')).json();
    expect(dated.data.map((x: { id: string }) => x.id)).toEqual([ra1.id]);
    const shop = (await get(`/api/v1/refund/search?shop_id=${m.shopId}&start_date=2026-01-10&finish_date=2026-01-10`)).json();
    expect(shop.data.map((x: { id: string }) => x.id)).toEqual([ra1.id]);
    expect((await get(`/api/v1/refund/search?shop_id=${other.shopId}&start_date=2026-01-10`)).json().data).toEqual([]);
  });

  it('needs the refund grant (403 This action is unauthorized), and bad dates are 422', async () => {
    const plain = await createMerchant(t);
    const r = await get('/api/v1/refund/search', plain);
    expect(r.statusCode).toBe(403);
    expect(r.json().message).toBe('This action is unauthorized.');
    expect422(await get('/api/v1/refund/search?start_date=yesterday'), 'start_date');
  });
});

describe('search dates in the forms clients send', () => {
  it('fractional seconds and ISO T/Z forms: a Z or offset time is that instant, a plain time is in the service time zone', async () => {
    const bill = await createBill(t, m);
    // 13:15:11.556 in Moscow (UTC+3).
    await t.db.pool.query(`UPDATE bills SET created_at = '2026-11-21T10:15:11.556Z' WHERE id = $1`, [bill]);
    const found = async (start: string, finish: string) => {
      const r = await get(`/api/v1/bill/search?${new URLSearchParams({ start_date: start, finish_date: finish })}`);
      expect(r.statusCode, r.body).toBe(200);
      return r.json().data.some((x: { id: string }) => x.id === bill);
    };
    expect(await found('2026-11-21 13:15:11.556957', '2026-11-21 13:15:11.556957')).toBe(true);
    expect(await found('2026-11-21 13:15:11.557', '2026-11-21 13:16:00')).toBe(false);
    expect(await found('2026-11-21 13:15:00', '2026-11-21 13:15:11.555')).toBe(false);
    expect(await found('2026-11-21T10:15:11Z', '2026-11-21T10:15:11Z')).toBe(true);
    expect(await found('2026-11-21T10:15:12Z', '2026-11-21T11:00:00Z')).toBe(false);
    expect(await found('2026-11-21T13:15:11+03:00', '2026-11-21T13:15:11.600+03:00')).toBe(true);
    expect(await found('2026-11-21T13:15:11', '2026-11-21T13:15:11')).toBe(true);
    expect(await found('2026-11-21 13:15', '2026-11-21 13:15')).toBe(true);
    expect422(await get('/api/v1/bill/search?start_date=2026-11-21T25:00:00Z'), 'start_date');
    expect422(await get('/api/v1/bill/search?start_date=2026-11-21T10:00:00+15:00'), 'start_date');
  });

  it('payment/search takes the same forms', async () => {
    const bill = await createBill(t, m);
    const pid = await insertPayment(t, m, bill, { createdAt: new Date('2026-11-20T08:00:00.250Z') });
    const r = (await get('/api/v1/payment/search?start_date=2026-11-20T08:00:00.250Z&finish_date=2026-11-20T08:00:00.250Z')).json();
    expect(r.data.map((x: { id: string }) => x.id)).toEqual([pid]);
  });
});
