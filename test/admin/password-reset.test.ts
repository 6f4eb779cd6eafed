import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpServer, startTestMailWorker, resetLinkOf, type ReceivedMail } from '../helpers/smtp.js';
import type { Worker } from '../../src/workers/index.js';
import { CabinetClient, PASSWORD, cabinetMerchant, signedIn, teamMember, MEMBER_PASSWORD } from '../cabinet/helpers.js';
import { admin } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Issue 27 item 1: an operator's password reset never shows the operator a password. It mails
 * the cabinet account a one-time link (valid an hour, single use, only its hash stored) through
 * the mail outbox and a real SMTP server, answers 202 with the masked address and ends every
 * open session of the account at once (whoever holds one may be why the password is reset);
 * setting the new password through the link ends the sessions opened meanwhile.
 */
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let worker: Worker;
beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await setupTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Payments <no-reply@pay.test>' });
  worker = startTestMailWorker(t);
});
afterAll(async () => { await worker?.stop(); await t?.close(); await smtp?.close(); });

const mailTo = (email: string, subject = /password/i) => smtp.waitFor((m) => m.to.includes(email) && subject.test(m.subject));
/** The mail's row once the worker recorded the send (the SMTP server may have it a moment before). */
async function settledRows(email: string, sql = 'SELECT status, body_enc FROM mail_outbox WHERE to_address = $1 ORDER BY id') {
  let rows: { status: string }[] = [];
  // Bounded without failing: a row still PENDING then is what the caller's assertion shows.
  await waitFor(async () => (rows = (await t.db.pool.query(sql, [email])).rows).every((r) => r.status !== 'PENDING'), `the mail to ${email} sent`, 10_000, 25)
    .catch(() => undefined);
  return rows;
}
const pathOf = (link: string) => { const u = new URL(link); return `${u.pathname}${u.search}`; };

/** Follows a reset link as a browser would: the form, then the new password. */
async function setThroughLink(link: string, password: string) {
  const c = new CabinetClient(t);
  const page = await c.get(pathOf(link));
  if (page.statusCode !== 200) return { page, done: null };
  const token = /name="token" value="([^"]+)"/.exec(page.body)![1]!;
  const done = await c.post('/cabinet/password-reset', { _csrf: CabinetClient.csrfOf(page.body), token, password });
  return { page, done };
}

