import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { ROLES, type Role } from '../../src/domain/operator/roles.js';
import { adminApi, deadEvent, enrolledOperator, moderatedPayout, type OperatorFixture } from './helpers.js';

/**
 * Every console action against every role, through HTTP: the operator API's permission table
 * (docs/adr/0031-operator-credentials-and-roles.md) holds in the console too; a refusal is
 * a 403 page and changes nothing (the rows the action would touch and the audit trail are
 * compared before and after).
 */
let t: TestApp;
const ops = {} as Record<Role, OperatorFixture>;
beforeAll(async () => {
  t = await setupTestApp();
  for (const role of ROLES) ops[role] = await enrolledOperator(t, role);
});
afterAll(async () => { await t?.close(); });

async function snapshot() {
  const q = async (sql: string) => JSON.stringify((await t.db.pool.query(sql)).rows);
  return [
    await q('SELECT id, status FROM payouts ORDER BY id'),
    await q('SELECT id, status, verified, grant_refunds, api_token_hash, password_hash, updated_at, payout_daily_limit, api_ip_allowlist, totp_enabled_at, recovery_code_hashes FROM merchants ORDER BY id'),
    await q('SELECT id, totp_enabled_at, recovery_code_hashes FROM merchant_users ORDER BY id'),
    await q('SELECT id, status, attempts, next_attempt_at FROM outbox_events ORDER BY id'),
    await q('SELECT count(*) FROM audit_log'),
    await q('SELECT available, locked FROM balances ORDER BY merchant_id, currency'),
  ].join('\n');
}

interface Case {
  name: string;
  allowed: Role[];
  /** Returns [page to take the form from, url to post, form fields, the audit action(s) an allowed post records, in order]. */
  setup(): Promise<[string, string, Record<string, string>, string | string[]]>;
}

const cases: Case[] = [
  { name: 'approve a moderated payout', allowed: ['admin', 'finance'], async setup() {
    const p = await moderatedPayout(t);
    return ['/operator/payouts', `/operator/payouts/${p.payoutId}/approve`, {}, 'payout.approve'];
  } },
  { name: 'decline a moderated payout', allowed: ['admin', 'finance'], async setup() {
    const p = await moderatedPayout(t);
    return ['/operator/payouts', `/operator/payouts/${p.payoutId}/decline`, { reason: 'Suspicious' }, 'payout.decline'];
  } },
  { name: 'create a merchant', allowed: ['admin'], async setup() {
    const tag = `${Date.now()}-${Math.random()}`;
    return ['/operator/merchants', '/operator/merchants/new', { name: 'Console Ltd', email: `c-${tag}@shop.test`, owner_email: `o-${tag}@shop.test`, shop_name: 'Main', shop_currency: 'RUB' }, ['merchant.create', 'merchant_user.invite', 'shop.create']];
  } },
  { name: 'verify a merchant', allowed: ['admin'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: 'V', email: `v-${Date.now()}-${Math.random()}@shop.test` });
    return [`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/patch`, { verified: 'true' }, 'merchant.update'];
  } },
  { name: 'ban a merchant', allowed: ['admin'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: 'B', email: `b-${Date.now()}-${Math.random()}@shop.test` });
    return [`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/patch`, { status: 'banned' }, 'merchant.update'];
  } },
  { name: 'change grants, limits and the IP allow-list', allowed: ['admin'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: 'G', email: `g-${Date.now()}-${Math.random()}@shop.test` });
    return [`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/patch`,
      { grants: '1', 'grants.refunds': 'true', payout_daily_limit: '5000', api_ip_allowlist: '203.0.113.7\n198.51.100.0/24' }, 'merchant.update'];
  } },
  { name: "refresh a merchant's API token", allowed: ['admin'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: 'T', email: `t-${Date.now()}-${Math.random()}@shop.test` });
    return [`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/token`, {}, 'merchant.token.refresh'];
  } },
  { name: "reset a merchant's cabinet password", allowed: ['admin', 'support'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: 'P', email: `p-${Date.now()}-${Math.random()}@shop.test` });
    return [`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/password-reset`, {}, 'merchant.password.reset'];
  } },
  { name: "reset a merchant's cabinet two-factor sign-in", allowed: ['admin'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: '2FA', email: `tf-${Date.now()}-${Math.random()}@shop.test` });
    await t.db.pool.query(`UPDATE merchants SET totp_secret_enc = 'x', totp_enabled_at = now(), recovery_code_hashes = '["h"]' WHERE id = $1`, [m.id]);
    return [`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/two-factor-reset`, { reason: 'called back on the number on file' }, 'merchant.two_factor.reset'];
  } },
  { name: "reset a merchant team member's two-factor sign-in", allowed: ['admin'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: '2FA', email: `tfm-${Date.now()}-${Math.random()}@shop.test` });
    const { member } = await t.app.services.team.invite(m.id, { email: `tfm-${Date.now()}-${Math.random()}@team.test`, role: 'accountant' });
    await t.db.pool.query(`UPDATE merchant_users SET totp_secret_enc = 'x', totp_enabled_at = now(), recovery_code_hashes = '["h"]' WHERE id = $1`, [member.id]);
    return [`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/two-factor-reset`, { member_id: member.id, reason: 'called back on the number on file' }, 'merchant.two_factor.reset'];
  } },
  { name: 'redeliver one event', allowed: ['admin', 'support'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: 'E', email: `e-${Date.now()}-${Math.random()}@shop.test` });
    const id = await deadEvent(t, m.id);
    return ['/operator/events', `/operator/events/${id}/redeliver`, {}, 'event.redeliver'];
  } },
  { name: "redeliver a merchant's dead events", allowed: ['admin', 'support'], async setup() {
    const m = await adminApi(t, 'POST', '/merchants', { name: 'D', email: `d-${Date.now()}-${Math.random()}@shop.test` });
    await deadEvent(t, m.id);
    return [`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/redeliver-dead`, {}, 'event.redeliver_dead'];
  } },
];

