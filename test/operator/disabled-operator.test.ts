import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient, adminApi, enrolledOperator } from './helpers.js';

/**
 * Issue 27: an operator disabled then re-enabled gets nothing back that they held before the
 * disable: not their API tokens (test/admin/operators.test.ts), not a console session left open
 * in a browser, and the audit trail names the person (their email) in the console.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

describe('a disabled operator', () => {
  it("the console session open before the disable is over after re-enabling: the browser is sent to sign in", async () => {
    const op = await enrolledOperator(t, 'finance');
    expect((await op.client.get('/operator/merchants')).statusCode).toBe(200);
    await adminApi(t, 'PATCH', `/operators/${op.id}`, { status: 'disabled' });
    await adminApi(t, 'PATCH', `/operators/${op.id}`, { status: 'active' });
    const r = await op.client.get('/operator/merchants');
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toMatch(/^\/operator\/login/);
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM operator_sessions WHERE operator_id = $1', [op.id])).rows[0].n).toBe(0);
  });

  it("the console's audit page shows the operator's email as the actor of their changes", async () => {
    const op = await enrolledOperator(t, 'admin');
    const m = await adminApi(t, 'POST', '/merchants', { name: 'Audit shop', email: `audit-${Date.now()}@shop.test` });
    const page = await op.client.get(`/operator/merchants/${m.id}`);
    const r = await op.client.post(`/operator/merchants/${m.id}/patch`, { ...ConsoleClient.formOf(page.body), verified: 'true' });
    expect(r.statusCode).toBeLessThan(400);
    const audit = await op.client.get(`/operator/audit?object_id=${m.id}&action=merchant.update`);
    expect(audit.body).toContain(op.email);
    expect(audit.body).toContain(`operator:${op.id}`);
  });
});
