import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { adminTokenMatches } from '../../src/admin/auth.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const UNAUTH = { success: false, message: 'Unauthenticated.' };

describe('operator API authentication', () => {
  const routes: Array<[string, string]> = [
    ['GET', '/admin/v1/merchants'], ['POST', '/admin/v1/merchants'], ['GET', '/admin/v1/merchants/x'],
    ['PATCH', '/admin/v1/merchants/x'], ['POST', '/admin/v1/merchants/x/token'], ['PUT', '/admin/v1/merchants/x/payout-webhook'],
    ['POST', '/admin/v1/merchants/x/shops'], ['PATCH', '/admin/v1/shops/x'], ['GET', '/admin/v1/shops/x'],
    ['POST', '/admin/v1/merchants/x/payout-accounts'], ['PATCH', '/admin/v1/payout-accounts/x'],
    ['POST', '/admin/v1/merchants/x/balance-adjustments'], ['PUT', '/admin/v1/rates/USD'], ['DELETE', '/admin/v1/rates/USD'],
    ['GET', '/admin/v1/rates'], ['GET', '/admin/v1/sbp-banks'], ['PATCH', '/admin/v1/sbp-banks/1'], ['GET', '/admin/v1/ledger/verify'],
  ];

  it('every operator route answers 401 Unauthenticated without a token', async () => {
    for (const [method, url] of routes) {
      const r = await t.app.inject({ method: method as 'GET', url, payload: {} });
      expect(r.statusCode, `${method} ${url}`).toBe(401);
      expect(r.json()).toEqual(UNAUTH);
    }
  });

  it('a wrong token, a merchant token or another scheme is 401 and changes nothing', async () => {
    const m = await t.app.services.merchants.create({ name: 'M', email: 'auth-m@example.test' });
    for (const authorization of [`Bearer ${ADMIN_TOKEN}x`, `Bearer ${m.apiToken}`, `Basic ${ADMIN_TOKEN}`, ADMIN_TOKEN, 'Bearer ', `Bearer ${ADMIN_TOKEN.slice(0, -1)}`]) {
      const r = await t.app.inject({ method: 'POST', url: '/admin/v1/merchants', headers: { authorization }, payload: { name: 'X', email: 'never@example.test' } });
      expect(r.statusCode, authorization).toBe(401);
      expect(r.json()).toEqual(UNAUTH);
    }
    expect(await t.db.prisma.merchant.count({ where: { email: 'never@example.test' } })).toBe(0);
  });

  it('the admin token opens the operator API', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(r.statusCode).toBe(200);
  });

  it('the admin token is not a merchant token: /api/v1 refuses it with 401', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(r.statusCode).toBe(401);
  });

  it('token comparison: exact match only, whatever the length of the guess', () => {
    expect(adminTokenMatches(`Bearer ${ADMIN_TOKEN}`, ADMIN_TOKEN)).toBe(true);
    expect(adminTokenMatches(`bearer ${ADMIN_TOKEN}`, ADMIN_TOKEN)).toBe(true);
    expect(adminTokenMatches(undefined, ADMIN_TOKEN)).toBe(false);
    expect(adminTokenMatches('Bearer a', ADMIN_TOKEN)).toBe(false);
    expect(adminTokenMatches(`Bearer ${ADMIN_TOKEN}${'x'.repeat(1000)}`, ADMIN_TOKEN)).toBe(false);
  });

  it("operator routes are documented in the operators' OpenAPI document (/admin/docs/json) under the admin tag", async () => {
    const r = await t.app.inject({ method: 'GET', url: '/admin/docs/json' });
    const doc = r.json() as { paths: Record<string, Record<string, { tags?: string[]; summary?: string }>> };
    const adminPaths = Object.entries(doc.paths).filter(([p]) => p.startsWith('/admin/v1/'));
    expect(adminPaths.length).toBeGreaterThanOrEqual(12);
    for (const [p, ops] of adminPaths) {
      for (const [m, op] of Object.entries(ops)) {
        expect(op.tags, `${m} ${p}`).toContain('admin');
        expect(op.summary, `${m} ${p}`).toBeTruthy();
      }
    }
  });
});
