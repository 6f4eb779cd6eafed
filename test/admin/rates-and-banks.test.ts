import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { admin, adminMerchant } from './helpers.js';

let t: TestApp;
const BANK = 990000000201;
beforeAll(async () => {
  t = await setupTestApp();
  await t.db.pool.query(`INSERT INTO sbp_banks (member_id, name, name_en, bic) VALUES ($1, 'Банк', 'Bank', '044525111') ON CONFLICT DO NOTHING`, [BANK]);
});
afterAll(async () => { await t.close(); });

describe('exchange rates', () => {
  it('PUT sets and replaces a rate; GET lists it; DELETE removes it', async () => {
    const r = await admin(t, 'PUT', '/rates/USD', { rub_per_unit: '92.5' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, currency: 'USD', rub_per_unit: '92.5' });
    expect((await admin(t, 'PUT', '/rates/usd', { rub_per_unit: 95.123456 })).body.rub_per_unit).toBe('95.123456');
    await admin(t, 'PUT', '/rates/EUR', { rub_per_unit: '101' });
    const list = await admin(t, 'GET', '/rates');
    expect(list.body.data.map((x: { currency: string; rub_per_unit: string }) => [x.currency, x.rub_per_unit])).toEqual([['USD', '95.123456'], ['EUR', '101']]);
    const d = await admin(t, 'DELETE', '/rates/EUR');
    expect(d.status).toBe(200);
    expect(await t.db.prisma.fxRate.findUnique({ where: { currency: 'EUR' } })).toBeNull();
    expect((await admin(t, 'DELETE', '/rates/EUR')).status).toBe(404);
  });

  it('refuses RUB or an unknown currency, and a rate that is not a positive decimal with at most 6 places', async () => {
    for (const [cur, payload, fields] of [
      ['RUB', { rub_per_unit: '1' }, ['currency']],
      ['GBP', { rub_per_unit: '1' }, ['currency']],
      ['USD', { rub_per_unit: '0' }, ['rub_per_unit']],
      ['USD', { rub_per_unit: '-5' }, ['rub_per_unit']],
      ['USD', { rub_per_unit: 'abc' }, ['rub_per_unit']],
      ['USD', { rub_per_unit: '1.1234567' }, ['rub_per_unit']],
      ['USD', {}, ['rub_per_unit']],
    ] as const) {
      const r = await admin(t, 'PUT', `/rates/${cur}`, payload);
      expect(r.status, `${cur} ${JSON.stringify(payload)}`).toBe(422);
      expect(Object.keys(r.body.errors)).toEqual([...fields]);
    }
    expect((await admin(t, 'GET', '/rates')).body.data.find((x: { currency: string }) => x.currency === 'USD')?.rub_per_unit ?? null).not.toBe('0');
    expect((await admin(t, 'DELETE', '/rates/GBP')).status).toBe(404);
  });
});

describe('SBP banks', () => {
  it('GET lists every bank with its active flag', async () => {
    const r = await admin(t, 'GET', '/sbp-banks');
    expect(r.status).toBe(200);
    expect(r.body.data).toContainEqual({ member_id: BANK, name: 'Банк', name_en: 'Bank', bic: '044525111', active: true });
  });

  it('PATCH deactivates and reactivates a bank; merchants no longer see an inactive one', async () => {
    const m = await adminMerchant(t);
    const dict = async () => (await t.app.inject({ method: 'GET', url: '/api/v1/payout/dictionaries/sbp_banks', headers: { authorization: `Bearer ${m.api_token}` } })).json() as { data: Array<{ member_id: number }> };
    expect((await dict()).data.some((b) => Number(b.member_id) === BANK)).toBe(true);
    const r = await admin(t, 'PATCH', `/sbp-banks/${BANK}`, { active: false });
    expect(r.status).toBe(200);
    expect(r.body.active).toBe(false);
    expect((await dict()).data.some((b) => Number(b.member_id) === BANK)).toBe(false);
    expect((await admin(t, 'PATCH', `/sbp-banks/${BANK}`, { active: 'true' })).body.active).toBe(true);
  });

  it('PATCH without a boolean is 422; unknown bank is 404', async () => {
    const r = await admin(t, 'PATCH', `/sbp-banks/${BANK}`, { active: 'sometimes' });
    expect(r.status).toBe(422);
    expect(r.body.errors.active).toBeDefined();
    expect((await admin(t, 'PATCH', `/sbp-banks/${BANK}`, {})).status).toBe(422);
    expect((await admin(t, 'PATCH', '/sbp-banks/123', { active: true })).status).toBe(404);
    expect((await admin(t, 'PATCH', '/sbp-banks/abc', { active: true })).status).toBe(404);
  });
});
