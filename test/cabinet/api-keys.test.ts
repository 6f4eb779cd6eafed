import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { CabinetClient, cabinetMerchant, signedIn, teamMember, type CabinetMerchant } from './helpers.js';
import { fund, card } from '../payout/helpers.js';

/**
 * The cabinet's side of issue 27: only the owner sees or refreshes the live API token (the
 * attack: a developer refreshed it, read it, and paid out with it); restricted keys are
 * created and revoked on the API page within the role's scopes; removing a member revokes
 * the keys they created, in the same transaction.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

const tokenHash = async (merchantId: string) => (await t.db.pool.query('SELECT api_token_hash FROM merchants WHERE id = $1', [merchantId])).rows[0].api_token_hash as string;
const keysOf = async (merchantId: string) =>
  (await t.db.pool.query('SELECT id, name, scopes, created_by, created_by_user_id, revoked_at FROM api_keys WHERE merchant_id = $1 ORDER BY created_at', [merchantId])).rows;

/** Creates a key from the API page's form; the 303 and the page it leads to (the token shown once). */
async function createKey(c: CabinetClient, name: string, scopes: string[]) {
  const page = await c.get('/cabinet/api');
  const body = new URLSearchParams({ _csrf: CabinetClient.csrfOf(page.body), name });
  for (const s of scopes) body.append('scopes', s);
  const r = await t.app.inject({
    method: 'POST', url: '/cabinet/api/keys', payload: body.toString(),
    headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
  });
  if (r.statusCode !== 303) return { status: r.statusCode, token: null };
  const shown = await c.get(r.headers.location as string);
  return { status: r.statusCode, token: /id="new-key" readonly value="([^"]+)"/.exec(shown.body)?.[1] ?? null, again: (await c.get(r.headers.location as string)).body };
}