describe('console actions are checked against the role on the server', () => {
  for (const c of cases) {
    for (const role of ROLES) {
      const allowed = c.allowed.includes(role);
      it(`${role} ${allowed ? 'may' : 'may not'} ${c.name}`, async () => {
        const [from, url, form, action] = await c.setup();
        const op = ops[role];
        const before = await snapshot();
        const auditBefore = Number((await t.db.pool.query('SELECT max(id) AS id FROM audit_log')).rows[0].id ?? 0);
        // The form token comes from a page every role may read, so the refusal is the role's.
        const r = await op.client.act(from, url, form);
        if (allowed) {
          expect([200, 303], r.body).toContain(r.statusCode);
          const entries = (await t.db.pool.query('SELECT actor, action, ip FROM audit_log WHERE id > $1 ORDER BY id', [auditBefore])).rows;
          expect(entries).toEqual([action].flat().map((a) => ({ actor: `operator:${op.id}`, action: a, ip: expect.any(String) })));
        } else {
          expect(r.statusCode).toBe(403);
          expect(r.body).toContain('Your role does not allow this action');
          expect(await snapshot()).toBe(before);
        }
      });
    }
  }
});

describe('every role reads every console page', () => {
  const pages = ['/operator', '/operator/merchants', '/operator/payouts', '/operator/payouts?status=SUCCESS', '/operator/events', '/operator/ledger',
    '/operator/connectors', '/operator/audit', '/operator/audit?action=payout.approve', '/operator/rates'];
  for (const role of ROLES) {
    it(`${role} reads the pages, and sees only the buttons its role may use`, async () => {
      const { merchantId, payoutId } = await moderatedPayout(t);
      const c = ops[role].client;
      for (const p of [...pages, `/operator/merchants/${merchantId}`, `/operator/ledger?merchant_id=${merchantId}`]) {
        const r = await c.get(p);
        expect(r.statusCode, `${role} ${p}`).toBe(200);
      }
      const queue = (await c.get('/operator/payouts')).body;
      expect(queue).toContain(payoutId);
      expect(queue.includes(`/operator/payouts/${payoutId}/approve`)).toBe(role === 'admin' || role === 'finance');
      const merchant = (await c.get(`/operator/merchants/${merchantId}`)).body;
      expect(merchant.includes(`/operator/merchants/${merchantId}/token`)).toBe(role === 'admin');
      expect(merchant).toContain('id="cabinet-people"');
      const csv = await c.get('/operator/audit.csv');
      expect(csv.statusCode).toBe(200);
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    });
  }
});