describe('the operator\'s password reset mails a one-time link', () => {
  it('answers 202 with the masked address and no password; the open sessions end at once; the mail arrives over SMTP; the link sets the password', async () => {
    const m = await cabinetMerchant(t);
    const before = await signedIn(t, m);
    expect((await before.get('/cabinet')).statusCode).toBe(200);

    const r = await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ success: true, sent_to: `${m.email[0]}***${m.email.slice(m.email.indexOf('@'))}` });
    expect(JSON.stringify(r.body)).not.toMatch(/password"/);
    // Right after the reset is issued, before any link is used: the old cookie gets the sign-in page.
    const ended = await before.get('/cabinet');
    expect(ended.statusCode).toBe(303);
    expect(ended.headers.location).toMatch(/^\/cabinet\/login/);
    // A session opened after the reset (the old password still works until the link is used) ends when it is.
    const meanwhile = await signedIn(t, m);
    expect((await meanwhile.get('/cabinet')).statusCode).toBe(200);

    const mail = await mailTo(m.email);
    expect(mail.from).toBe('no-reply@pay.test');
    const link = resetLinkOf(mail);
    expect(link.startsWith('http://pay.test/cabinet/password-reset?token=')).toBe(true);
    // Only the token's hash is stored; the mail's text is not kept once the SMTP server took it.
    const token = new URL(link).searchParams.get('token')!;
    const stored = JSON.stringify((await t.db.pool.query('SELECT * FROM cabinet_password_resets WHERE merchant_id = $1', [m.merchantId])).rows);
    expect(stored).not.toContain(token);
    expect(await settledRows(m.email)).toEqual([{ status: 'SENT', body_enc: null }]);

    // The old password still works until the link is used.
    const { page, done } = await setThroughLink(link, 'a brand new password 42');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(m.email);
    expect(done!.statusCode).toBe(303);
    expect(done!.headers.location).toBe('/cabinet/login?reset=1');

    // The session opened meanwhile is gone too: its cookie is sent to sign in.
    const old = await meanwhile.get('/cabinet');
    expect(old.statusCode).toBe(303);
    expect(old.headers.location).toMatch(/^\/cabinet\/login/);
    expect((await new CabinetClient(t).login(m.email, PASSWORD)).statusCode).toBe(401);
    const fresh = new CabinetClient(t);
    expect((await fresh.login(m.email, 'a brand new password 42')).headers.location).toBe('/cabinet');

    const trail = (await t.db.pool.query('SELECT actor, action, after FROM audit_log WHERE object_id = $1 AND action LIKE $2 ORDER BY id', [m.merchantId, 'merchant.password.%'])).rows;
    expect(trail).toEqual([
      { actor: 'admin-token', action: 'merchant.password.reset', after: { link_sent_to: r.body.sent_to, valid_minutes: 60, sessions_ended: 1 } },
      { actor: `merchant:${m.merchantId}`, action: 'merchant.password.set', after: { by: 'reset_link', sessions_ended: 1 } },
    ]);
  });

  it('the link works once only', async () => {
    const m = await cabinetMerchant(t);
    expect((await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`)).status).toBe(202);
    const link = resetLinkOf(await mailTo(m.email));
    expect((await setThroughLink(link, 'first new password 1')).done!.statusCode).toBe(303);
    const again = await setThroughLink(link, 'second new password 2');
    expect(again.page.statusCode).toBe(404);
    expect(again.page.body).toContain('not valid any more');
    // Posting the spent token straight away is refused too; the first password stands.
    const c = new CabinetClient(t);
    const form = await c.get('/cabinet/login');
    const token = new URL(link).searchParams.get('token')!;
    const post = await c.post('/cabinet/password-reset', { _csrf: CabinetClient.csrfOf(form.body), token, password: 'second new password 2' });
    expect(post.statusCode).toBe(404);
    expect((await new CabinetClient(t).login(m.email, 'first new password 1')).statusCode).toBe(303);
  });

  it('the link does not work after an hour; a newer link replaces an older one', async () => {
    const m = await cabinetMerchant(t);
    await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`);
    const first = resetLinkOf(await mailTo(m.email));
    await t.db.pool.query(`UPDATE cabinet_password_resets SET expires_at = now() - interval '1 second' WHERE merchant_id = $1`, [m.merchantId]);
    expect((await setThroughLink(first, 'too late password 1')).page.statusCode).toBe(404);
    const expiry = (await t.db.pool.query(`SELECT expires_at - created_at AS valid FROM cabinet_password_resets WHERE merchant_id = $1`, [m.merchantId])).rows;
    expect(expiry).toHaveLength(1);

    smtp.received.length = 0;
    await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`);
    const second = resetLinkOf(await mailTo(m.email));
    const valid = (await t.db.pool.query(`SELECT extract(epoch FROM expires_at - created_at)::int AS s FROM cabinet_password_resets WHERE merchant_id = $1`, [m.merchantId])).rows;
    expect(valid).toEqual([{ s: 3600 }]);
    await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`);
    expect((await setThroughLink(second, 'replaced link password')).page.statusCode).toBe(404);
    expect((await new CabinetClient(t).login(m.email, PASSWORD)).statusCode).toBe(303);
  });

  it('a short password is refused without spending the link', async () => {
    const m = await cabinetMerchant(t);
    await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`);
    const link = resetLinkOf(await mailTo(m.email));
    expect((await setThroughLink(link, 'short')).done!.statusCode).toBe(422);
    expect((await setThroughLink(link, 'long enough password 7')).done!.statusCode).toBe(303);
  });

  it('{member_id}: the team member gets the link at their own address; only their sessions end', async () => {
    const m = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    const member = await teamMember(t, m, 'developer');
    const r = await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`, { member_id: member.id });
    expect(r.status).toBe(202);
    expect(r.body.sent_to).toBe(`${member.email[0]}***@team.test`);
    // At once: the member's session ends, the owner's stays.
    expect((await member.client.get('/cabinet')).statusCode).toBe(303);
    expect((await owner.get('/cabinet')).statusCode).toBe(200);
    const mail = await mailTo(member.email);
    expect(smtp.received.some((x) => x.to.includes(m.email))).toBe(false);
    expect((await setThroughLink(resetLinkOf(mail), 'member new password 9')).done!.statusCode).toBe(303);
    expect((await member.client.get('/cabinet')).statusCode).toBe(303);
    expect((await owner.get('/cabinet')).statusCode).toBe(200);
    expect((await new CabinetClient(t).login(member.email, MEMBER_PASSWORD)).statusCode).toBe(401);
    expect((await new CabinetClient(t).login(member.email, 'member new password 9')).statusCode).toBe(303);
    // A member of another merchant, or no such member: 404, nothing mailed.
    const other = await cabinetMerchant(t);
    expect((await admin(t, 'POST', `/merchants/${other.merchantId}/password-reset`, { member_id: member.id })).status).toBe(404);
    expect((await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`, { member_id: 'nope' })).status).toBe(404);
  });
});

describe('no operator route answers a password', () => {
  it('support may send the link (202, no password); finance and auditor get 403', async () => {
    const m = await cabinetMerchant(t);
    const tokens: Record<string, string> = {};
    for (const role of ['support', 'finance', 'auditor']) {
      const o = await admin(t, 'POST', '/operators', { email: `pr-${role}-${Date.now()}@ops.test`, role });
      tokens[role] = (await admin(t, 'POST', `/operators/${o.body.id}/tokens`, { name: 'ci' })).body.api_token;
    }
    const as = (role: string) => t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/password-reset`, headers: { authorization: `Bearer ${tokens[role]}` } });
    const s = await as('support');
    expect(s.statusCode).toBe(202);
    expect(Object.keys(s.json()).sort()).toEqual(['sent_to', 'success']);
    for (const role of ['finance', 'auditor']) expect((await as(role)).statusCode, role).toBe(403);
    // The merchant's views never carry its password or live token either.
    const views = [await admin(t, 'GET', `/merchants/${m.merchantId}`), await admin(t, 'GET', `/merchants?email=${encodeURIComponent(m.email)}`)];
    for (const v of views) {
      expect(JSON.stringify(v.body)).not.toMatch(/"api_token"|"password"|password_hash|passwordHash/);
      expect(JSON.stringify(v.body)).not.toContain(m.token);
    }
    // The live token refresh stays admin's only.
    for (const role of ['support', 'finance', 'auditor']) {
      const r = await t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/token`, headers: { authorization: `Bearer ${tokens[role]}` } });
      expect(r.statusCode, role).toBe(403);
    }
  });
});

describe('mail through the outbox', () => {
  it('a rolled-back change sends no mail: the reset\'s audit entry fails, so neither the link nor its mail exists', async () => {
    const m = await cabinetMerchant(t);
    await t.db.pool.query(`CREATE FUNCTION refuse_reset_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.action = 'merchant.password.reset' AND NEW.object_id = '${m.merchantId}' THEN RAISE EXCEPTION 'audit refused'; END IF; RETURN NEW; END $$`);
    await t.db.pool.query('CREATE TRIGGER refuse_reset_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_reset_audit()');
    try {
      const r = await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`);
      expect(r.status).toBe(500);
    } finally {
      await t.db.pool.query('DROP TRIGGER refuse_reset_audit ON audit_log');
      await t.db.pool.query('DROP FUNCTION refuse_reset_audit()');
    }
    // A later mail to someone else arrives, so the worker ran past the moment the rolled-back one would have been sent.
    const n = await cabinetMerchant(t);
    await admin(t, 'POST', `/merchants/${n.merchantId}/password-reset`);
    await mailTo(n.email);
    expect(smtp.received.filter((x) => x.to.includes(m.email))).toEqual([]);
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM mail_outbox WHERE to_address = $1', [m.email])).rows[0].n).toBe(0);
    expect((await t.db.pool.query('SELECT count(*)::int AS n FROM cabinet_password_resets WHERE merchant_id = $1', [m.merchantId])).rows[0].n).toBe(0);
  });

  it('an SMTP server that refuses first (451, try later) gets the mail on the retry', async () => {
    const m = await cabinetMerchant(t);
    smtp.refuseNext(1, 451);
    await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`);
    const mail: ReceivedMail = await mailTo(m.email);
    expect(resetLinkOf(mail)).toContain('/cabinet/password-reset?token=');
    expect(await settledRows(m.email, 'SELECT status, attempts, last_error FROM mail_outbox WHERE to_address = $1')).toEqual([{ status: 'SENT', attempts: 2, last_error: null }]);
  });

  it('any password change ends the account\'s sessions (the service the seed and tools use)', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    await t.app.services.merchants.setPassword(m.merchantId, 'changed by a tool 123');
    expect((await c.get('/cabinet')).statusCode).toBe(303);
  });
});
