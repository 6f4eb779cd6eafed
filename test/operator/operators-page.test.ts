import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient, enrolledOperator, type OperatorFixture } from './helpers.js';

/**
 * The console's operators page: everyone reads the list; only an admin invites by email,
 * changes a role, disables, mails a password reset link and resets two-factor sign-in, each
 * audited; an admin cannot change their own role or status here.
 */
let t: TestApp;
let adm: OperatorFixture;
beforeAll(async () => {
  t = await setupTestApp();
  adm = await enrolledOperator(t, 'admin');
});
afterAll(async () => { await t?.close(); });

const trail = async (id: string) => (await t.db.pool.query('SELECT actor, action FROM audit_log WHERE object_id = $1 ORDER BY id', [id])).rows;
const mailTo = async (email: string) => (await t.app.services.mail.list()).filter((x) => x.to === email);
const linkIn = (text: string | null) => /\/operator\/password-reset\?token=[\w-]+/.exec(text ?? '')?.[0];

describe('the operators page', () => {
  it('an admin invites an operator by email: no password shown, a mailed link (a week) sets one; audited', async () => {
    const email = `invited-${Date.now()}@ops.test`;
    const r = await adm.client.act('/operator/operators', '/operator/operators', { email, role: 'finance' });
    expect(r.statusCode).toBe(303);
    const page = await adm.client.get(r.headers.location as string);
    expect(page.body).toContain(`${email} is invited`);
    expect(page.body).toContain('not yet (invited)');
    const row = (await t.db.pool.query("SELECT id, role::text AS role, password_hash FROM operators WHERE email = $1", [email])).rows[0];
    expect(row).toMatchObject({ role: 'FINANCE', password_hash: null });
    const [mail] = await mailTo(email);
    expect(mail?.subject).toBe('You were invited to the operator console');
    expect(mail?.text).toContain('7 days');
    const c = new ConsoleClient(t);
    const form = await c.get(linkIn(mail!.text)!);
    expect(form.statusCode).toBe(200);
    const set = await c.post('/operator/password-reset', { _csrf: ConsoleClient.csrfOf(form.body), token: /name="token" value="([^"]+)"/.exec(form.body)![1]!, password: 'invited operator pass 1' });
    expect(set.statusCode).toBe(303);
    expect((await trail(row.id)).map((a) => a.action)).toEqual(['operator.create', 'operator.invite', 'operator.password.set']);
    // A bad address is named on the form, nothing created.
    const bad = await adm.client.act('/operator/operators', '/operator/operators', { email: 'not-an-email', role: 'finance' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Enter a valid email address.');
  });

  it("an admin changes a role, disables (the session ends), mails a reset, resets two-factor; each audited", async () => {
    const op = await enrolledOperator(t, 'support');
    expect((await adm.client.act('/operator/operators', `/operator/operators/${op.id}/role`, { role: 'auditor' })).statusCode).toBe(303);
    expect((await adm.client.act('/operator/operators', `/operator/operators/${op.id}/totp-reset`)).statusCode).toBe(303);
    expect((await adm.client.act('/operator/operators', `/operator/operators/${op.id}/password-reset`)).statusCode).toBe(303);
    expect((await op.client.get('/operator')).statusCode).toBe(303);
    expect(linkIn((await mailTo(op.email))[0]?.text ?? null)).toBeDefined();
    expect((await adm.client.act('/operator/operators', `/operator/operators/${op.id}/status`, { status: 'disabled' })).statusCode).toBe(303);
    const row = (await t.db.pool.query('SELECT role::text AS role, status::text AS status, totp_enabled_at FROM operators WHERE id = $1', [op.id])).rows[0];
    expect(row).toEqual({ role: 'AUDITOR', status: 'DISABLED', totp_enabled_at: null });
    expect((await trail(op.id)).filter((a) => a.actor === `operator:${adm.id}`).map((a) => a.action))
      .toEqual(['operator.update', 'operator.totp.reset', 'operator.password.reset', 'operator.update']);
  });

  it('an admin cannot change their own role or status (409, nothing changes); the page offers no such form', async () => {
    const page = await adm.client.get('/operator/operators');
    expect(page.body).not.toContain(`/operator/operators/${adm.id}/status`);
    const r = await adm.client.act('/operator/operators', `/operator/operators/${adm.id}/status`, { status: 'disabled' });
    expect(r.statusCode).toBe(409);
    expect((await t.db.pool.query('SELECT status::text AS s FROM operators WHERE id = $1', [adm.id])).rows[0].s).toBe('ACTIVE');
  });

  it('another role reads the list but changes nothing (no forms; 403)', async () => {
    const fin = await enrolledOperator(t, 'finance');
    const page = await fin.client.get('/operator/operators');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(adm.email);
    expect(page.body).not.toContain('Send password reset link');
    const r = await fin.client.post(`/operator/operators/${adm.id}/password-reset`, ConsoleClient.formOf(page.body));
    expect(r.statusCode).toBe(403);
    expect(await mailTo(adm.email)).toEqual([]);
  });
});
