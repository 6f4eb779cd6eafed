import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { NotFoundError, ValidationError } from '../../src/errors.js';
import { admin, adminMerchant } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp({ ALLOW_PRIVATE_WEBHOOK_URLS: 'false' }); });
afterAll(async () => { await t.close(); });

const PUBLIC = 'http://93.184.216.34/result';

describe('POST /admin/v1/merchants/{id}/shops', () => {
  it('creates a shop with its settings', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/shops`, {
      name: 'Main', enabled: false, default_currency: 'usd', result_url: PUBLIC, success_url: 'https://93.184.216.34/ok', fail_url: null,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      success: true, merchant_id: m.id, name: 'Main', enabled: false, default_currency: 'USD',
      result_url: PUBLIC, success_url: 'https://93.184.216.34/ok', fail_url: null,
    });
    expect(r.body.id).toBeTruthy();
    const g = await admin(t, 'GET', `/shops/${r.body.id}`);
    expect(g.status).toBe(200);
    expect(g.body.name).toBe('Main');
    const list = await admin(t, 'GET', `/merchants/${m.id}/shops`);
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([r.body.id]);
  });

  it('defaults: enabled, RUB, no URLs', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'Plain' });
    expect(r.body).toMatchObject({ enabled: true, default_currency: 'RUB', result_url: null, success_url: null, fail_url: null });
  });

  it('the URL guard refuses loopback, private, link-local and non-http URLs with a 422 on each field, creating nothing', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/shops`, {
      name: 'Bad', result_url: 'http://127.0.0.1:8080/cb', success_url: 'http://10.0.0.5/ok', fail_url: 'javascript:alert(1)',
    });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors).sort()).toEqual(['fail_url', 'result_url', 'success_url']);
    for (const url of ['http://localhost/x', 'http://169.254.169.254/latest', 'http://[::1]/x', 'http://192.168.1.1/']) {
      const x = await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'Bad', result_url: url });
      expect(x.status, url).toBe(422);
    }
    expect(await t.db.prisma.shop.count({ where: { merchantId: m.id } })).toBe(0);
  });

  it('missing name and bad currency are 422; unknown merchant is 404', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/shops`, { default_currency: 'GBP', enabled: 'perhaps' });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors).sort()).toEqual(['default_currency', 'enabled', 'name']);
    expect((await admin(t, 'POST', '/merchants/unknown/shops', { name: 'X' })).status).toBe(404);
    expect((await admin(t, 'GET', '/merchants/unknown/shops')).status).toBe(404);
  });
});

describe('PATCH /admin/v1/shops/{id}', () => {
  it('changes only the fields sent; null or "" clears a URL', async () => {
    const m = await adminMerchant(t);
    const s = (await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'S', result_url: PUBLIC, fail_url: PUBLIC })).body;
    const r = await admin(t, 'PATCH', `/shops/${s.id}`, { name: 'Renamed', result_url: null, fail_url: '', default_currency: 'EUR' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'Renamed', result_url: null, fail_url: null, default_currency: 'EUR', enabled: true });
    const r2 = await admin(t, 'PATCH', `/shops/${s.id}`, { enabled: 0 });
    expect(r2.body).toMatchObject({ name: 'Renamed', enabled: false, default_currency: 'EUR' });
  });

  it('a refused URL changes nothing', async () => {
    const m = await adminMerchant(t);
    const s = (await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'S', result_url: PUBLIC })).body;
    const r = await admin(t, 'PATCH', `/shops/${s.id}`, { name: 'Changed', result_url: 'http://127.0.0.1/cb' });
    expect(r.status).toBe(422);
    expect(r.body.errors.result_url).toBeDefined();
    const g = await admin(t, 'GET', `/shops/${s.id}`);
    expect(g.body).toMatchObject({ name: 'S', result_url: PUBLIC });
  });

  it('an empty PATCH changes nothing and answers the shop', async () => {
    const m = await adminMerchant(t);
    const s = (await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'Same', result_url: PUBLIC })).body;
    const r = await admin(t, 'PATCH', `/shops/${s.id}`, {});
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'Same', result_url: PUBLIC, enabled: true });
  });

  it('fiscalization: set, shown by GET, merged on a later PATCH, audited; values outside both providers\' lists are 422 on their field', async () => {
    const m = await adminMerchant(t);
    const s = (await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'F' })).body;
    expect(s.fiscalization).toEqual({ enabled: false, tax_system_code: null, vat_code: null, payment_subject: 'commodity', payment_mode: 'full_payment', ffd_version: '1.05' });
    const on = { enabled: true, tax_system_code: 1, vat_code: 11, payment_subject: 'commodity', payment_mode: 'full_payment', ffd_version: '1.2' };
    const r = await admin(t, 'PATCH', `/shops/${s.id}`, { fiscalization: on });
    expect(r.status).toBe(200);
    expect(r.body.fiscalization).toEqual(on);
    expect((await admin(t, 'GET', `/shops/${s.id}`)).body.fiscalization).toEqual(on);
    const off = await admin(t, 'PATCH', `/shops/${s.id}`, { fiscalization: { enabled: false } });
    expect(off.body.fiscalization).toEqual({ ...on, enabled: false });
    const audit = await t.db.pool.query<{ before: { fiscalization: unknown }; after: { fiscalization: unknown } }>(
      `SELECT before, after FROM audit_log WHERE object_id = $1 AND action = 'shop.update' ORDER BY id`, [s.id]);
    expect(audit.rows.map((a) => [a.before.fiscalization, a.after.fiscalization])).toEqual([
      [s.fiscalization, on], [on, { ...on, enabled: false }],
    ]);
    const bad = await admin(t, 'PATCH', `/shops/${s.id}`, {
      name: 'Changed', fiscalization: { enabled: 'maybe', tax_system_code: 7, vat_code: 13, payment_subject: 'property_right', payment_mode: 'later', ffd_version: '1.1' },
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual([
      'fiscalization.enabled', 'fiscalization.ffd_version', 'fiscalization.payment_mode', 'fiscalization.payment_subject', 'fiscalization.tax_system_code',
      'fiscalization.vat_code',
    ]);
    const fresh = (await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'G' })).body;
    const incomplete = await admin(t, 'PATCH', `/shops/${fresh.id}`, { fiscalization: { enabled: true } });
    expect(incomplete.status).toBe(422);
    expect(Object.keys(incomplete.body.errors).sort()).toEqual(['fiscalization.tax_system_code', 'fiscalization.vat_code']);
    expect((await admin(t, 'PATCH', `/shops/${fresh.id}`, { fiscalization: 'yes' })).status).toBe(422);
    const g = await admin(t, 'GET', `/shops/${s.id}`);
    expect(g.body).toMatchObject({ name: 'F', fiscalization: { ...on, enabled: false } });
  });

  it('unknown shop is 404', async () => {
    expect((await admin(t, 'PATCH', '/shops/unknown', { name: 'X' })).status).toBe(404);
    expect((await admin(t, 'GET', '/shops/unknown')).status).toBe(404);
  });
});

describe('ShopService.update (the cabinet reuses it)', () => {
  it("refuses another merchant's shop as not found and leaves it untouched", async () => {
    const a = await adminMerchant(t);
    const b = await adminMerchant(t);
    const s = (await admin(t, 'POST', `/merchants/${a.id}/shops`, { name: 'A shop' })).body;
    await expect(t.app.services.shops.update(b.id, s.id, { name: 'Hijacked' })).rejects.toThrow(NotFoundError);
    expect((await t.db.prisma.shop.findUniqueOrThrow({ where: { id: s.id } })).name).toBe('A shop');
    const ok = await t.app.services.shops.update(a.id, s.id, { name: 'Mine' });
    expect(ok.name).toBe('Mine');
  });

  it('applies the URL guard itself', async () => {
    const a = await adminMerchant(t);
    const s = (await admin(t, 'POST', `/merchants/${a.id}/shops`, { name: 'A shop' })).body;
    await expect(t.app.services.shops.update(a.id, s.id, { successUrl: 'http://10.1.2.3/' })).rejects.toThrow(ValidationError);
  });
});

describe('payout webhook URL guard with private addresses refused', () => {
  it('refuses loopback and private webhook URLs; accepts a public address', async () => {
    const m = await adminMerchant(t);
    for (const url of ['http://127.0.0.1:9000/hook', 'http://10.0.0.1/hook', 'http://localhost/hook']) {
      const r = await admin(t, 'PUT', `/merchants/${m.id}/payout-webhook`, { url });
      expect(r.status, url).toBe(422);
      expect(r.body.errors.url).toBeDefined();
    }
    expect((await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.id } })).payoutWebhookUrl).toBeNull();
    const ok = await admin(t, 'PUT', `/merchants/${m.id}/payout-webhook`, { url: 'https://93.184.216.34/hook' });
    expect(ok.status).toBe(200);
    await expect(t.app.services.merchants.setPayoutWebhookUrl(m.id, 'http://127.0.0.1/x')).rejects.toThrow(ValidationError);
  });
});
