import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTotpSecret } from '../../src/domain/operator/two-factor.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { CabinetClient, PASSWORD, cabinetMerchant, type CabinetMerchant } from '../cabinet/helpers.js';
import { totpCode } from '../operator/helpers.js';
import { admin } from './helpers.js';

/**
 * Issue 17: an operator resets a cabinet account's 2FA (a merchant who lost the phone and the
 * recovery codes): POST /admin/v1/merchants/{id}/two-factor-reset {member_id?, reason} clears the
 * TOTP secret and the recovery codes and ends that person's sessions, audited with the reason and
 * without secrets in the same transaction, and mails the person. Issue 27: admins only (support,
 * finance and auditor get 403 and nothing changes), and the reason is required (422).
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

const MEMBER_PASSWORD = 'member password 0123';
const REASON = 'called back on the number on file, passport checked';
type Method = 'POST';

async function as(token: string, url: string, payload?: unknown, method: Method = 'POST') {
  const r = await t.app.inject({
    method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  return { status: r.statusCode, body: r.json() as Record<string, any> };
}

let n = 0;
async function operatorToken(role: string): Promise<{ id: string; token: string }> {
  n += 1;
  const c = await admin(t, 'POST', '/operators', { email: `tfr${n}-${role}-${Date.now()}@ops.test`, role });
  const k = await admin(t, 'POST', `/operators/${c.body.id}/tokens`, { name: 'ci' });
  return { id: c.body.id, token: k.body.api_token };
}

/** Turns TOTP on for an account through the service the cabinet's security page uses; the secret. */
async function withTotp(table: 'merchants' | 'merchant_users', id: string): Promise<string> {
  const secret = newTotpSecret();
  const r = await t.app.services.cabinetTwoFactor[table].enable(id, secret, await totpCode(secret, -1));
  if (!r) throw new Error('enable failed');
  return secret;
}

/** A full cabinet session: the password, then the TOTP code (`step`, each accepted once). */
async function fullSession(email: string, password: string, secret: string, step: number): Promise<CabinetClient> {
  const c = new CabinetClient(t);
  const r = await c.login(email, password);
  expect(r.headers.location).toBe('/cabinet/2fa');
  const done = await c.post('/cabinet/2fa', { _csrf: await c.csrf('/cabinet/2fa'), code: await totpCode(secret, step) });
  expect(done.statusCode).toBe(303);
  expect((await c.get('/cabinet')).statusCode).toBe(200);
  return c;
}

const totpRow = async (table: 'merchants' | 'merchant_users', id: string) => (await t.db.pool.query(
  `SELECT totp_secret_enc, totp_enabled_at, totp_last_step, recovery_code_hashes FROM ${table} WHERE id = $1`, [id])).rows[0];

/** A merchant whose owner and one member (a developer) both have TOTP on. */
async function lockedOut(): Promise<{ m: CabinetMerchant; memberId: string; memberEmail: string; ownerSecret: string; memberSecret: string }> {
  const m = await cabinetMerchant(t);
  const { member, token } = await t.app.services.team.invite(m.merchantId, { email: `dev-${Date.now()}-${Math.random()}@team.test`, role: 'developer' });
  await t.app.services.team.accept(token, MEMBER_PASSWORD);
  return { m, memberId: member.id, memberEmail: member.email, ownerSecret: await withTotp('merchants', m.merchantId), memberSecret: await withTotp('merchant_users', member.id) };
}

const snapshot = async () => JSON.stringify([
  (await t.db.pool.query('SELECT id, totp_secret_enc, totp_enabled_at, recovery_code_hashes FROM merchants ORDER BY id')).rows,
  (await t.db.pool.query('SELECT id, totp_secret_enc, totp_enabled_at, recovery_code_hashes FROM merchant_users ORDER BY id')).rows,
  (await t.db.pool.query('SELECT id FROM cabinet_sessions ORDER BY id')).rows,
  (await t.db.pool.query('SELECT count(*) FROM audit_log')).rows,
]);

