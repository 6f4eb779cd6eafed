import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { CabinetClient, MEMBER_PASSWORD, PASSWORD, cabinetMerchant, enableTotp, signedIn, teamMember, type CabinetMerchant } from './helpers.js';
import { totpCode } from '../operator/helpers.js';
import type { TeamRole } from '../../src/cabinet/roles.js';

/**
 * Issue 17: the owner's "Require two-factor authentication for everyone" on the team page. While
 * on, an account of the merchant without TOTP (a member or the owner's own login) reaches only the
 * security page that sets it up (and sign-out): every other page and form is sent there by the
 * server, whatever the URL. Only the owner may change it (403 for other roles, nothing changes);
 * each change is audited. TOTP cannot be turned off while it is required.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

const member = (m: CabinetMerchant, role: TeamRole) => teamMember(t, m, role);

const required = async (merchantId: string) => (await t.db.pool.query('SELECT require_two_factor FROM merchants WHERE id = $1', [merchantId])).rows[0].require_two_factor as boolean;
const trail = async (merchantId: string) => (await t.db.pool.query(
  `SELECT actor, action, before, after FROM audit_log WHERE object_id = $1 AND action = 'merchant.two_factor.require' ORDER BY id`, [merchantId])).rows;
const setRequired = (c: CabinetClient, on: boolean) => c.submit('/cabinet/team', '/cabinet/team/two-factor', on ? { required: 'true' } : {});

/** An owner signed in with TOTP on (enrolled through the security page). */
async function ownerWithTotp(): Promise<{ m: CabinetMerchant; owner: CabinetClient; secret: string }> {
  const m = await cabinetMerchant(t);
  const owner = await signedIn(t, m);
  const { secret } = await enableTotp(owner);
  return { m, owner, secret };
}

describe('switching the requirement', () => {
  test('the owner switches it on from the team page (audited) once their own 2FA is on; off again (audited)', async () => {
    const m = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    const page = await owner.get('/cabinet/team');
    expect(page.body).toContain('Require two-factor authentication for everyone');
    expect(page.body).toMatch(/<input type="checkbox" id="required" name="required" value="true"\s*>/);

    // Without their own 2FA, the owner would lock themselves out of the page they are on: refused, nothing stored.
    const early = await setRequired(owner, true);
    expect(early.statusCode).toBe(422);
    expect(early.body).toContain('Turn on your own two-factor sign-in first');
    expect(await required(m.merchantId)).toBe(false);
    expect(await trail(m.merchantId)).toEqual([]);

    await enableTotp(owner);
    const on = await setRequired(owner, true);
    expect(on.statusCode).toBe(303);
    expect(on.headers.location).toBe('/cabinet/team?ok=common.saved');
    expect(await required(m.merchantId)).toBe(true);
    expect((await owner.get('/cabinet/team')).body).toMatch(/<input type="checkbox" id="required" name="required" value="true"\s*checked>/);
    expect((await owner.get('/cabinet/payments')).statusCode).toBe(200);

    expect((await setRequired(owner, false)).statusCode).toBe(303);
    expect(await required(m.merchantId)).toBe(false);
    expect(await trail(m.merchantId)).toEqual([
      { actor: `merchant:${m.merchantId}`, action: 'merchant.two_factor.require', before: { require_two_factor: false }, after: { require_two_factor: true } },
      { actor: `merchant:${m.merchantId}`, action: 'merchant.two_factor.require', before: { require_two_factor: true }, after: { require_two_factor: false } },
    ]);
    expect((await owner.submit('/cabinet/team', '/cabinet/team/two-factor', { required: 'yes' })).statusCode).toBe(422);
    expect(await required(m.merchantId)).toBe(false);
  });

  test('only the owner may change it: developer, accountant and support get 403 and nothing changes', async () => {
    const { m, owner } = await ownerWithTotp();
    for (const role of ['developer', 'accountant', 'support'] as const) {
      const u = await member(m, role);
      await enableTotp(u.client);
      for (const want of [true, false]) {
        const before = await required(m.merchantId);
        const csrf = await u.client.csrf('/cabinet');
        const r = await u.client.post('/cabinet/team/two-factor', { _csrf: csrf, ...(want ? { required: 'true' } : {}) });
        expect(r.statusCode, `${role} ${want}`).toBe(403);
        expect(await required(m.merchantId)).toBe(before);
      }
      // The owner's change stands against each role's attempt.
      if (role === 'developer') expect((await setRequired(owner, true)).statusCode).toBe(303);
    }
    expect(await required(m.merchantId)).toBe(true);
    expect((await trail(m.merchantId)).map((e) => e.actor)).toEqual([`merchant:${m.merchantId}`]);
  });
});

