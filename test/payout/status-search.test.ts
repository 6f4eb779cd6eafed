import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { GOOD_CARD, card, fund, insertAccount, payoutMerchant, personal, regular, sbp, seedBanks } from './helpers.js';
import type { MerchantFixture } from '../factories/merchant.js';

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  await seedBanks(t);
  m = await payoutMerchant(t, { payoutMaxCard: '100' });
  await fund(t, m.merchantId, '100000');
});
afterAll(async () => { await t.close(); });

const get = (url: string, f: MerchantFixture = m) => t.app.inject({ method: 'GET', url, headers: f.auth });

describe('payout/status', () => {
  it('by id answers the payout fields plus success', async () => {
    const p = (await regular(t, m, card('12.5'))).json().data[0];
    const res = await get(`/api/v1/payout/status?id=${p.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...p, success: true });
    expect(res.json().amount).toBe(12.5);
  });

  it('by order_id; a split request answers its first payout', async () => {
    const data = (await regular(t, m, card('250', { order_id: 'st-1' }))).json().data;
    const res = await get('/api/v1/payout/status?order_id=st-1');
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(data[0].id);
    expect(res.json().amount).toBe(100);
  });

  it('parameters also come as a JSON body on GET', async () => {
    const p = (await regular(t, m, card('1'))).json().data[0];
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/payout/status', headers: { ...m.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ id: p.id }) });
    expect(res.json().id).toBe(p.id);
  });

  it('neither id nor order_id is 422 naming both', async () => {
    const res = await get('/api/v1/payout/status');
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors).sort()).toEqual(['id', 'order_id']);
  });

  it("unknown ids and another merchant's payout are 422 payout_not_found", async () => {
    const p = (await regular(t, m, card('1', { order_id: 'mine' }))).json().data[0];
    const other = await payoutMerchant(t);
    for (const url of ['/api/v1/payout/status?id=nope', `/api/v1/payout/status?id=${p.id}`, '/api/v1/payout/status?order_id=mine']) {
      const res = await get(url, url.includes('nope') ? m : other);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ success: false, message: 'api:error.payout_not_found' });
    }
  });

  it('merchant keys are 403 here: banned, subscription inactive', async () => {
    const b = await payoutMerchant(t, { status: 'BANNED' });
    expect((await get('/api/v1/payout/status?id=x', b)).statusCode).toBe(403);
    const s = await payoutMerchant(t, { subscription: 'INACTIVE' });
    const res = await get('/api/v1/payout/status?id=x', s);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe('api:error.merchant_subscription_inactive');
  });
});

describe('payout/search', () => {
  it('lists the period newest first with cursor pages; account identifiers masked', async () => {
    const s = await payoutMerchant(t);
    await fund(t, s.merchantId, '1000');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await regular(t, s, card(String(i + 1)))).json().data[0].id);
    ids.push((await regular(t, s, sbp('1'))).json().data[0].id);
    const page1 = await get('/api/v1/payout/search?per_page=4', s);
    expect(page1.statusCode).toBe(200);
    const b1 = page1.json();
    expect(b1.success).toBe(true);
    expect(b1.data).toHaveLength(4);
    expect(b1.meta.per_page).toBe(4);
    expect(b1.data[0]).toEqual(expect.objectContaining({ id: expect.any(String), status: 'PROCESS', currency: 'RUB', commission: 0 }));
    expect(Object.keys(b1.data[0]).sort()).toEqual(['account_identifier', 'amount', 'commission', 'created_at', 'currency', 'error_message', 'id', 'status']);
    const page2 = (await get(`/api/v1/payout/search?per_page=4&cursor=${b1.meta.next_cursor}`, s)).json();
    expect(page2.data).toHaveLength(2);
    expect(page2.meta.next_cursor).toBeNull();
    const seen = [...b1.data, ...page2.data].map((p: { id: string }) => p.id);
    expect(seen.sort()).toEqual([...ids].sort());
    for (const p of [...b1.data, ...page2.data]) expect(['424242******4242', '+79161234567']).toContain(p.account_identifier);
  });

  it('dates as YYYY-MM-DD: a window without payouts is empty; a malformed date or cursor is 422', async () => {
    const s = await payoutMerchant(t);
    await fund(t, s.merchantId, '10');
    await regular(t, s, card('1'));
    expect((await get('/api/v1/payout/search?start_date=2020-01-01&finish_date=2020-01-31', s)).json().data).toEqual([]);
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: t.config.tz }).format(new Date());
    expect((await get(`/api/v1/payout/search?start_date=${today}&finish_date=${today}`, s)).json().data).toHaveLength(1);
    expect((await get('/api/v1/payout/search?start_date=2020-13-01', s)).statusCode).toBe(422);
    expect((await get('/api/v1/payout/search?cursor=@@', s)).statusCode).toBe(422);
    expect((await get('/api/v1/payout/search?per_page=1001', s)).statusCode).toBe(422);
  });

  it("never lists another merchant's payouts", async () => {
    const empty = await payoutMerchant(t);
    expect((await get('/api/v1/payout/search', empty)).json().data).toEqual([]);
  });
});

describe('card numbers at rest', () => {
  it('payout and account card numbers are stored encrypted; only the masked form is in clear', async () => {
    const acc = await insertAccount(t, m.merchantId, { type: 'CARD', identifier: GOOD_CARD });
    await personal(t, m, { amount: '1', payout_account_id: acc });
    await regular(t, m, card('1', { account_identifier: '5555555555554444' }));
    const r = await t.db.pool.query(`SELECT row_to_json(p)::text AS j FROM payouts p WHERE merchant_id = $1`, [m.merchantId]);
    for (const row of r.rows) {
      expect(row.j).not.toContain(GOOD_CARD);
      expect(row.j).not.toContain('5555555555554444');
    }
    const rq = await t.db.pool.query(`SELECT row_to_json(x)::text AS j FROM payout_requests x WHERE merchant_id = $1`, [m.merchantId]);
    for (const row of rq.rows) expect(row.j).not.toContain('5555555555554444');
    const masked = await t.db.pool.query(`SELECT DISTINCT account_masked FROM payouts WHERE merchant_id = $1 AND account_type = 'CARD'`, [m.merchantId]);
    expect(masked.rows.map((x) => x.account_masked).sort()).toEqual(['424242******4242', '555555******4444']);
  });
});

describe('OpenAPI', () => {
  it('documents the four payout endpoints with their input fields', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const paths = res.json().paths;
    for (const p of ['/api/v1/payout/personal/create', '/api/v1/payout/regular/create', '/api/v1/payout/status', '/api/v1/payout/search']) {
      expect(paths[p]).toBeDefined();
    }
    expect(JSON.stringify(paths['/api/v1/payout/regular/create'])).toContain('account_identifier');
  });
});
