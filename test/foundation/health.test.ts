import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

describe('health and readiness', () => {
  it('GET /health answers 200 while the process is up', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/health' });
    expect(r.statusCode).toBe(200);
  });

  it('GET /ready answers 200 when the database answers and migrations are current', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(r.statusCode).toBe(200);
  });

  it('GET /ready answers 503 when a migration is missing', async () => {
    await t.db.pool.query(`UPDATE "_prisma_migrations" SET rolled_back_at = now()`);
    const r = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(r.statusCode).toBe(503);
    await t.db.pool.query(`UPDATE "_prisma_migrations" SET rolled_back_at = NULL`);
  });

  it('unknown routes answer JSON 404, never HTML', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ success: false, message: 'Not Found.' });
  });
});
