import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient, OP_PASSWORD, createOperator, enrolledOperator, totpCode } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t?.close(); });

const auditOf = async (objectId: string) => (await t.db.pool.query<{ actor: string; action: string; after: Record<string, unknown> | null; ip: string | null }>(
  'SELECT actor, action, after, ip FROM audit_log WHERE object_id = $1 ORDER BY id', [objectId],
)).rows;

async function passwordStep(c: ConsoleClient, email: string, password = OP_PASSWORD) {
  const page = await c.get('/operator/login');
  return c.post('/operator/login', { ...ConsoleClient.formOf(page.body), email, password });
}

describe('operator sign-in with TOTP', () => {
  it('first sign-in enrols TOTP: QR code and key shown, a real code confirms it, ten recovery codes shown once and stored hashed', async () => {
    const op = await createOperator(t, 'finance');
    const c = new ConsoleClient(t);
    const r = await passwordStep(c, op.email);
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe('/operator/2fa');
    // A right password alone reaches nothing but the second factor.
    const blocked = await c.get('/operator/merchants');
    expect(blocked.statusCode).toBe(303);
    expect(blocked.headers.location).toBe('/operator/2fa');

    const enrol = await c.get('/operator/2fa');
    expect(enrol.statusCode).toBe(200);
    expect(enrol.body).toMatch(/<img class="qr" id="totp-qr" src="data:image\/png;base64,/);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.body)![1]!;
    expect(secret.length).toBeGreaterThanOrEqual(32);

    // A wrong code: 401, TOTP still off.
    const wrong = await c.post('/operator/2fa/enrol', { ...ConsoleClient.formOf(enrol.body), code: '000000' === await totpCode(secret) ? '111111' : '000000' });
    expect(wrong.statusCode).toBe(401);
    let row = (await t.db.pool.query('SELECT totp_enabled_at, totp_secret_enc, recovery_code_hashes FROM operators WHERE id = $1', [op.id])).rows[0];
    expect(row.totp_enabled_at).toBeNull();
    // The same secret is offered again (kept with the half-signed-in session).
    expect(wrong.body).toContain(secret);

    const ok = await c.post('/operator/2fa/enrol', { ...ConsoleClient.formOf(wrong.body), code: await totpCode(secret) });
    expect(ok.statusCode).toBe(200);
    const codes = [...ok.body.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    row = (await t.db.pool.query('SELECT totp_enabled_at, totp_secret_enc, recovery_code_hashes FROM operators WHERE id = $1', [op.id])).rows[0];
    expect(row.totp_enabled_at).not.toBeNull();
    expect(row.totp_secret_enc).not.toContain(secret);
    expect(row.recovery_code_hashes).toHaveLength(10);
    expect(JSON.stringify(row.recovery_code_hashes)).not.toContain(codes[0]!.replace('-', ''));

    // Signed in: the console opens.
    const home = await c.get('/operator');
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain(op.email);

    const trail = await auditOf(op.id);
    expect(trail.map((e) => e.action)).toEqual(['operator.sign_in.failed', 'operator.totp.enable', 'operator.sign_in']);
    expect(trail.every((e) => e.actor === `operator:${op.id}` && e.ip)).toBe(true);
    expect(JSON.stringify(trail)).not.toContain(secret);
  });

  it('later sign-ins ask for a current code; a code is accepted once', async () => {
    const op = await enrolledOperator(t, 'support');
    const c = new ConsoleClient(t);
    expect((await passwordStep(c, op.email)).headers.location).toBe('/operator/2fa');
    const page = await c.get('/operator/2fa');
    expect(page.body).toContain('Two-factor code');
    // The enrolment's own code was used: refused, even when the clock has moved to the next
    // time step since (it is still within the allowed drift).
    const replay = await c.post('/operator/2fa', { ...ConsoleClient.formOf(page.body), code: op.enrolCode });
    expect(replay.statusCode).toBe(401);
    expect((await c.get('/operator/merchants')).headers.location).toBe('/operator/2fa');
    // The next step's code (within the allowed drift) signs in.
    const ok = await c.post('/operator/2fa', { ...ConsoleClient.formOf(replay.body), code: await totpCode(op.secret, 1) });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/operator');
    expect((await c.get('/operator/merchants')).statusCode).toBe(200);
    const actions = (await auditOf(op.id)).map((e) => e.action);
    expect(actions.slice(-2)).toEqual(['operator.sign_in.failed', 'operator.sign_in']);
  });

  it('a recovery code signs in once', async () => {
    const op = await createOperator(t, 'auditor');
    const c = new ConsoleClient(t);
    await passwordStep(c, op.email);
    const enrol = await c.get('/operator/2fa');
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.body)![1]!;
    const shown = await c.post('/operator/2fa/enrol', { ...ConsoleClient.formOf(enrol.body), code: await totpCode(secret) });
    const code = /<li><code>([a-z0-9-]+)<\/code><\/li>/.exec(shown.body)![1]!;

    const c2 = new ConsoleClient(t);
    await passwordStep(c2, op.email);
    const p = await c2.get('/operator/2fa');
    const ok = await c2.post('/operator/2fa', { ...ConsoleClient.formOf(p.body), code: code.toUpperCase() });
    expect(ok.statusCode).toBe(303);
    expect((await t.db.pool.query('SELECT jsonb_array_length(recovery_code_hashes) AS n FROM operators WHERE id = $1', [op.id])).rows[0].n).toBe(9);
    const last = (await auditOf(op.id)).at(-1)!;
    expect(last).toMatchObject({ action: 'operator.sign_in', after: { factor: 'recovery_code' } });

    const c3 = new ConsoleClient(t);
    await passwordStep(c3, op.email);
    const p3 = await c3.get('/operator/2fa');
    expect((await c3.post('/operator/2fa', { ...ConsoleClient.formOf(p3.body), code })).statusCode).toBe(401);
  });

  it('a wrong password or an unknown email: the same 401, the failure audited, no session', async () => {
    const op = await createOperator(t, 'admin');
    const c = new ConsoleClient(t);
    const wrong = await passwordStep(c, op.email, 'not the password');
    const unknown = await passwordStep(c, 'nobody@ops.test', 'not the password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.body).toContain('Wrong email or password.');
    expect(unknown.body).toContain('Wrong email or password.');
    expect(c.cookies.has('op_sid')).toBe(false);
    expect(await auditOf(op.id)).toMatchObject([{ actor: 'anonymous', action: 'operator.sign_in.failed', after: { step: 'password', reason: 'invalid' } }]);
    expect(await auditOf('nobody@ops.test')).toHaveLength(1);
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM operator_sessions WHERE operator_id = $1', [op.id])).rows[0].n).toBe(0);
  });

  it('locks out as the cabinet does: after 5 wrong passwords from an address the right one is refused there (429), not from another address', async () => {
    const op = await createOperator(t, 'admin');
    const c = new ConsoleClient(t, '198.51.100.77');
    for (let i = 0; i < 5; i += 1) expect((await passwordStep(c, op.email, `wrong ${i}`)).statusCode).toBe(401);
    expect((await passwordStep(c, op.email)).statusCode).toBe(429);
    expect((await passwordStep(new ConsoleClient(t, '198.51.100.78'), op.email)).statusCode).toBe(303);
  });

  it('a disabled operator is refused at the password and loses an open session at once', async () => {
    const op = await enrolledOperator(t, 'finance');
    expect((await op.client.get('/operator/payouts')).statusCode).toBe(200);
    await t.app.services.operators.update(op.id, { status: 'disabled' });
    const r = await op.client.get('/operator/payouts');
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toMatch(/^\/operator\/login/);
    expect((await passwordStep(new ConsoleClient(t), op.email)).statusCode).toBe(401);
  });

  it('every form is accepted once (a reload of the POST changes nothing) and needs the session CSRF token', async () => {
    const op = await enrolledOperator(t, 'admin');
    const page = await op.client.get('/operator/merchants');
    const form = ConsoleClient.formOf(page.body);
    const first = await op.client.post('/operator/merchants/new', { ...form, name: 'Once Ltd', email: 'once@shop.test', owner_email: 'once-owner@shop.test', shop_name: 'Main' });
    expect(first.statusCode).toBe(200);
    const again = await op.client.post('/operator/merchants/new', { ...form, name: 'Once Ltd', email: 'once2@shop.test', owner_email: 'once2-owner@shop.test', shop_name: 'Main' });
    expect(again.statusCode).toBe(409);
    // Test twins (test mode's rows) carry their merchant's name: count merchants of their own.
    expect(await t.db.prisma.merchant.count({ where: { name: 'Once Ltd', liveMerchantId: null } })).toBe(1);
    const page2 = await op.client.get('/operator/merchants');
    const noCsrf = await op.client.post('/operator/merchants/new', { _form: ConsoleClient.formOf(page2.body)._form!, name: 'No Csrf', email: 'nocsrf@shop.test', owner_email: 'nocsrf-owner@shop.test', shop_name: 'Main' });
    expect(noCsrf.statusCode).toBe(403);
    expect(await t.db.prisma.merchant.count({ where: { name: 'No Csrf' } })).toBe(0);
  });

  it('sign-out ends the session', async () => {
    const op = await enrolledOperator(t, 'auditor');
    const out = await op.client.act('/operator', '/operator/logout');
    expect(out.statusCode).toBe(303);
    expect((await op.client.get('/operator')).statusCode).toBe(303);
  });

  it('an admin resets a lost TOTP through the operator API (support may not): sessions end, the next sign-in enrols again, audited', async () => {
    const op = await enrolledOperator(t, 'finance');
    const support = await createOperator(t, 'support');
    const { apiToken } = await t.app.services.operators.issueToken(support.id, 'test');
    const refused = await t.app.inject({ method: 'POST', url: `/admin/v1/operators/${op.id}/totp-reset`, headers: { authorization: `Bearer ${apiToken}` } });
    expect(refused.statusCode).toBe(403);
    expect((await t.db.pool.query('SELECT totp_enabled_at FROM operators WHERE id = $1', [op.id])).rows[0].totp_enabled_at).not.toBeNull();
    expect((await op.client.get('/operator')).statusCode).toBe(200);

    const r = await t.app.inject({ method: 'POST', url: `/admin/v1/operators/${op.id}/totp-reset`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ id: op.id, totp_enabled: false });
    const row = (await t.db.pool.query('SELECT totp_enabled_at, totp_secret_enc, recovery_code_hashes FROM operators WHERE id = $1', [op.id])).rows[0];
    expect(row).toEqual({ totp_enabled_at: null, totp_secret_enc: null, recovery_code_hashes: [] });
    expect((await op.client.get('/operator')).statusCode).toBe(303);
    const c = new ConsoleClient(t);
    await passwordStep(c, op.email);
    expect((await c.get('/operator/2fa')).body).toContain('id="totp-secret"');
    expect((await auditOf(op.id)).at(-1)).toMatchObject({ actor: 'admin-token', action: 'operator.totp.reset', after: { totp_enabled: false } });
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/operators/nope/totp-reset', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).statusCode).toBe(404);
  });
});
