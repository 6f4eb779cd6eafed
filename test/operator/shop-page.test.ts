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

  const fiscalOf = async (id: string) => (await t.db.pool.query('SELECT fiscalization FROM shops WHERE id = $1', [id])).rows[0].fiscalization;
  const base = { name: 'Flowers online', default_currency: 'RUB', enabled: 'true' };

  it('an admin turns receipts on with VAT 22%: saved through the shop service, shown in words, audited as shop.update', async () => {
    const m = await createMerchant(t);
    const r = await adm.client.act(`/operator/shops/${m.shopId}`, `/operator/shops/${m.shopId}`, {
      ...base, fiscal_enabled: 'true', tax_system_code: '1', vat_code: '11', payment_subject: 'gambling_bet', payment_mode: 'full_prepayment', ffd_version: '1.2',
    });
    expect(r.statusCode).toBe(303);
    expect(await fiscalOf(m.shopId)).toEqual({
      enabled: true, tax_system_code: 1, vat_code: 11, payment_subject: 'gambling_bet', payment_mode: 'full_prepayment', ffd_version: '1.2',
    });
    const page = (await adm.client.get(`/operator/shops/${m.shopId}`)).body;
    expect(page).toContain('<option value="11" selected>VAT 22%</option>');
    expect(page).toContain('<option value="1" selected>General (OSN)</option>');
    expect(page).toContain('<option value="gambling_bet" selected>Gambling bet</option>');
    expect(page).toContain('<option value="full_prepayment" selected>Full prepayment (100%)</option>');
    expect(page).toContain('<option value="1.2" selected>FFD 1.2 (each line with its unit)</option>');
    expect(page).toMatch(/id="f-fiscal_enabled"[^>]*checked/);
    const audit = (await t.db.pool.query("SELECT actor, after FROM audit_log WHERE object_id = $1 AND action = 'shop.update'", [m.shopId])).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0].actor).toBe(`operator:${adm.id}`);
    expect(JSON.stringify(audit[0].after)).toContain('"vat_code":11');
    // Another role reads the same settings in words.
    const aud = await enrolledOperator(t, 'auditor');
    const read = (await aud.client.get(`/operator/shops/${m.shopId}`)).body;
    expect(read).toContain('<dd>VAT 22%</dd>');
    expect(read).toContain('<dd>Gambling bet</dd>');
  });

  it('ENVD (4) is refused with its reason next to the Taxation system field (422) and nothing changes', async () => {
    const m = await createMerchant(t);
    await adm.client.act(`/operator/shops/${m.shopId}`, `/operator/shops/${m.shopId}`, { ...base, fiscal_enabled: 'true', tax_system_code: '2', vat_code: '1' });
    const shopBefore = await shopRow(m.shopId);
    const fiscalBefore = await fiscalOf(m.shopId);
    const audits = async () => Number((await t.db.pool.query("SELECT count(*) FROM audit_log WHERE object_id = $1", [m.shopId])).rows[0].count);
    const auditsBefore = await audits();
    const r = await adm.client.act(`/operator/shops/${m.shopId}`, `/operator/shops/${m.shopId}`, {
      ...base, name: 'Renamed', fiscal_enabled: 'true', tax_system_code: '4', vat_code: '11',
    });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('f-tax_system_code-error');
    expect(r.body).toContain('abolished in 2021');
    expect(r.body).toContain('<strong>Taxation system</strong>');
    expect(r.body).not.toContain('<strong>Tax system code</strong>');
    expect(await shopRow(m.shopId)).toEqual(shopBefore);
    expect(await fiscalOf(m.shopId)).toEqual(fiscalBefore);
    expect(await audits()).toBe(auditsBefore);
  });

  it('an empty name and ENVD are named together on one answer (422), nothing stored', async () => {
    const m = await createMerchant(t);
    const before = await fiscalOf(m.shopId);
    const r = await adm.client.act(`/operator/shops/${m.shopId}`, `/operator/shops/${m.shopId}`, { ...base, name: '', fiscal_enabled: 'true', tax_system_code: '4', vat_code: '11' });
    expect(r.statusCode).toBe(422);
    expect(r.body).toContain('f-name-error');
    expect(r.body).toContain('f-tax_system_code-error');
    expect(await fiscalOf(m.shopId)).toEqual(before);
  });

  it('a read-only role (auditor) sees no fiscal form and cannot save one (403, nothing changes)', async () => {
    const m = await createMerchant(t);
    const aud = await enrolledOperator(t, 'auditor');
    const page = await aud.client.get(`/operator/shops/${m.shopId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('name="vat_code"');
    const before = await fiscalOf(m.shopId);
    const r = await aud.client.post(`/operator/shops/${m.shopId}`, { ...ConsoleClient.formOf(page.body), ...base, fiscal_enabled: 'true', tax_system_code: '1', vat_code: '11' });
    expect(r.statusCode).toBe(403);
    expect(await fiscalOf(m.shopId)).toEqual(before);
  });
});
