import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { CabinetClient, cabinetMerchant, PASSWORD, signedIn, type CabinetMerchant } from './helpers.js';
import { MerchantTeamService } from '../../src/domain/merchant/team.service.js';
import type { TeamRole } from '../../src/cabinet/roles.js';

/**
 * Test-mode leftovers (issue 14 item 6): the test token on the API page only for the roles that
 * hold tokens (roles.ts `api`: owner, developer), refused on the server to the others; signing
 * out clears the live/test switch, so the next sign-in starts in live mode.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

const MEMBER_PASSWORD = 'member password 0123';
let n = 0;

async function clientAs(m: CabinetMerchant, role: TeamRole): Promise<CabinetClient> {
  if (role === 'owner') return signedIn(t, m);
  const team = new MerchantTeamService(t.db);
  const { member: u, token } = await team.invite(m.merchantId, { email: `leftover${++n}-${Date.now()}@team.test`, role });
  await team.accept(token, MEMBER_PASSWORD);
  const c = new CabinetClient(t);
  expect((await c.login(u.email, MEMBER_PASSWORD)).statusCode).toBe(303);
  return c;
}

const shownTestToken = (html: string) => /id="test-token" readonly value="([^"]+)"/.exec(html)?.[1];
const twinTokenHash = async (liveId: string) =>
  (await t.db.pool.query('SELECT api_token_hash FROM merchants WHERE live_merchant_id = $1', [liveId])).rows[0]?.api_token_hash as string | undefined;

describe('the test token on the API page, by role', () => {
  for (const role of ['owner', 'developer'] as const) {
    it(`${role}: sees the test token and may refresh it`, async () => {
      const m = await cabinetMerchant(t);
      const c = await clientAs(m, role);
      const page = await c.get('/cabinet/api');
      expect(page.statusCode).toBe(200);
      const token = shownTestToken(page.body);
      expect(token).toMatch(/^[A-Za-z0-9._~+/=-]{20,}$/);
      // The live token's refresh is the owner's alone (issue 27).
      if (role === 'owner') expect(page.body).toContain('href="/cabinet/api/refresh"');
      else expect(page.body).not.toContain('href="/cabinet/api/refresh"');
      const r = await c.submit('/cabinet/api', '/cabinet/api/test-token', {});
      expect(r.statusCode).toBe(200);
      expect(shownTestToken(r.body)).not.toBe(token);
    });
  }

  for (const role of ['accountant', 'support'] as const) {
    it(`${role}: the page shows no token (only who may see it); the server refuses the test-token refresh (403, nothing changes)`, async () => {
      const m = await cabinetMerchant(t);
      // The owner opens the page first, so there is a test token that must not leak.
      const owner = await signedIn(t, m);
      const ownersToken = shownTestToken((await owner.get('/cabinet/api')).body)!;
      const before = await twinTokenHash(m.merchantId);
      const c = await clientAs(m, role);
      const page = await c.get('/cabinet/api');
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain(ownersToken);
      expect(page.body).not.toContain('id="test-token"');
      expect(page.body).toContain('data-testid="tokens-hidden"');
      expect(page.body).not.toContain('href="/cabinet/api/refresh"');
      // The allow-list (an `api` setting) is shown read-only, without a Save button.
      expect(page.body).toMatch(/<textarea id="api_ip_allowlist"[^>]* readonly>/);
      const csrf = CabinetClient.csrfOf(page.body);
      const refused = await c.post('/cabinet/api/test-token', { _csrf: csrf });
      expect(refused.statusCode).toBe(403);
      expect(refused.body).not.toContain(ownersToken);
      expect((await c.submit('/cabinet/api', '/cabinet/api/refresh', {})).statusCode).toBe(403);
      expect(await twinTokenHash(m.merchantId)).toBe(before);
    });
  }
});

describe('signing out clears the live/test switch', () => {
  it('logout sends the mode cookie away; the next sign-in starts in live mode', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const sw = await c.submit('/cabinet', '/cabinet/mode', { mode: 'test', back: '/cabinet' });
    expect(sw.statusCode).toBe(303);
    expect(c.cookies.get('cab_mode')).toBe('test');
    expect((await c.get('/cabinet')).body).toMatch(/data-testid="mode">[^<]*Test/i);

    const out = await c.submit('/cabinet', '/cabinet/logout', {});
    expect(out.statusCode).toBe(303);
    const cleared = (out.cookies as Array<{ name: string; value: string; expires?: Date }>).find((x) => x.name === 'cab_mode');
    expect(cleared).toBeDefined();
    expect(cleared!.value).toBe('');
    expect(c.cookies.has('cab_mode')).toBe(false);

    expect((await c.login(m.email, PASSWORD)).statusCode).toBe(303);
    const dash = await c.get('/cabinet');
    expect(dash.body).toMatch(/data-testid="mode">[^<]*Live/i);
    expect(dash.body).not.toContain('data-testid="test-banner"');
  });

  it('a sign-in clears a mode cookie left in the browser (a session that expired in test mode)', async () => {
    const m = await cabinetMerchant(t);
    const c = new CabinetClient(t);
    c.cookies.set('cab_mode', 'test');
    const r = await c.login(m.email, PASSWORD);
    expect(r.statusCode).toBe(303);
    expect(c.cookies.has('cab_mode')).toBe(false);
    expect((await c.get('/cabinet')).body).not.toContain('data-testid="test-banner"');
  });
});
