import { afterAll, beforeAll, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { CabinetClient, cabinetMerchant, PASSWORD } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp({ PUBLIC_BASE_URL: 'https://pay.example.com' }); });
afterAll(async () => { await t.close(); });

test('the session cookie is Secure when PUBLIC_BASE_URL is https', async () => {
  const m = await cabinetMerchant(t);
  const r = await new CabinetClient(t).login(m.email, PASSWORD);
  expect(r.statusCode).toBe(303);
  const set = ([] as string[]).concat(r.headers['set-cookie'] as string[]).find((s) => s.startsWith('cab_sid='))!;
  expect(set).toMatch(/; Secure/i);
  expect(set).toMatch(/HttpOnly/i);
});
