import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { ConsoleClient, enrolledOperator, type OperatorFixture } from './helpers.js';

/** The console's shop page: every role reads it; an admin changes the settings and URLs (the URL guard, audited). */
let t: TestApp;
let adm: OperatorFixture;
beforeAll(async () => {
  t = await setupTestApp();
  adm = await enrolledOperator(t, 'admin');
});
afterAll(async () => { await t?.close(); });

const shopRow = async (id: string) => (await t.db.pool.query('SELECT name, enabled, result_url, success_url, fail_url FROM shops WHERE id = $1', [id])).rows[0];

describe('the console shop page', () => {
  it('an admin saves the name, enabled and the URLs; an empty URL clears it; audited as shop.update', async () => {
    const m = await createMerchant(t, { shop: { successUrl: 'https://shop.example/ok' } });
    const r = await adm.client.act(`/operator/shops/${m.shopId}`, `/operator/shops/${m.shopId}`, {
      name: 'Flowers online', default_currency: 'RUB', enabled: 'true', result_url: 'https://shop.example/result', success_url: '', fail_url: 'https://shop.example/fail',
    });
    expect(r.statusCode).toBe(303);
    expect(await shopRow(m.shopId)).toEqual({ name: 'Flowers online', enabled: true, result_url: 'https://shop.example/result', success_url: null, fail_url: 'https://shop.example/fail' });
    const audit = (await t.db.pool.query("SELECT actor FROM audit_log WHERE object_id = $1 AND action = 'shop.update'", [m.shopId])).rows;
    expect(audit).toEqual([{ actor: `operator:${adm.id}` }]);
  });

  it('a URL that is not one is named on the form (422) and nothing is saved', async () => {
    const m = await createMerchant(t);
    const before = await shopRow(m.shopId);
    const r = await adm.client.act(`/operator/shops/${m.shopId}`, `/operator/shops/${m.shopId}`, { name: 'X', default_currency: 'RUB', enabled: 'true', result_url: 'not a url' });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('f-result_url-error');
    expect(await shopRow(m.shopId)).toEqual(before);
  });

  it('another role reads it without a form and gets 403 on a POST', async () => {
    const m = await createMerchant(t);
    const fin = await enrolledOperator(t, 'finance');
    const page = await fin.client.get(`/operator/shops/${m.shopId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(`action="/operator/shops/${m.shopId}"`);
    const r = await fin.client.post(`/operator/shops/${m.shopId}`, { ...ConsoleClient.formOf(page.body), name: 'Y', default_currency: 'RUB' });
    expect(r.statusCode).toBe(403);
  });
});
