import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

describe('favicon', () => {
  it('GET /favicon.ico answers a small .ico from the service itself, cacheable', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('image/x-icon');
    expect(r.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(r.rawPayload.subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
    expect(r.rawPayload.length).toBeLessThan(2048);
    expect(r.rawPayload).toEqual(readFileSync('src/assets/favicon.ico'));
  });

  it('the payment page and the cabinet layout link it (no CDN, no empty data: icon)', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/pay/unknownbill' });
    const cabinet = await t.app.inject({ method: 'GET', url: '/cabinet/login' });
    expect(cabinet.statusCode).toBe(200);
    for (const html of [page.body, cabinet.body]) {
      expect(html).toContain('<link rel="icon" href="/favicon.ico">');
      expect(html).not.toMatch(/rel="icon" href="(data:|https?:)/);
    }
  });
});