describe('resetting the owner\'s 2FA', () => {
  it('clears the secret and the recovery codes, ends the owner\'s sessions (not the member\'s), audits without secrets; the owner then signs in with the password alone', async () => {
    const { m, memberId, memberEmail, ownerSecret, memberSecret } = await lockedOut();
    const owner = await fullSession(m.email, PASSWORD, ownerSecret, 0);
    const member = await fullSession(memberEmail, MEMBER_PASSWORD, memberSecret, 0);
    const enc = (await totpRow('merchants', m.merchantId)).totp_secret_enc as string;

    const r = await admin(t, 'POST', `/merchants/${m.merchantId}/two-factor-reset`, { reason: REASON });
    expect(r).toEqual({ status: 200, body: { success: true, ok: true } });

    expect(await totpRow('merchants', m.merchantId)).toEqual({ totp_secret_enc: null, totp_enabled_at: null, totp_last_step: null, recovery_code_hashes: [] });
    expect((await totpRow('merchant_users', memberId)).totp_enabled_at).not.toBeNull();
    expect((await owner.get('/cabinet')).statusCode).toBe(303);
    expect((await member.get('/cabinet')).statusCode).toBe(200);

    const entries = (await t.db.pool.query('SELECT actor, action, object_type, object_id, before, after FROM audit_log WHERE action = $1 AND object_id = $2', ['merchant.two_factor.reset', m.merchantId])).rows;
    expect(entries).toEqual([{
      actor: 'admin-token', action: 'merchant.two_factor.reset', object_type: 'merchant', object_id: m.merchantId,
      before: { totp_enabled: true }, after: { totp_enabled: false, sessions_ended: 1, reason: REASON },
    }]);
    const all = JSON.stringify((await t.db.pool.query('SELECT * FROM audit_log WHERE object_id = $1', [m.merchantId])).rows);
    expect(all).not.toContain(ownerSecret);
    expect(all).not.toContain(enc);

    const again = new CabinetClient(t);
    const login = await again.login(m.email, PASSWORD);
    expect(login.statusCode).toBe(303);
    expect(login.headers.location).toBe('/cabinet');
    const security = await again.get('/cabinet/security');
    expect(security.body).toContain('id="totp-secret"');
  });

  it('member_id null is the owner too; an owner without 2FA is reset all the same (200, recorded)', async () => {
    const m = await cabinetMerchant(t);
    const r = await admin(t, 'POST', `/merchants/${m.merchantId}/two-factor-reset`, { member_id: null, reason: REASON });
    expect(r.status).toBe(200);
    const e = (await t.db.pool.query('SELECT before, after FROM audit_log WHERE action = $1 AND object_id = $2', ['merchant.two_factor.reset', m.merchantId])).rows;
    expect(e).toEqual([{ before: { totp_enabled: false }, after: { totp_enabled: false, sessions_ended: 0, reason: REASON } }]);
  });
});

describe('resetting a team member\'s 2FA', () => {
  it('{member_id}: that member\'s TOTP cleared and sessions ended; the owner\'s untouched', async () => {
    const { m, memberId, memberEmail, ownerSecret, memberSecret } = await lockedOut();
    const owner = await fullSession(m.email, PASSWORD, ownerSecret, 0);
    const member = await fullSession(memberEmail, MEMBER_PASSWORD, memberSecret, 0);

    const r = await admin(t, 'POST', `/merchants/${m.merchantId}/two-factor-reset`, { member_id: memberId, reason: REASON });
    expect(r).toEqual({ status: 200, body: { success: true, ok: true } });
    expect(await totpRow('merchant_users', memberId)).toEqual({ totp_secret_enc: null, totp_enabled_at: null, totp_last_step: null, recovery_code_hashes: [] });
    expect((await totpRow('merchants', m.merchantId)).totp_enabled_at).not.toBeNull();
    expect((await member.get('/cabinet')).statusCode).toBe(303);
    expect((await owner.get('/cabinet')).statusCode).toBe(200);

    const e = (await t.db.pool.query('SELECT object_type, before, after FROM audit_log WHERE action = $1 AND object_id = $2', ['merchant.two_factor.reset', memberId])).rows;
    expect(e).toEqual([{ object_type: 'merchant_user', before: { totp_enabled: true }, after: { totp_enabled: false, sessions_ended: 1, reason: REASON, merchant_id: m.merchantId } }]);
    const login = await new CabinetClient(t).login(memberEmail, MEMBER_PASSWORD);
    expect(login.headers.location).toBe('/cabinet');
  });

  it('404 for an unknown merchant, an unknown member, and a member of another merchant; 422 for a member_id that is not an id; nothing changes', async () => {
    const a = await lockedOut();
    const b = await lockedOut();
    const before = await snapshot();
    const other = await admin(t, 'POST', `/merchants/${a.m.merchantId}/two-factor-reset`, { member_id: b.memberId, reason: REASON });
    expect(other.status).toBe(404);
    expect(other.body.success).toBe(false);
    expect((await admin(t, 'POST', `/merchants/${a.m.merchantId}/two-factor-reset`, { member_id: 'nope', reason: REASON })).status).toBe(404);
    expect((await admin(t, 'POST', `/merchants/${a.m.merchantId}/two-factor-reset`, { member_id: '<script>', reason: REASON })).status).toBe(404);
    expect((await admin(t, 'POST', '/merchants/nope/two-factor-reset', { reason: REASON })).status).toBe(404);
    // A member's id is not a merchant.
    expect((await admin(t, 'POST', `/merchants/${a.memberId}/two-factor-reset`, { reason: REASON })).status).toBe(404);
    for (const bad of ['', '   ', { x: 1 }, ['a']]) {
      const r = await admin(t, 'POST', `/merchants/${a.m.merchantId}/two-factor-reset`, { member_id: bad, reason: REASON });
      expect(r.status, JSON.stringify(bad)).toBe(422);
      expect(r.body.errors.member_id ?? r.body.errors['member_id'], JSON.stringify(r.body)).toBeDefined();
    }
    expect(await snapshot()).toBe(before);
  });
});

