import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { admin } from '../admin/helpers.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill } from './support.js';

// bill/status and merchant/balance authenticate inside their own read (one round trip instead
// of two); these are the paths where that must still answer exactly as the auth hook does.
let t: TestApp;
let m: MerchantFixture;
let billId: string;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  billId = await createBill(t, m);
});
afterAll(async () => { await t.close(); });

const get = (url: string, headers: Record<string, string>, remoteAddress?: string) =>
  t.app.inject({ method: 'GET', url, headers, ...(remoteAddress ? { remoteAddress } : {}) });
const status = (id: string, headers: Record<string, string>, remoteAddress?: string) => get(`/api/v1/bill/status?id=${id}`, headers, remoteAddress);
const balance = (headers: Record<string, string>, remoteAddress?: string) => get('/api/v1/merchant/balance', headers, remoteAddress);

/** The statements the pool sends while `fn` runs (the service's own pool, counted, not replaced). */
async function statements(fn: () => Promise<unknown>): Promise<string[]> {
  const pool = t.app.db.pool;
  const seen: string[] = [];
  const original = pool.query.bind(pool);
  (pool as { query: unknown }).query = (q: unknown, ...rest: unknown[]) => {
    seen.push(typeof q === 'string' ? q : (q as { name?: string; text: string }).name ?? (q as { text: string }).text);
    return (original as (...a: unknown[]) => unknown)(q, ...rest);
  };
  try { await fn(); } finally { (pool as { query: unknown }).query = original; }
  return seen;
}

