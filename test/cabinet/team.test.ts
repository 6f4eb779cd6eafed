import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { CabinetClient, MEMBER_PASSWORD, cabinetMerchant, signedIn, teamMember, type CabinetMerchant } from './helpers.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { createMerchant } from '../factories/merchant.js';
import type { TeamRole } from '../../src/cabinet/roles.js';

/**
 * Merchant team members (issue 17, item 3): the owner invites by email with a role, the
 * invitee sets a password through a single-use link, and every cabinet action is checked
 * against the member's role on the server (403, nothing changes).
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

/** A member of `m` with `role`, through the service (the HTTP flow is tested once below). */
const member = (m: CabinetMerchant, role: TeamRole) => teamMember(t, m, role);

const tokenHash = async (merchantId: string) => (await t.db.pool.query('SELECT api_token_hash FROM merchants WHERE id = $1', [merchantId])).rows[0].api_token_hash as string;
const auditCount = async () => Number((await t.db.pool.query('SELECT count(*) FROM audit_log')).rows[0].count);

describe('inviting a team member', () => {
  test('the owner invites by email with a role; the single-use link sets a password; the member signs in; all audited', async () => {
    const m = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    const page = await owner.get('/cabinet/team');
    expect(page.statusCode).toBe(200);
    const invited = await owner.post('/cabinet/team', { _csrf: CabinetClient.csrfOf(page.body), email: 'Accountant@Team.test', role: 'accountant' });
    expect(invited.statusCode).toBe(200);
    const link = /id="invite-link" readonly value="([^"]+)"/.exec(invited.body)![1]!;
    const path = new URL(link).pathname;
    expect(path).toMatch(/^\/cabinet\/team\/invite\/[\w-]{40,}$/);
    const row = (await t.db.pool.query('SELECT id, role::text AS role, password_hash, invite_token_hash FROM merchant_users WHERE email = $1', ['accountant@team.test'])).rows[0];
    expect(row).toMatchObject({ role: 'ACCOUNTANT', password_hash: null });
    expect(row.invite_token_hash).not.toContain(path.split('/').at(-1));

    // Not signed in yet: no password.
    const early = new CabinetClient(t);
    expect((await early.login('accountant@team.test', MEMBER_PASSWORD)).statusCode).toBe(401);

    const invitee = new CabinetClient(t);
    const form = await invitee.get(path);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('accountant@team.test');
    const short = await invitee.post(path, { _csrf: CabinetClient.csrfOf(form.body), password: 'short' });
    expect(short.statusCode).toBe(422);
    const set = await invitee.post(path, { _csrf: CabinetClient.csrfOf(short.body), password: MEMBER_PASSWORD });
    expect(set.statusCode).toBe(303);
    // The link works once.
    expect((await new CabinetClient(t).get(path)).statusCode).toBe(404);

    // "Save and sign in" signs the member in (issue 30: it landed on the sign-in page).
    expect(set.headers.location).toBe('/cabinet');
    const dash = await invitee.get('/cabinet');
    expect(dash.statusCode).toBe(200);
    expect(dash.body).not.toContain('href="/cabinet/team"');
    // The password works on the sign-in page too.
    expect((await new CabinetClient(t).login('accountant@team.test', MEMBER_PASSWORD)).statusCode).toBe(303);

    const trail = (await t.db.pool.query('SELECT actor, action FROM audit_log WHERE object_id = $1 ORDER BY id', [row.id])).rows;
    expect(trail).toEqual([
      { actor: `merchant:${m.merchantId}`, action: 'merchant_user.invite' },
      { actor: `merchant-user:${row.id}`, action: 'merchant_user.activate' },
      { actor: `merchant-user:${row.id}`, action: 'merchant.sign_in' },
      { actor: `merchant-user:${row.id}`, action: 'merchant.sign_in' },
    ]);
  });

  test("a merchant's own login email, or a member's, cannot be invited again (422)", async () => {
    const m = await cabinetMerchant(t);
    const other = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    const page = await owner.get('/cabinet/team');
    const r = await owner.post('/cabinet/team', { _csrf: CabinetClient.csrfOf(page.body), email: other.email, role: 'developer' });
    expect(r.statusCode).toBe(422);
    const bad = await owner.post('/cabinet/team', { _csrf: CabinetClient.csrfOf(page.body), email: 'x@team.test', role: 'root' });
    expect(bad.statusCode).toBe(422);
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM merchant_users WHERE merchant_id = $1', [m.merchantId])).rows[0].n).toBe(0);
  });
});