describe('bad input in the console: the operator API status, the field named, nothing changed, never a 500', () => {
  it('refuses bad fields, unknown objects and finished payouts', async () => {
    const c = ops.admin.client;
    const m = await adminApi(t, 'POST', '/merchants', { name: 'Bad', email: `bad-${Date.now()}@shop.test` });
    const before = await snapshot();
    const fee = await c.act(`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/patch`, { 'fees.payment_card_percent': '101' });
    expect(fee.statusCode).toBe(422);
    expect(fee.body).toContain('fees.payment_card_percent');
    const allow = await c.act(`/operator/merchants/${m.id}`, `/operator/merchants/${m.id}/patch`, { api_ip_allowlist: 'not-an-address' });
    expect(allow.statusCode).toBe(422);
    expect(allow.body).toContain('api_ip_allowlist');
    const email = await c.act('/operator/merchants', '/operator/merchants/new', { name: 'X', email: 'not an email', owner_email: `x-${Date.now()}@shop.test`, shop_name: 'Main' });
    expect(email.statusCode).toBe(422);
    expect(email.body).toContain('email');
    expect(await snapshot()).toBe(before);

    const { payoutId } = await moderatedPayout(t);
    const noReason = await c.act('/operator/payouts', `/operator/payouts/${payoutId}/decline`, { reason: ' ' });
    expect(noReason.statusCode).toBe(422);
    expect(noReason.body).toContain('reason');
    expect((await t.db.pool.query('SELECT status FROM payouts WHERE id = $1', [payoutId])).rows[0].status).toBe('MODERATING');
    expect((await c.act('/operator/payouts', '/operator/payouts/nope/approve')).statusCode).toBe(404);
    expect((await c.get('/operator/merchants/nope')).statusCode).toBe(404);
    expect((await c.act('/operator/payouts', `/operator/payouts/${payoutId}/approve`)).statusCode).toBe(303);
    const again = await c.act('/operator/payouts?status=PROCESS', `/operator/payouts/${payoutId}/approve`);
    expect(again.statusCode).toBeGreaterThanOrEqual(400);
    expect(again.statusCode).toBeLessThan(500);
    const badDate = await c.get('/operator/audit?start_date=yesterday');
    expect(badDate.statusCode).toBe(422);
    expect(badDate.body).toContain('does not match the format');
  });
});

describe('the cabinet sign-in card of a merchant page', () => {
  it('lists the owner and the team with their 2FA state; the 2FA reset button only for a person with 2FA on and only for admins; the reset link button for admin and support; a reset turns it off', async () => {
    const m = await adminApi(t, 'POST', '/merchants', { name: 'People', email: `people-${Date.now()}@shop.test` });
    const { member } = await t.app.services.team.invite(m.id, { email: `people-${Date.now()}@team.test`, role: 'developer' });
    await t.db.pool.query(`UPDATE merchants SET totp_secret_enc = 'x', totp_enabled_at = now() WHERE id = $1`, [m.id]);
    const page = `/operator/merchants/${m.id}`;
    for (const role of ROLES) {
      const body = (await ops[role].client.get(page)).body;
      const card = body.slice(body.indexOf('id="cabinet-people"'), body.indexOf('</section>', body.indexOf('id="cabinet-people"')));
      expect(card).toContain(member.email);
      expect(card.match(/data-testid="person"/g)).toHaveLength(2);
      expect((card.match(/data-testid="two-factor-reset"/g) ?? []).length, role).toBe(role === 'admin' ? 1 : 0);
      expect((card.match(/data-testid="password-reset"/g) ?? []).length, role).toBe(role === 'admin' || role === 'support' ? 2 : 0);
    }
    // Without a reason the reset is refused (422) and nothing changes.
    const noReason = await ops.admin.client.act(page, `${page}/two-factor-reset`, {});
    expect(noReason.statusCode).toBe(422);
    expect(noReason.body).toContain('reason');
    expect((await t.db.pool.query('SELECT totp_enabled_at FROM merchants WHERE id = $1', [m.id])).rows[0].totp_enabled_at).not.toBeNull();
    const r = await ops.admin.client.act(page, `${page}/two-factor-reset`, { reason: 'video call, passport shown' });
    expect(r.statusCode).toBe(303);
    expect((await t.db.pool.query('SELECT totp_enabled_at FROM merchants WHERE id = $1', [m.id])).rows[0].totp_enabled_at).toBeNull();
    expect((await ops.admin.client.get(page)).body).not.toContain('data-testid="two-factor-reset"');
    // A member of another merchant through the console form: 404, nothing changes.
    const other = await adminApi(t, 'POST', '/merchants', { name: 'Other', email: `other-${Date.now()}@shop.test` });
    const before = await snapshot();
    expect((await ops.admin.client.act(`/operator/merchants/${other.id}`, `/operator/merchants/${other.id}/two-factor-reset`, { member_id: member.id, reason: 'checked' })).statusCode).toBe(404);
    expect(await snapshot()).toBe(before);
  });
});
