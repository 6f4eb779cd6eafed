import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { CabinetClient, PASSWORD, cabinetMerchant, enableTotp as enable, signedIn, type CabinetMerchant } from './helpers.js';
import { totpCode } from '../operator/helpers.js';
import { MerchantTeamService } from '../../src/domain/merchant/team.service.js';

/**
 * Optional TOTP 2FA of cabinet accounts (issue 17 item 3), over HTTP: turned on with a code,
 * recovery codes shown once, then sign-in asks for a code or a recovery code (single use);
 * turning it off takes a current code; wrong codes lock out as wrong passwords do; audited
 * without secrets. A TOTP step is accepted once, so each account uses the steps -1, 0, +1 in
 * that order.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

const wrongCode = async (secret: string) => ((await totpCode(secret)) === '000000' ? '111111' : '000000');
const trail = async (objectId: string) => (await t.db.pool.query<{ actor: string; action: string; before: unknown; after: Record<string, unknown> | null }>(
  'SELECT actor, action, before, after FROM audit_log WHERE object_id = $1 ORDER BY id', [objectId],
)).rows;
const totpRow = async (table: 'merchants' | 'merchant_users', id: string) => (await t.db.pool.query(
  `SELECT totp_enabled_at, totp_secret_enc, recovery_code_hashes FROM ${table} WHERE id = $1`, [id],
)).rows[0];


async function passwordStep(email: string, password = PASSWORD): Promise<CabinetClient> {
  const c = new CabinetClient(t);
  const r = await c.login(email, password);
  expect(r.statusCode).toBe(303);
  expect(r.headers.location).toBe('/cabinet/2fa');
  return c;
}

const sendCode = async (c: CabinetClient, code: string) => c.post('/cabinet/2fa', { _csrf: await c.csrf('/cabinet/2fa'), code });

describe('turning TOTP on', () => {
  test('the security page shows a QR code and key; a wrong code changes nothing; a right one turns it on and shows ten recovery codes once, stored hashed', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const other = await signedIn(t, m);
    const page = await c.get('/cabinet/security');
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<img class="qr" id="totp-qr" src="data:image\/png;base64,/);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.body)![1]!;

    const wrong = await c.post('/cabinet/security/totp/enable', { _csrf: CabinetClient.csrfOf(page.body), code: await wrongCode(secret) });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain(secret);
    expect((await totpRow('merchants', m.merchantId)).totp_enabled_at).toBeNull();

    const ok = await c.post('/cabinet/security/totp/enable', { _csrf: CabinetClient.csrfOf(wrong.body), code: await totpCode(secret, -1) });
    expect(ok.statusCode).toBe(200);
    const codes = [...ok.body.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((x) => x[1]!);
    expect(new Set(codes).size).toBe(10);
    const row = await totpRow('merchants', m.merchantId);
    expect(row.totp_enabled_at).not.toBeNull();
    expect(row.totp_secret_enc).not.toContain(secret);
    expect(row.recovery_code_hashes).toHaveLength(10);
    expect(JSON.stringify(row.recovery_code_hashes)).not.toContain(codes[0]!.replace('-', ''));

    // The codes are not shown again; this browser stays signed in, the other session (password only) ends.
    const after = await c.get('/cabinet/security');
    expect(after.statusCode).toBe(200);
    expect(after.body).toContain('data-testid="totp-on"');
    expect(after.body).not.toContain(codes[0]!);
    expect((await other.get('/cabinet')).statusCode).toBe(303);

    const entries = await trail(m.merchantId);
    const on = entries.find((e) => e.action === 'merchant.totp.enable')!;
    expect(on).toMatchObject({ actor: `merchant:${m.merchantId}`, before: { totp_enabled: false }, after: { totp_enabled: true, codes_issued: 10 } });
    const all = JSON.stringify(entries);
    expect(all).not.toContain(secret);
    for (const code of codes) expect(all).not.toContain(code);
  });

  test('a team member (an accountant) turns on TOTP for their own sign-in; the owner\'s login is not affected', async () => {
    const m = await cabinetMerchant(t);
    const team = new MerchantTeamService(t.db);
    const { member, token } = await team.invite(m.merchantId, { email: `acc-${Date.now()}@team.test`, role: 'accountant' });
    await team.accept(token, 'member password 0123');
    const c = new CabinetClient(t);
    expect((await c.login(member.email, 'member password 0123')).statusCode).toBe(303);
    const { secret } = await enable(c);
    expect((await totpRow('merchant_users', member.id)).totp_enabled_at).not.toBeNull();
    expect((await totpRow('merchants', m.merchantId)).totp_enabled_at).toBeNull();
    expect((await trail(member.id)).map((e) => e.action)).toContain('merchant.totp.enable');

    const again = await passwordStep(member.email, 'member password 0123');
    expect((await sendCode(again, await totpCode(secret, 0))).statusCode).toBe(303);
    // The owner still signs in with the password alone.
    const owner = new CabinetClient(t);
    const r = await owner.login(m.email, PASSWORD);
    expect(r.headers.location).toBe('/cabinet');
  });
});

describe('signing in with TOTP on', () => {
  let m: CabinetMerchant;
  let secret: string;
  let codes: string[];
  beforeAll(async () => {
    m = await cabinetMerchant(t);
    ({ secret, codes } = await enable(await signedIn(t, m)));
  });

  test('a right password opens only the code page; a wrong code is refused (401, audited); a right code signs in, and the same code cannot be used twice', async () => {
    const c = await passwordStep(m.email);
    const blocked = await c.get('/cabinet/payments');
    expect(blocked.statusCode).toBe(303);
    expect(blocked.headers.location).toBe('/cabinet/2fa');
    const page = await c.get('/cabinet/2fa');
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('/cabinet/payments');

    const wrong = await sendCode(c, await wrongCode(secret));
    expect(wrong.statusCode).toBe(401);
    expect((await c.get('/cabinet/payments')).headers.location).toBe('/cabinet/2fa');

    const code = await totpCode(secret, 0);
    const ok = await sendCode(c, code);
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/cabinet');
    expect((await c.get('/cabinet/payments')).statusCode).toBe(200);

    const replay = await passwordStep(m.email);
    expect((await sendCode(replay, code)).statusCode).toBe(401);

    const actions = (await trail(m.merchantId)).map((e) => [e.action, e.after]);
    expect(actions).toContainEqual(['merchant.sign_in.failed', { step: 'totp' }]);
    expect(actions).toContainEqual(['merchant.sign_in', { factor: 'totp' }]);
  });

  test('a recovery code signs in once and is audited as used; the second use is refused', async () => {
    const c = await passwordStep(m.email);
    const used = await sendCode(c, codes[3]!.toUpperCase());
    expect(used.statusCode).toBe(303);
    expect((await c.get('/cabinet')).statusCode).toBe(200);
    expect((await totpRow('merchants', m.merchantId)).recovery_code_hashes).toHaveLength(9);
    const again = await passwordStep(m.email);
    expect((await sendCode(again, codes[3]!)).statusCode).toBe(401);
    const entry = (await trail(m.merchantId)).find((e) => e.action === 'merchant.sign_in' && e.after?.factor === 'recovery_code');
    expect(entry?.after).toEqual({ factor: 'recovery_code', codes_left: 9 });
    expect(JSON.stringify(await trail(m.merchantId))).not.toContain(codes[3]!);
  });

  test('a session that owes its code expires after ten minutes and cannot be used for anything else (POST refused too)', async () => {
    const c = await passwordStep(m.email);
    const refund = await c.post('/cabinet/security/totp/disable', { _csrf: await c.csrf('/cabinet/2fa'), code: codes[1]! });
    expect(refund.statusCode).toBe(303);
    expect(refund.headers.location).toBe('/cabinet/2fa');
    expect((await totpRow('merchants', m.merchantId)).totp_enabled_at).not.toBeNull();
    const s = (await t.db.pool.query(`SELECT expires_at - created_at AS ttl FROM cabinet_sessions WHERE merchant_id = $1 AND stage = 'PASSWORD' ORDER BY created_at DESC LIMIT 1`, [m.merchantId])).rows[0];
    expect(s.ttl.minutes).toBe(10);
  });
});

describe('lock-out', () => {
  test('wrong codes lock the account\'s code step out as wrong passwords do: after five, even the right code gets 429', async () => {
    const m = await cabinetMerchant(t);
    const { secret, codes } = await enable(await signedIn(t, m));
    const c = await passwordStep(m.email);
    for (let i = 0; i < 5; i++) expect((await sendCode(c, await wrongCode(secret))).statusCode).toBe(401);
    const locked = await sendCode(c, codes[0]!);
    expect(locked.statusCode).toBe(429);
    expect((await c.get('/cabinet/payments')).headers.location).toBe('/cabinet/2fa');
    // The recovery code was not spent by the refused attempt.
    expect((await totpRow('merchants', m.merchantId)).recovery_code_hashes).toHaveLength(10);
  });

});

describe('turning TOTP off', () => {
  test('needs a current code: a wrong one is refused (401, still on); a right one turns it off, audited; then sign-in asks for no code', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const { secret } = await enable(c);
    const page = await c.get('/cabinet/security');
    const wrong = await c.post('/cabinet/security/totp/disable', { _csrf: CabinetClient.csrfOf(page.body), code: await wrongCode(secret) });
    expect(wrong.statusCode).toBe(401);
    expect((await totpRow('merchants', m.merchantId)).totp_enabled_at).not.toBeNull();
    // Without any code: refused as well.
    const empty = await c.post('/cabinet/security/totp/disable', { _csrf: CabinetClient.csrfOf(wrong.body), code: '' });
    expect(empty.statusCode).toBe(401);

    const ok = await c.post('/cabinet/security/totp/disable', { _csrf: CabinetClient.csrfOf(empty.body), code: await totpCode(secret, 0) });
    expect(ok.statusCode).toBe(303);
    const row = await totpRow('merchants', m.merchantId);
    expect(row).toMatchObject({ totp_enabled_at: null, totp_secret_enc: null, recovery_code_hashes: [] });
    const entries = await trail(m.merchantId);
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(['merchant.totp.disable.failed', 'merchant.totp.disable']));
    expect(entries.find((e) => e.action === 'merchant.totp.disable')).toMatchObject({ before: { totp_enabled: true }, after: { totp_enabled: false, factor: 'totp' } });

    const next = new CabinetClient(t);
    expect((await next.login(m.email, PASSWORD)).headers.location).toBe('/cabinet');
  });
});