describe('each cabinet action is checked against the member role on the server', () => {
  test('an accountant cannot refresh the API token: 403 and nothing changes; reads pass', async () => {
    const m = await cabinetMerchant(t);
    const acc = await member(m, 'accountant');
    const before = await tokenHash(m.merchantId);
    const audits = await auditCount();
    for (const p of ['/cabinet', '/cabinet/payments', '/cabinet/bills', '/cabinet/payouts', '/cabinet/api', '/cabinet/webhooks']) {
      expect((await acc.client.get(p)).statusCode, p).toBe(200);
    }
    const r = await acc.client.submit('/cabinet/api', '/cabinet/api/refresh', {});
    expect(r.statusCode).toBe(403);
    expect(await tokenHash(m.merchantId)).toBe(before);
    expect(await auditCount()).toBe(audits);
    expect((await acc.client.get('/cabinet/team')).statusCode).toBe(403);
  });

  test('a developer cannot refresh the live token (issue 27: 403, nothing changes), nor bill, pay out or manage the team', async () => {
    const m = await cabinetMerchant(t);
    const dev = await member(m, 'developer');
    const before = await tokenHash(m.merchantId);
    const audits = await auditCount();
    const r = await dev.client.submit('/cabinet/api', '/cabinet/api/refresh', {});
    expect(r.statusCode).toBe(403);
    expect(await tokenHash(m.merchantId)).toBe(before);
    expect(await auditCount()).toBe(audits);
    const bills = await t.db.prisma.bill.count({ where: { merchantId: m.merchantId } });
    expect((await dev.client.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '100.00', type: 'normal' })).statusCode).toBe(403);
    expect(await t.db.prisma.bill.count({ where: { merchantId: m.merchantId } })).toBe(bills);
    expect((await dev.client.submit('/cabinet/accounts', '/cabinet/accounts', { type: 'sbp', identifier: '+79161234567', bank_member_id: '100000000111' })).statusCode).toBe(403);
    expect(await t.db.prisma.payoutAccount.count({ where: { merchantId: m.merchantId } })).toBe(0);
    expect((await dev.client.submit('/cabinet', '/cabinet/team', { email: 'x@team.test', role: 'owner' })).statusCode).toBe(403);
  });

  test('support may refund, the accountant may not', async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
    const { paymentId } = await createPaidPayment(t, m, { amount: '300.00' });
    const acc = await member(m, 'accountant');
    const sup = await member(m, 'support');
    const refused = await acc.client.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'full' });
    expect(refused.statusCode).toBe(403);
    expect(await t.db.prisma.refund.count({ where: { paymentId } })).toBe(0);
    const ok = await sup.client.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'full' });
    expect(ok.statusCode).toBe(303);
    expect(await t.db.prisma.refund.count({ where: { paymentId } })).toBe(1);
    // Support changes no settings.
    expect((await sup.client.submit('/cabinet/api', '/cabinet/api/refresh', {})).statusCode).toBe(403);
  });

  test("the owner's role change acts at once, and removing a member ends their session", async () => {
    const m = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    const u = await member(m, 'accountant');
    expect((await u.client.submit('/cabinet/api', '/cabinet/api/test-token', {})).statusCode).toBe(403);
    // Each member's role and the role choices are words, in the cabinet's language.
    const ru = (await owner.get('/cabinet/team?lang=ru')).body;
    expect(ru).toContain('<option value="accountant" selected>Бухгалтер</option>');
    expect(ru).toContain('<option value="developer" >Разработчик</option>');
    expect(ru).toContain('>Бухгалтер</td>');
    const page = await owner.get('/cabinet/team?lang=en');
    expect(page.body).toContain('<option value="accountant" selected>Accountant</option>');
    expect(page.body).toContain('<option value="owner" >Owner</option>');
    expect((await owner.post(`/cabinet/team/${u.id}/role`, { _csrf: CabinetClient.csrfOf(page.body), role: 'developer' })).statusCode).toBe(303);
    expect((await u.client.submit('/cabinet/api', '/cabinet/api/test-token', {})).statusCode).toBe(200);
    // Form tokens are single-use: the next form comes from a fresh page.
    const again = await owner.get('/cabinet/team');
    expect((await owner.post(`/cabinet/team/${u.id}/remove`, { _csrf: CabinetClient.csrfOf(again.body) })).statusCode).toBe(303);
    const after = await u.client.get('/cabinet');
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toMatch(/\/cabinet\/login/);
    const actions = (await t.db.pool.query("SELECT action, before, after FROM audit_log WHERE object_id = $1 AND action LIKE 'merchant_user.%' ORDER BY id", [u.id])).rows;
    expect(actions.map((a) => a.action)).toEqual(['merchant_user.role', 'merchant_user.remove']);
    expect(actions[0]).toMatchObject({ before: { role: 'accountant' }, after: { role: 'developer' } });
    // Another merchant's owner cannot touch this merchant's members.
    const other = await signedIn(t, await cabinetMerchant(t));
    const u2 = await member(m, 'support');
    const p2 = await other.get('/cabinet/team');
    expect((await other.post(`/cabinet/team/${u2.id}/remove`, { _csrf: CabinetClient.csrfOf(p2.body) })).statusCode).toBe(404);
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM merchant_users WHERE id = $1', [u2.id])).rows[0].n).toBe(1);
  });
});