describe('while it is required', () => {
  test('a member without 2FA who signs in reaches only the set-up page (pages and forms alike), enrols, then reaches the cabinet', async () => {
    const { m, owner } = await ownerWithTotp();
    expect((await setRequired(owner, true)).statusCode).toBe(303);
    const token = (await t.db.pool.query('SELECT api_token_hash FROM merchants WHERE id = $1', [m.merchantId])).rows[0].api_token_hash;

    const dev = await member(m, 'developer');
    for (const path of ['/cabinet', '/cabinet/payments', '/cabinet/api', '/cabinet/shops', '/cabinet/nope']) {
      const r = await dev.client.get(path);
      expect(r.statusCode, path).toBe(303);
      expect(r.headers.location, path).toBe('/cabinet/security?required=1');
    }
    // A form of a page the developer's role allows: sent to the set-up page, nothing done.
    const security = await dev.client.get('/cabinet/security?required=1');
    expect(security.statusCode).toBe(200);
    expect(security.body).toContain('data-testid="two-factor-required"');
    expect(security.body).toContain('Your team requires two-factor sign-in. Set it up to continue');
    expect(security.body).toContain('id="totp-secret"');
    // No menu to pages it cannot reach; a way to sign out.
    expect(security.body).not.toContain('href="/cabinet/payments"');
    expect(security.body).toContain('data-testid="enrol-signout"');
    const refresh = await dev.client.post('/cabinet/api/refresh', { _csrf: CabinetClient.csrfOf(security.body) });
    expect(refresh.statusCode).toBe(303);
    expect(refresh.headers.location).toBe('/cabinet/security?required=1');
    expect((await t.db.pool.query('SELECT api_token_hash FROM merchants WHERE id = $1', [m.merchantId])).rows[0].api_token_hash).toBe(token);

    await enableTotp(dev.client);
    expect((await dev.client.get('/cabinet/payments')).statusCode).toBe(200);
    const page = await dev.client.get('/cabinet/security');
    expect(page.body).toContain('Your team requires two-factor sign-in for everyone.');
    // Its next sign-in asks for the code, as any 2FA account's.
    const again = new CabinetClient(t);
    expect((await again.login(dev.email, MEMBER_PASSWORD)).headers.location).toBe('/cabinet/2fa');
  });

  test('a session opened before the switch is held at the set-up page on its next request; sign-out still works', async () => {
    const { m, owner } = await ownerWithTotp();
    const acc = await member(m, 'accountant');
    expect((await acc.client.get('/cabinet/payments')).statusCode).toBe(200);
    expect((await setRequired(owner, true)).statusCode).toBe(303);
    const r = await acc.client.get('/cabinet/payments');
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe('/cabinet/security?required=1');
    const out = await acc.client.submit('/cabinet/security', '/cabinet/logout', {});
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/cabinet/login?bye=1');
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM cabinet_sessions WHERE user_id = $1', [acc.id])).rows[0].n).toBe(0);
  });

  test('2FA cannot be turned off while required (403, still on); the owner whose 2FA an operator reset is sent to enrol at sign-in', async () => {
    const { m, owner, secret } = await ownerWithTotp();
    expect((await setRequired(owner, true)).statusCode).toBe(303);
    const page = await owner.get('/cabinet/security');
    const off = await owner.post('/cabinet/security/totp/disable', { _csrf: CabinetClient.csrfOf(page.body), code: await totpCode(secret, 1) });
    expect(off.statusCode).toBe(403);
    expect(off.body).toContain('cannot be turned off');
    expect((await t.db.pool.query('SELECT totp_enabled_at FROM merchants WHERE id = $1', [m.merchantId])).rows[0].totp_enabled_at).not.toBeNull();

    const reset = await t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/two-factor-reset`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { reason: 'identified by a video call' } });
    expect(reset.statusCode).toBe(200);
    const c = new CabinetClient(t);
    const login = await c.login(m.email, PASSWORD);
    expect(login.headers.location).toBe('/cabinet');
    const r = await c.get('/cabinet');
    expect(r.headers.location).toBe('/cabinet/security?required=1');
    await enableTotp(c, 0);
    expect((await c.get('/cabinet')).statusCode).toBe(200);
  });

  test('without the requirement, an account without 2FA reaches every page as before', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    expect((await c.get('/cabinet/payments')).statusCode).toBe(200);
    expect((await c.get('/cabinet/security')).body).not.toContain('data-testid="two-factor-required"');
  });
});