const api = (token: string, method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

describe('the live API token is the owner\'s alone', () => {
  it('a developer sees the API page without the refresh form; GET and POST /cabinet/api/refresh are 403 and the token is unchanged', async () => {
    const m = await cabinetMerchant(t);
    const dev = await teamMember(t, m, 'developer');
    const before = await tokenHash(m.merchantId);
    const page = await dev.client.get('/cabinet/api');
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('href="/cabinet/api/refresh"');
    expect(page.body).toContain('data-testid="live-owner-only"');
    expect((await dev.client.get('/cabinet/api/refresh')).statusCode).toBe(403);
    const r = await dev.client.submit('/cabinet/api', '/cabinet/api/refresh', {});
    expect(r.statusCode).toBe(403);
    expect(r.body).not.toContain('id="new-token"');
    expect(await tokenHash(m.merchantId)).toBe(before);
    expect((await t.db.pool.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'merchant.token.refresh' AND object_id = $1", [m.merchantId])).rows[0].n).toBe(0);
  });

  it('the owner refreshes it (audited) and a team member with role owner may too', async () => {
    const m = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    expect((await owner.get('/cabinet/api')).body).toContain('href="/cabinet/api/refresh"');
    const before = await tokenHash(m.merchantId);
    expect((await owner.submit('/cabinet/api', '/cabinet/api/refresh', {})).statusCode).toBe(303);
    expect(await tokenHash(m.merchantId)).not.toBe(before);
    const co = await teamMember(t, m, 'owner');
    expect((await co.client.submit('/cabinet/api', '/cabinet/api/refresh', {})).statusCode).toBe(303);
    const trail = (await t.db.pool.query("SELECT actor FROM audit_log WHERE action = 'merchant.token.refresh' AND object_id = $1 ORDER BY id", [m.merchantId])).rows;
    expect(trail.map((x) => x.actor)).toEqual([`merchant:${m.merchantId}`, `merchant-user:${co.id}`]);
  });
});

describe('restricted keys in the cabinet', () => {
  it('the owner creates a payouts:write key: shown once, it pays out with the grant, audited', async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true, grantRegularPayouts: true } });
    await fund(t, m.merchantId, '5000.00');
    const owner = await signedIn(t, m);
    const k = await createKey(owner, 'Payouts bot', ['payouts:write']);
    expect(k.status).toBe(303);
    expect(k.token).toMatch(/^rk_live_/);
    expect(k.again).not.toContain(k.token!);
    const r = await api(k.token!, 'POST', '/api/v1/payout/regular/create', card('100.00'));
    expect(r.statusCode, r.body).toBe(200);
    const [row] = await keysOf(m.merchantId);
    expect(row).toMatchObject({ name: 'Payouts bot', scopes: ['payouts:write'], created_by: `merchant:${m.merchantId}`, created_by_user_id: null });
    const trail = (await t.db.pool.query("SELECT actor, action FROM audit_log WHERE object_id = $1", [row.id])).rows;
    expect(trail).toEqual([{ actor: `merchant:${m.merchantId}`, action: 'api_key.create' }]);
    // The page lists it by name and ending, never the token.
    const page = await owner.get('/cabinet/api');
    expect(page.body).toContain('Payouts bot');
    expect(page.body).toContain(`…${k.token!.slice(-4)}`);
    expect(page.body).not.toContain(k.token!);
  });

  it('a developer creates a key without money-out scopes; with payouts:write or refunds:write it is refused (403, nothing created)', async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true, grantRegularPayouts: true } });
    const dev = await teamMember(t, m, 'developer');
    const page = await dev.client.get('/cabinet/api');
    expect(page.body).toContain('value="bills:write"');
    expect(page.body).not.toContain('value="payouts:write"');
    expect(page.body).not.toContain('value="refunds:write"');
    for (const scopes of [['payouts:write'], ['bills:read', 'refunds:write']]) {
      const r = await createKey(dev.client, 'sneaky', scopes);
      expect(r.status, scopes.join()).toBe(403);
    }
    expect(await keysOf(m.merchantId)).toEqual([]);
    const ok = await createKey(dev.client, 'Shop plugin', ['bills:read', 'bills:write']);
    expect(ok.status).toBe(303);
    const bill = await api(ok.token!, 'POST', '/api/v1/bill/create', { amount: '100.00', shop_id: m.shopId });
    expect(bill.statusCode, bill.body).toBe(200);
    expect((await api(ok.token!, 'POST', '/api/v1/payout/regular/create', card('100.00'))).json()).toEqual({ success: false, message: 'api:error.insufficient_scope' });
    const [row] = await keysOf(m.merchantId);
    expect(row).toMatchObject({ created_by: `merchant-user:${dev.id}`, created_by_user_id: dev.id });
  });

  it('an unknown scope or no name is a 422 on the form; accountants and support create no keys (403)', async () => {
    const m = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    expect((await createKey(owner, 'x', ['bills:delete'])).status).toBe(422);
    expect((await createKey(owner, '', ['bills:read'])).status).toBe(422);
    expect((await createKey(owner, 'x', [])).status).toBe(422);
    for (const role of ['accountant', 'support'] as const) {
      const u = await teamMember(t, m, role);
      const page = await u.client.get('/cabinet/api');
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('data-testid="key-form"');
      expect((await createKey(u.client, 'x', ['bills:read'])).status, role).toBe(403);
    }
    expect(await keysOf(m.merchantId)).toEqual([]);
  });

  it("a developer cannot revoke the owner's payout key; the owner revokes it and it is 401 at once", async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true, grantRegularPayouts: true } });
    const owner = await signedIn(t, m);
    const k = await createKey(owner, 'Payouts', ['payouts:read', 'payouts:write']);
    const [row] = await keysOf(m.merchantId);
    const dev = await teamMember(t, m, 'developer');
    expect((await dev.client.get('/cabinet/api')).body).not.toContain(`/cabinet/api/keys/${row.id}/revoke`);
    expect((await dev.client.submit('/cabinet/api', `/cabinet/api/keys/${row.id}/revoke`, {})).statusCode).toBe(403);
    expect((await api(k.token!, 'GET', '/api/v1/payout/search')).statusCode).toBe(200);
    expect((await owner.submit('/cabinet/api', `/cabinet/api/keys/${row.id}/revoke`, {})).statusCode).toBe(303);
    expect((await api(k.token!, 'GET', '/api/v1/payout/search')).statusCode).toBe(401);
    // Another merchant's owner cannot reach this key.
    const other = await signedIn(t, await cabinetMerchant(t));
    expect((await other.submit('/cabinet/api', `/cabinet/api/keys/${row.id}/revoke`, {})).statusCode).toBe(404);
    const trail = (await t.db.pool.query('SELECT action FROM audit_log WHERE object_id = $1 ORDER BY id', [row.id])).rows.map((x) => x.action);
    expect(trail).toEqual(['api_key.create', 'api_key.revoke']);
  });
});

describe('removing a member revokes the keys they created', () => {
  it("the removed developer's keys fail at once (401), the owner's keep working; each revocation audited with the reason", async () => {
    const m: CabinetMerchant = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    const dev = await teamMember(t, m, 'developer');
    const devKey = await createKey(dev.client, 'Dev key', ['bills:read']);
    const ownerKey = await createKey(owner, 'Owner key', ['bills:read']);
    expect((await api(devKey.token!, 'GET', '/api/v1/bill/search')).statusCode).toBe(200);

    const page = await owner.get('/cabinet/team');
    expect((await owner.post(`/cabinet/team/${dev.id}/remove`, { _csrf: CabinetClient.csrfOf(page.body) })).statusCode).toBe(303);

    expect((await api(devKey.token!, 'GET', '/api/v1/bill/search')).statusCode).toBe(401);
    expect((await api(ownerKey.token!, 'GET', '/api/v1/bill/search')).statusCode).toBe(200);
    const rows = await keysOf(m.merchantId);
    const revoked = rows.find((r) => r.name === 'Dev key')!;
    expect(revoked.revoked_at).not.toBeNull();
    const trail = (await t.db.pool.query("SELECT actor, after FROM audit_log WHERE object_id = $1 AND action = 'api_key.revoke'", [revoked.id])).rows;
    expect(trail).toHaveLength(1);
    expect(trail[0].actor).toBe(`merchant:${m.merchantId}`);
    expect(trail[0].after).toMatchObject({ reason: 'member_removed', name: 'Dev key' });
  });
});