describe('bill/status and merchant/balance authenticate in their own read', () => {
  it('the per-token limit costs at most one statement per 16 requests of a token (its hits are taken in chunks)', async () => {
    const sent = await statements(async () => { for (let i = 0; i < 32; i++) expect((await status(billId, m.auth)).statusCode).toBe(200); });
    expect(sent.filter((x) => x === 'bill_status_by_token')).toHaveLength(32);
    expect(sent.filter((x) => x === 'limit_add').length).toBeLessThanOrEqual(3);
  });

  // `limit_add` is the per-token API limit, counted in PostgreSQL once for every process
  // (docs/adr/0098-limits-counted-once-in-postgresql.md), its hits taken 16 at a time by each
  // process: one small statement per 16 requests at most, beside the read.
  it('answer with one statement each besides the shared per-token limit: the token and the read together', async () => {
    let r;
    const besidesLimit = (s: string[]) => s.filter((x) => x !== 'limit_add');
    expect(besidesLimit(await statements(async () => { r = await status(billId, m.auth); }))).toEqual(['bill_status_by_token']);
    expect(r!.statusCode).toBe(200);
    expect(r!.json()).toMatchObject({ id: billId, success: true });
    expect(besidesLimit(await statements(async () => { r = await balance(m.auth); }))).toEqual(['merchant_balance_by_token']);
    expect(r!.statusCode).toBe(200);
    // In the order of the two-statement path (the currencies' own order).
    const expected = (await t.app.services.merchants.balances(m.merchantId)).map((b) => b.currency);
    expect(expected.length).toBeGreaterThan(1);
    expect(r!.json().balances.map((b: { currency: string }) => b.currency)).toEqual(expected);
  });

  // CHAR(64) api_token_hash: a parameter typed text would compare the column cast to text, which
  // its unique index cannot serve, and every request would read the whole merchants table.
  it('find the token\'s merchant and the rows they read by index: the token hash\'s unique index serves the statement as sent', async () => {
    const sent = new Map<string, { text: string; values: unknown[] }>();
    const pool = t.app.db.pool;
    const original = pool.query.bind(pool);
    (pool as { query: unknown }).query = (q: unknown, ...rest: unknown[]) => {
      const named = q as { name?: string; text: string; values: unknown[] };
      if (typeof q === 'object' && named.name) sent.set(named.name, named);
      return (original as (...a: unknown[]) => unknown)(q, ...rest);
    };
    try {
      expect((await status(billId, m.auth)).statusCode).toBe(200);
      expect((await balance(m.auth)).statusCode).toBe(200);
    } finally { (pool as { query: unknown }).query = original; }
    const c = await pool.connect();
    try {
      // A small test table is cheaper to scan whole: ask for the plan an index-less table would not have.
      await c.query('SET enable_seqscan = off');
      for (const [name, read] of [['bill_status_by_token', 'bills_pkey'], ['merchant_balance_by_token', 'balances_pkey']] as const) {
        const q = sent.get(name);
        expect(q, name).toBeDefined();
        const plan = (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q!.text}`, q!.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan, name).toContain('merchants_api_token_hash_key');
        expect(plan, name).toContain(read);
        expect(plan, name).not.toMatch(/Seq Scan/);
      }
    } finally {
      await c.query('RESET enable_seqscan');
      c.release();
    }
  });

  it('a wrong token is 401, before a missing or unknown id', async () => {
    for (const url of [`/api/v1/bill/status?id=${billId}`, '/api/v1/bill/status', '/api/v1/bill/status?id=nope', '/api/v1/merchant/balance']) {
      const r = await get(url, { authorization: 'Bearer wrong-token' });
      expect(r.statusCode, url).toBe(401);
      expect(r.json()).toEqual({ success: false, message: 'Unauthenticated.' });
    }
  });

  it('another merchant\'s bill is bill_not_found, not its data', async () => {
    const other = await createMerchant(t);
    const r = await status(billId, other.auth);
    // The spec: 422 api:error.bill_not_found.
    expect(r.statusCode).toBe(422);
    expect(r.json().message).toBe('api:error.bill_not_found');
    expect(r.body).not.toContain('"amount"');
  });

  it('a banned merchant gets merchant_banned, never its bill or balance, also for a bad query', async () => {
    const banned = await createMerchant(t);
    const own = await createBill(t, banned);
    await t.db.pool.query(`UPDATE merchants SET status = 'BANNED' WHERE id = $1`, [banned.merchantId]);
    for (const r of [await status(own, banned.auth), await get('/api/v1/bill/status', banned.auth), await balance(banned.auth)]) {
      expect(r.statusCode).toBe(403);
      expect(r.json().message).toBe('api:error.merchant_banned');
    }
  });

  it('merchant/balance keeps its subscription check; bill/status does not have one', async () => {
    const x = await createMerchant(t);
    const own = await createBill(t, x);
    await t.db.pool.query(`UPDATE merchants SET subscription = 'INACTIVE' WHERE id = $1`, [x.merchantId]);
    const b = await balance(x.auth);
    expect(b.statusCode).toBe(403);
    expect(b.json().message).toBe('api:error.merchant_subscription_inactive');
    expect((await status(own, x.auth)).statusCode).toBe(200);
  });

  it('the IP allow-list refuses other addresses with ip_access_denied and admits its own', async () => {
    const x = await createMerchant(t);
    const own = await createBill(t, x);
    expect((await admin(t, 'PATCH', `/merchants/${x.merchantId}`, { api_ip_allowlist: ['203.0.113.7'] })).status).toBe(200);
    for (const r of [await status(own, x.auth, '198.51.100.1'), await balance(x.auth, '198.51.100.1')]) {
      expect(r.statusCode).toBe(403);
      expect(r.json().message).toBe('api:error.ip_access_denied');
    }
    expect((await status(own, x.auth, '203.0.113.7')).statusCode).toBe(200);
    expect((await balance(x.auth, '203.0.113.7')).statusCode).toBe(200);
  });

  it('a token refreshed a moment ago is refused at once; the new one reads', async () => {
    const x = await createMerchant(t);
    const own = await createBill(t, x);
    const fresh = await t.app.services.merchants.refreshToken(x.merchantId);
    expect((await status(own, x.auth)).statusCode).toBe(401);
    expect((await balance(x.auth)).statusCode).toBe(401);
    expect((await status(own, { authorization: `Bearer ${fresh}` })).statusCode).toBe(200);
    expect((await balance({ authorization: `Bearer ${fresh}` })).statusCode).toBe(200);
  });

  it('a restricted key is authenticated by the hook with its scopes, and reads the same answer', async () => {
    const k = await admin(t, 'POST', `/merchants/${m.merchantId}/keys`, { name: 'reader', scopes: ['bills:read'] });
    expect(k.status, JSON.stringify(k.body)).toBe(201);
    const auth = { authorization: `Bearer ${k.body.api_token}` };
    const viaKey = await status(billId, auth);
    expect(viaKey.statusCode).toBe(200);
    expect(viaKey.json()).toEqual((await status(billId, m.auth)).json());
    const noScope = await balance(auth);
    expect(noScope.statusCode).toBe(403);
    expect(noScope.json().message).toBe('api:error.insufficient_scope');
  });
});