describe('a merchant always keeps an owner', () => {
  /** A merchant onboarded from the console: no login of its own, its owner is a team member. */
  const memberOwned = async () => {
    const m = { ...(await createMerchant(t)), email: '' };
    return { m, owner: await member(m, 'owner') };
  };
  const teamOf = async (merchantId: string) =>
    (await t.db.pool.query("SELECT id, role::text AS role FROM merchant_users WHERE merchant_id = $1 ORDER BY id", [merchantId])).rows;
  const auditOf = async (id: string) => Number((await t.db.pool.query("SELECT count(*) FROM audit_log WHERE object_id = $1 AND action IN ('merchant_user.remove', 'merchant_user.role')", [id])).rows[0].count);

  test('the last active owner cannot remove themselves: the page offers no Remove and says why; a forged POST is 409; nothing changes', async () => {
    const { m, owner } = await memberOwned();
    const page = await owner.client.get('/cabinet/team');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-testid="last-owner"');
    expect(page.body).not.toContain(`/cabinet/team/${owner.id}/remove`);
    const before = await teamOf(m.merchantId);
    const r = await owner.client.post(`/cabinet/team/${owner.id}/remove`, { _csrf: CabinetClient.csrfOf(page.body) });
    expect(r.statusCode).toBe(409);
    expect(r.body).toContain('only owner');
    expect(await teamOf(m.merchantId)).toEqual(before);
    expect(await auditOf(owner.id)).toBe(0);
    // Still signed in.
    expect((await owner.client.get('/cabinet')).statusCode).toBe(200);
  });

  test('the last active owner cannot be demoted (409, the role stays owner)', async () => {
    const { m, owner } = await memberOwned();
    const page = await owner.client.get('/cabinet/team?lang=ru');
    expect(page.body).not.toContain(`/cabinet/team/${owner.id}/role`);
    const r = await owner.client.post(`/cabinet/team/${owner.id}/role`, { _csrf: CabinetClient.csrfOf(page.body), role: 'developer' });
    expect(r.statusCode).toBe(409);
    expect(await teamOf(m.merchantId)).toEqual([{ id: owner.id, role: 'OWNER' }]);
    expect(await auditOf(owner.id)).toBe(0);
  });

  test('with a second active owner one may go; the remaining one then may not (an invited owner does not count)', async () => {
    const { m, owner } = await memberOwned();
    const second = await member(m, 'owner');
    await t.app.services.team.invite(m.merchantId, { email: `pending-${Date.now()}@team.test`, role: 'owner' });
    const page = await owner.client.get('/cabinet/team');
    expect(page.body).not.toContain('data-testid="last-owner"');
    expect((await owner.client.post(`/cabinet/team/${second.id}/role`, { _csrf: CabinetClient.csrfOf(page.body), role: 'support' })).statusCode).toBe(303);
    const again = await owner.client.get('/cabinet/team');
    expect((await owner.client.post(`/cabinet/team/${owner.id}/remove`, { _csrf: CabinetClient.csrfOf(again.body) })).statusCode).toBe(409);
  });

  test("a merchant with a login of its own keeps it as an owner: its only member owner may be removed", async () => {
    const m = await cabinetMerchant(t);
    const u = await member(m, 'owner');
    const owner = await signedIn(t, m);
    const page = await owner.get('/cabinet/team');
    expect(page.body).not.toContain('data-testid="last-owner"');
    expect((await owner.post(`/cabinet/team/${u.id}/remove`, { _csrf: CabinetClient.csrfOf(page.body) })).statusCode).toBe(303);
  });

  test('two owners removing each other at the same moment: exactly one succeeds, an owner remains', async () => {
    const { m, owner } = await memberOwned();
    const second = await member(m, 'owner');
    const [a, b] = await Promise.allSettled([
      t.app.services.team.remove(m.merchantId, second.id),
      t.app.services.team.remove(m.merchantId, owner.id),
    ]);
    expect([a.status, b.status].sort()).toEqual(['fulfilled', 'rejected']);
    expect((await teamOf(m.merchantId)).map((r) => r.role)).toEqual(['OWNER']);
  });
});