describe('finding the member to reset', () => {
  it('GET /merchants/{id}/team lists the team with ids, roles and 2FA state, never a secret; 404 for an unknown merchant', async () => {
    const a = await lockedOut();
    const r = await admin(t, 'GET', `/merchants/${a.m.merchantId}/team`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([
      { id: a.memberId, email: a.memberEmail, role: 'developer', state: 'active', two_factor: true, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) },
    ]);
    expect(JSON.stringify(r.body)).not.toMatch(/totp|secret|password|recovery/i);
    // The id it gives is the one two-factor-reset takes; afterwards the list says 2FA is off.
    expect((await admin(t, 'POST', `/merchants/${a.m.merchantId}/two-factor-reset`, { member_id: r.body.data[0].id, reason: REASON })).status).toBe(200);
    expect((await admin(t, 'GET', `/merchants/${a.m.merchantId}/team`)).body.data[0].two_factor).toBe(false);
    expect((await admin(t, 'GET', '/merchants/nope/team')).status).toBe(404);
  });
});

describe('who may reset', () => {
  const roles: Record<string, { id: string; token: string }> = {};
  beforeAll(async () => { for (const r of ['admin', 'support', 'finance', 'auditor']) roles[r] = await operatorToken(r); });

  for (const [role, allowed] of [['admin', true], ['support', false], ['finance', false], ['auditor', false]] as const) {
    it(`${role} ${allowed ? 'may' : 'may not (403, nothing changes)'}`, async () => {
      const { m, memberId, memberEmail, memberSecret } = await lockedOut();
      const member = await fullSession(memberEmail, MEMBER_PASSWORD, memberSecret, 0);
      const before = await snapshot();
      const owner = await as(roles[role]!.token, `/merchants/${m.merchantId}/two-factor-reset`, { reason: REASON });
      const mem = await as(roles[role]!.token, `/merchants/${m.merchantId}/two-factor-reset`, { member_id: memberId, reason: REASON });
      if (allowed) {
        expect([owner.status, mem.status]).toEqual([200, 200]);
        expect((await totpRow('merchants', m.merchantId)).totp_enabled_at).toBeNull();
        expect((await totpRow('merchant_users', memberId)).totp_enabled_at).toBeNull();
        expect((await member.get('/cabinet')).statusCode).toBe(303);
        const actors = (await t.db.pool.query('SELECT actor FROM audit_log WHERE action = $1 AND object_id = ANY($2) ORDER BY id', ['merchant.two_factor.reset', [m.merchantId, memberId]])).rows;
        expect(actors).toEqual([{ actor: `operator:${roles[role]!.id}` }, { actor: `operator:${roles[role]!.id}` }]);
      } else {
        for (const r of [owner, mem]) expect(r).toEqual({ status: 403, body: { success: false, message: 'This action is unauthorized.' } });
        expect(await snapshot()).toBe(before);
        expect((await member.get('/cabinet')).statusCode).toBe(200);
      }
    });
  }
});

describe('issue 27: a reason, and the person told', () => {
  it('without a non-empty reason: 422 errors.reason, nothing changes', async () => {
    const { m, memberId } = await lockedOut();
    const before = await snapshot();
    for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 7 }, { member_id: memberId }, { member_id: memberId, reason: '' }, { reason: 'x'.repeat(501) }]) {
      const r = await admin(t, 'POST', `/merchants/${m.merchantId}/two-factor-reset`, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors.reason, JSON.stringify(r.body)).toBeDefined();
    }
    expect(await snapshot()).toBe(before);
  });

  it('the reset account is mailed (the owner at the merchant\'s address, a member at theirs), in the same transaction', async () => {
    const { m, memberId, memberEmail } = await lockedOut();
    const queued = async () => (await t.db.pool.query(
      `SELECT to_address, kind FROM mail_outbox WHERE merchant_id = $1 AND kind = 'two_factor_reset' ORDER BY id`, [m.merchantId])).rows;
    expect(await queued()).toEqual([]);
    await admin(t, 'POST', `/merchants/${m.merchantId}/two-factor-reset`, { reason: REASON });
    await admin(t, 'POST', `/merchants/${m.merchantId}/two-factor-reset`, { member_id: memberId, reason: REASON });
    expect(await queued()).toEqual([{ to_address: m.email, kind: 'two_factor_reset' }, { to_address: memberEmail, kind: 'two_factor_reset' }]);
    // A refused reset mails nobody.
    await admin(t, 'POST', `/merchants/${m.merchantId}/two-factor-reset`, { member_id: 'nope', reason: REASON });
    expect(await queued()).toHaveLength(2);
  });
});
