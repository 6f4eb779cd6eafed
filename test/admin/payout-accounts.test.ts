import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { decrypt } from '../../src/lib/crypto.js';
import { admin, adminMerchant } from './helpers.js';

let t: TestApp;
const BANK = 990000000101;
const OTHER_BANK = 990000000102;
beforeAll(async () => {
  t = await setupTestApp();
  await t.db.pool.query(
    `INSERT INTO sbp_banks (member_id, name, name_en, bic) VALUES ($1, 'Тест банк', 'Test bank', '044525999'), ($2, 'Другой', 'Other', '044525998')
     ON CONFLICT DO NOTHING`, [BANK, OTHER_BANK],
  );
});
afterAll(async () => { await t.close(); });

describe('POST /admin/v1/merchants/{id}/payout-accounts', () => {
  it('card: stores the number encrypted and shows it masked; the ciphertext never leaves', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '4242 4242-4242 4242', card_holder: 'IVAN PETROV' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      success: true, merchant_id: m.id, type: 'card', status: 'active', identifier_masked: '424242******4242', card_holder: 'IVAN PETROV', bank_member_id: null,
    });
    expect(JSON.stringify(r.body)).not.toContain('4242424242424242');
    expect(JSON.stringify(r.body)).not.toMatch(/identifier_enc/);
    const row = await t.db.prisma.payoutAccount.findUniqueOrThrow({ where: { id: r.body.id } });
    expect(row.identifierEnc).not.toContain('4242424242424242');
    expect(decrypt(t.config.tokenEncryptionKey, row.identifierEnc!)).toBe('4242424242424242');
    expect(row.identifierMasked).toBe('424242******4242');
  });

  it('sbp: the phone is normalised to +7XXXXXXXXXX, encrypted, and the bank must exist', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'SBP', identifier: '8 (912) 345-67-89', bank_member_id: String(BANK) });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ type: 'sbp', identifier_masked: '+79123456789', bank_member_id: BANK, card_holder: null });
    const row = await t.db.prisma.payoutAccount.findUniqueOrThrow({ where: { id: r.body.id } });
    expect(decrypt(t.config.tokenEncryptionKey, row.identifierEnc!)).toBe('+79123456789');
  });

  it('refuses a card that fails the Luhn check, and a card without a holder', async () => {
    const m = await adminMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '4242424242424241' });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors).sort()).toEqual(['card_holder', 'identifier']);
    const r2 = await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '42424242abc', card_holder: 'X' });
    expect(r2.status).toBe(422);
    expect(await t.db.prisma.payoutAccount.count({ where: { merchantId: m.id } })).toBe(0);
  });

  it('refuses an SBP account with a bad phone, an unknown bank or no bank', async () => {
    const m = await adminMerchant(t);
    const bad = [
      [{ type: 'sbp', identifier: '+1 555 123 4567', bank_member_id: BANK }, ['identifier']],
      [{ type: 'sbp', identifier: '+79123456789', bank_member_id: 1234567 }, ['bank_member_id']],
      [{ type: 'sbp', identifier: '+79123456789' }, ['bank_member_id']],
      [{ type: 'sbp', identifier: '+79123456789', bank_member_id: 'abc' }, ['bank_member_id']],
      [{ type: 'wallet', identifier: 'x' }, ['type']],
      [{}, ['identifier', 'type']],
    ] as const;
    for (const [payload, fields] of bad) {
      const r = await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, payload);
      expect(r.status, JSON.stringify(payload)).toBe(422);
      expect(Object.keys(r.body.errors).sort(), JSON.stringify(payload)).toEqual([...fields]);
    }
    expect(await t.db.prisma.payoutAccount.count({ where: { merchantId: m.id } })).toBe(0);
  });

  it('unknown merchant is 404', async () => {
    const r = await admin(t, 'POST', '/merchants/unknown/payout-accounts', { type: 'card', identifier: '4242424242424242', card_holder: 'X' });
    expect(r.status).toBe(404);
  });
});

describe('payout accounts: list, show, ban', () => {
  it("lists only that merchant's accounts, masked", async () => {
    const a = await adminMerchant(t);
    const b = await adminMerchant(t);
    await admin(t, 'POST', `/merchants/${a.id}/payout-accounts`, { type: 'card', identifier: '5555555555554444', card_holder: 'A' });
    await admin(t, 'POST', `/merchants/${b.id}/payout-accounts`, { type: 'sbp', identifier: '9123456780', bank_member_id: OTHER_BANK });
    const r = await admin(t, 'GET', `/merchants/${a.id}/payout-accounts`);
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0].identifier_masked).toBe('555555******4444');
    expect((await t.app.services.payoutAccounts.list(b.id))).toHaveLength(1);
    expect((await admin(t, 'GET', '/merchants/unknown/payout-accounts')).status).toBe(404);
  });

  it('PATCH bans and unbans an account', async () => {
    const m = await adminMerchant(t);
    const acc = (await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '4242424242424242', card_holder: 'A' })).body;
    const r = await admin(t, 'PATCH', `/payout-accounts/${acc.id}`, { status: 'banned' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('banned');
    expect((await t.db.prisma.payoutAccount.findUniqueOrThrow({ where: { id: acc.id } })).status).toBe('BANNED');
    expect((await admin(t, 'GET', `/payout-accounts/${acc.id}`)).body.status).toBe('banned');
    expect((await admin(t, 'PATCH', `/payout-accounts/${acc.id}`, { status: 'active' })).body.status).toBe('active');
  });

  it('PATCH with a bad status is 422; unknown account is 404', async () => {
    const m = await adminMerchant(t);
    const acc = (await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '4242424242424242', card_holder: 'A' })).body;
    const r = await admin(t, 'PATCH', `/payout-accounts/${acc.id}`, { status: 'deleted' });
    expect(r.status).toBe(422);
    expect(r.body.errors.status).toBeDefined();
    expect((await admin(t, 'PATCH', `/payout-accounts/${acc.id}`, {})).status).toBe(422);
    expect((await admin(t, 'PATCH', '/payout-accounts/unknown', { status: 'banned' })).status).toBe(404);
    expect((await admin(t, 'GET', '/payout-accounts/unknown')).status).toBe(404);
  });
});
