import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, TEST_KEY, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { admin } from './helpers.js';
import { buildCall } from '../../src/admin/cli.js';
import { runCli } from '../../src/entry/admin-cli.js';
import { sha256Hex } from '../../src/lib/crypto.js';

/**
 * Operator API for restricted API keys (issue 27): create (token answered once), list (never a
 * token), revoke (401 at once); create and revoke are an `admin`'s, every change is audited;
 * the CLI's keys:create|list|revoke run the same routes.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

const balance = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${token}` } });

async function operatorToken(role: string): Promise<string> {
  const c = await admin(t, 'POST', '/operators', { email: `keys-${role}-${Date.now()}@example.test`, role });
  expect(c.status).toBe(201);
  const k = await admin(t, 'POST', `/operators/${c.body.id}/tokens`, { name: 'ci' });
  return k.body.api_token as string;
}

describe('POST/GET/DELETE /admin/v1/merchants/{id}/keys', () => {
  it('creates a key (201, token once, stored as SHA-256), lists it without the token, revokes it (401 at once), each audited', async () => {
    const m = await createMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.merchantId}/keys`, { name: 'Reporting', scopes: ['payments:read', 'bills:read', 'payments:read'] });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ success: true, name: 'Reporting', scopes: ['bills:read', 'payments:read'], merchant_id: m.merchantId, revoked_at: null, created_by: 'admin-token' });
    const token = r.body.api_token as string;
    expect(token).toMatch(/^rk_live_[A-Za-z0-9_-]{64}$/);
    expect(r.body.token_last4).toBe(token.slice(-4));
    const row = (await t.db.pool.query('SELECT token_hash FROM api_keys WHERE id = $1', [r.body.id])).rows[0];
    expect(row.token_hash).toBe(sha256Hex(token));

    const list = await admin(t, 'GET', `/merchants/${m.merchantId}/keys`);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ id: r.body.id, name: 'Reporting', scopes: ['bills:read', 'payments:read'] });
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(list.body.data[0]).not.toHaveProperty('api_token');

    expect((await balance(token)).statusCode).toBe(403);
    const ok = await t.app.inject({ method: 'GET', url: '/api/v1/payment/search', headers: { authorization: `Bearer ${token}` } });
    expect(ok.statusCode).toBe(200);

    const del = await admin(t, 'DELETE', `/merchants/${m.merchantId}/keys/${r.body.id}`);
    expect(del.status).toBe(200);
    expect(del.body.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2} /);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/payment/search', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(401);
    // Revoking again changes nothing (and writes no second entry).
    expect((await admin(t, 'DELETE', `/merchants/${m.merchantId}/keys/${r.body.id}`)).status).toBe(200);

    const trail = (await t.db.pool.query("SELECT actor, action, before, after FROM audit_log WHERE object_type = 'api_key' AND object_id = $1 ORDER BY id", [r.body.id])).rows;
    expect(trail.map((x) => [x.actor, x.action])).toEqual([['admin-token', 'api_key.create'], ['admin-token', 'api_key.revoke']]);
    expect(trail[0].after).toMatchObject({ merchant_id: m.merchantId, name: 'Reporting', scopes: ['bills:read', 'payments:read'] });
    expect(JSON.stringify(trail)).not.toContain(token);
    expect(JSON.stringify(trail)).not.toContain(sha256Hex(token));
  });

  it('refuses an unknown or missing scope and a missing name (422 errors.scopes / errors.name), creating nothing', async () => {
    const m = await createMerchant(t);
    for (const body of [{ name: 'x', scopes: ['bills:read', 'bills:delete'] }, { name: 'x', scopes: [] }, { name: 'x' }, { name: 'x', scopes: 'bills:read' }]) {
      const r = await admin(t, 'POST', `/merchants/${m.merchantId}/keys`, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(r.body.errors)).toEqual(['scopes']);
    }
    const noName = await admin(t, 'POST', `/merchants/${m.merchantId}/keys`, { scopes: ['bills:read'] });
    expect(noName.status).toBe(422);
    expect(Object.keys(noName.body.errors)).toEqual(['name']);
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1', [m.merchantId])).rows[0].n).toBe(0);
  });

  it('unknown merchants, test twins and another merchant\'s key are 404', async () => {
    const m = await createMerchant(t);
    const other = await createMerchant(t);
    expect((await admin(t, 'POST', '/merchants/nope/keys', { name: 'x', scopes: ['bills:read'] })).status).toBe(404);
    const twin = await t.app.services.merchants.testTwinOf(m.merchantId);
    expect((await admin(t, 'POST', `/merchants/${twin!.id}/keys`, { name: 'x', scopes: ['bills:read'] })).status).toBe(404);
    const k = await admin(t, 'POST', `/merchants/${m.merchantId}/keys`, { name: 'x', scopes: ['bills:read'] });
    expect((await admin(t, 'DELETE', `/merchants/${other.merchantId}/keys/${k.body.id}`)).status).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/bill/search', headers: { authorization: `Bearer ${k.body.api_token}` } })).statusCode).toBe(200);
  });

  it('creating and revoking are for admin operators; other roles list (403 on the rest, nothing created)', async () => {
    const m = await createMerchant(t);
    const existing = await admin(t, 'POST', `/merchants/${m.merchantId}/keys`, { name: 'x', scopes: ['bills:read'] });
    for (const role of ['support', 'finance', 'auditor']) {
      const token = await operatorToken(role);
      const as = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
        t.app.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
      expect((await as('POST', `/merchants/${m.merchantId}/keys`, { name: 'y', scopes: ['payouts:write'] })).statusCode, role).toBe(403);
      expect((await as('DELETE', `/merchants/${m.merchantId}/keys/${existing.body.id}`)).statusCode, role).toBe(403);
      const list = await as('GET', `/merchants/${m.merchantId}/keys`);
      expect(list.statusCode, role).toBe(200);
      expect(list.json().data).toHaveLength(1);
    }
    const op = await operatorToken('admin');
    const r = await t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/keys`, headers: { authorization: `Bearer ${op}` }, payload: { name: 'z', scopes: ['balance:read'] } });
    expect(r.statusCode).toBe(201);
    expect(r.json().created_by).toMatch(/^operator:/);
  });
});

describe('CLI keys:create | keys:list | keys:revoke', () => {
  it('maps the verbs to the operator routes', () => {
    expect(buildCall(['keys:create', 'M1', '--name', 'Shop', '--scopes', 'bills:read,bills:write'])).toEqual({
      method: 'POST', path: '/merchants/M1/keys', body: { name: 'Shop', scopes: ['bills:read', 'bills:write'] },
    });
    expect(buildCall(['keys:list', 'M1'])).toEqual({ method: 'GET', path: '/merchants/M1/keys' });
    expect(buildCall(['keys:revoke', 'M1', 'K1'])).toEqual({ method: 'DELETE', path: '/merchants/M1/keys/K1' });
  });

  it('creates, lists and revokes through the same routes (runCli against this database)', async () => {
    const m = await createMerchant(t);
    const saved = { ...process.env };
    Object.assign(process.env, { DATABASE_URL: t.dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, LOG_LEVEL: 'silent' });
    const cli = async (args: string[]) => {
      let out = '';
      const code = await runCli(args, { out: (s) => { out += s; }, err: () => {} });
      return { code, out: JSON.parse(out) };
    };
    try {
      const created = await cli(['keys:create', m.merchantId, '--name', 'CLI key', '--scopes', 'balance:read']);
      expect(created.code).toBe(0);
      expect(created.out.api_token).toMatch(/^rk_live_/);
      expect((await balance(created.out.api_token)).statusCode).toBe(200);
      const listed = await cli(['keys:list', m.merchantId]);
      expect(listed.out.data.map((k: { id: string }) => k.id)).toEqual([created.out.id]);
      expect((await cli(['keys:revoke', m.merchantId, created.out.id])).code).toBe(0);
      expect((await balance(created.out.api_token)).statusCode).toBe(401);
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});
