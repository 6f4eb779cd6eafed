import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpServer, startTestMailWorker, resetLinkOf } from '../helpers/smtp.js';
import type { Worker } from '../../src/workers/index.js';
import { CabinetClient, PASSWORD, cabinetMerchant, signedIn } from '../cabinet/helpers.js';
import { ConsoleClient, OP_PASSWORD, createOperator, enrolledOperator } from '../operator/helpers.js';
import { admin } from './helpers.js';
import { buildCall } from '../../src/admin/cli.js';
import { FORGOT_LIMITS } from '../../src/lib/sign-in-guard.js';

/**
 * Resets for everyone by a mailed one-time link: "Forgot password?" on the cabinet's and the
 * console's sign-in pages (the same answer whether an account has the address or not, limited
 * per address and per email), and an admin's reset of another operator through the operator API
 * and the CLI. Every step is audited; setting the password ends the account's sessions.
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

const pathOf = (link: string) => { const u = new URL(link); return `${u.pathname}${u.search}`; };
const queued = async (email: string) => Number((await t.db.pool.query('SELECT count(*) FROM mail_outbox WHERE to_address = $1', [email])).rows[0].count);
const actions = async (objectId: string) => (await t.db.pool.query('SELECT actor, action FROM audit_log WHERE object_id = $1 ORDER BY id', [objectId])).rows;

async function forgot(c: CabinetClient, face: 'cabinet' | 'operator', email: string) {
  const page = await c.get(`/${face}/forgot-password`);
  expect(page.statusCode).toBe(200);
  return c.post(`/${face}/forgot-password`, { _csrf: CabinetClient.csrfOf(page.body), email });
}
async function setThroughLink(c: CabinetClient, face: 'cabinet' | 'operator', link: string, password: string) {
  const page = await c.get(pathOf(link));
  expect(page.statusCode).toBe(200);
  const token = /name="token" value="([^"]+)"/.exec(page.body)![1]!;
  return c.post(`/${face}/password-reset`, { _csrf: CabinetClient.csrfOf(page.body), token, password });
}
/** The page's answer with the address typed taken out: what a prober could compare. */
const answerOf = (body: string, email: string) => body.split(email).join('EMAIL').replace(/value="[^"]+"/g, 'value=""');

describe('the cabinet sign-in page: Forgot password?', () => {
  it('the sign-in page links to it (English and Russian)', async () => {
    expect((await new CabinetClient(t).get('/cabinet/login?lang=en')).body).toContain('Forgot password?');
    expect((await new CabinetClient(t).get('/cabinet/login?lang=ru')).body).toContain('Забыли пароль?');
  });

  it('answers the same whether the address exists or not; only a known one gets mail; the link sets the password and ends the sessions; audited', async () => {
    const m = await cabinetMerchant(t);
    const before = await signedIn(t, m);
    const unknown = `nobody-${Date.now()}@nowhere.test`;
    const known = await forgot(new CabinetClient(t, '10.1.0.1'), 'cabinet', m.email);
    const none = await forgot(new CabinetClient(t, '10.1.0.2'), 'cabinet', unknown);
    expect(known.statusCode).toBe(200);
    expect(none.statusCode).toBe(200);
    expect(answerOf(known.body, m.email)).toBe(answerOf(none.body, unknown));
    expect(await queued(unknown)).toBe(0);
    expect(await queued(m.email)).toBe(1);

    const mail = await smtp.waitFor((x) => x.to.includes(m.email) && /password/i.test(x.subject));
    expect(mail.text).toContain('sign-in page');
    // Asking ends no session (anyone can type an address); setting the password does.
    expect((await before.get('/cabinet')).statusCode).toBe(200);
    const done = await setThroughLink(new CabinetClient(t), 'cabinet', resetLinkOf(mail), 'a brand new password 1');
    expect(done.statusCode).toBe(303);
    expect((await before.get('/cabinet')).statusCode).toBe(303);
    expect((await new CabinetClient(t).login(m.email, PASSWORD)).statusCode).toBe(401);
    expect((await new CabinetClient(t).login(m.email, 'a brand new password 1')).statusCode).toBe(303);
    expect((await actions(m.merchantId)).map((a) => a.action)).toEqual(expect.arrayContaining(['merchant.password.reset_link', 'merchant.password.set']));
  });

  it(`is limited: the ${FORGOT_LIMITS.perPair + 1}th request for one address from one client is refused (429) and mails nothing`, async () => {
    const m = await cabinetMerchant(t);
    const c = new CabinetClient(t, '10.1.0.3');
    for (let i = 0; i < FORGOT_LIMITS.perPair; i++) expect((await forgot(c, 'cabinet', m.email)).statusCode).toBe(200);
    const r = await forgot(c, 'cabinet', m.email);
    expect(r.statusCode).toBe(429);
    expect(await queued(m.email)).toBe(FORGOT_LIMITS.perPair);
  });
});

describe('the console sign-in page: Forgot password?', () => {
  it('the same answer for any address; the link sets the password, ends the console sessions, keeps the second factor; audited', async () => {
    const op = await enrolledOperator(t, 'support');
    expect((await op.client.get('/operator')).statusCode).toBe(200);
    const unknown = `ghost-${Date.now()}@ops.test`;
    const login = await new ConsoleClient(t).get('/operator/login');
    expect(login.body).toContain('/operator/forgot-password');
    const known = await forgot(new ConsoleClient(t, '10.2.0.1'), 'operator', op.email);
    const none = await forgot(new ConsoleClient(t, '10.2.0.2'), 'operator', unknown);
    expect([known.statusCode, none.statusCode]).toEqual([200, 200]);
    expect(answerOf(known.body, op.email)).toBe(answerOf(none.body, unknown));
    expect(await queued(unknown)).toBe(0);

    const mail = await smtp.waitFor((x) => x.to.includes(op.email) && /operator console/i.test(x.subject));
    const short = await setThroughLink(new ConsoleClient(t), 'operator', resetLinkOf(mail, 'operator'), 'short');
    expect(short.statusCode).toBe(422);
    const done = await setThroughLink(new ConsoleClient(t), 'operator', resetLinkOf(mail, 'operator'), 'operator new password 9');
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/operator/login?reset=1');
    // The link works once; the old session is over.
    expect((await new ConsoleClient(t).get(pathOf(resetLinkOf(mail, 'operator')))).statusCode).toBe(404);
    expect((await op.client.get('/operator')).statusCode).toBe(303);
    const row = (await t.db.pool.query('SELECT totp_enabled_at FROM operators WHERE id = $1', [op.id])).rows[0];
    expect(row.totp_enabled_at).not.toBeNull();
    const c = new ConsoleClient(t);
    const page = await c.get('/operator/login');
    expect((await c.post('/operator/login', { ...ConsoleClient.formOf(page.body), email: op.email, password: 'operator new password 9' })).headers.location).toBe('/operator/2fa');
    expect((await actions(op.id)).map((a) => a.action)).toEqual(expect.arrayContaining(['operator.password.reset_link', 'operator.password.set']));
  });

  it('a disabled operator gets no link (and the page says the same)', async () => {
    const op = await createOperator(t, 'support');
    await t.app.services.operators.update(op.id, { status: 'disabled' });
    const r = await forgot(new ConsoleClient(t, '10.2.0.3'), 'operator', op.email);
    expect(r.statusCode).toBe(200);
    expect(await queued(op.email)).toBe(0);
  });
});

describe("an admin's reset of another operator", () => {
  it('the operator API mails the link (202, masked), ends their console sessions at once; audited; the link sets the password', async () => {
    const op = await enrolledOperator(t, 'finance');
    expect((await op.client.get('/operator')).statusCode).toBe(200);
    const r = await admin(t, 'POST', `/operators/${op.id}/password-reset`);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ success: true, sent_to: `${op.email[0]}***${op.email.slice(op.email.indexOf('@'))}` });
    expect((await op.client.get('/operator')).statusCode).toBe(303);
    const entry = (await t.db.pool.query("SELECT after FROM audit_log WHERE object_id = $1 AND action = 'operator.password.reset'", [op.id])).rows[0];
    expect(entry.after).toMatchObject({ sessions_ended: 1, valid_minutes: 60 });
    const mail = await smtp.waitFor((x) => x.to.includes(op.email) && /operator console/i.test(x.subject));
    expect(mail.text).toContain('administrator');
    expect((await setThroughLink(new ConsoleClient(t), 'operator', resetLinkOf(mail, 'operator'), 'finance new password 1')).statusCode).toBe(303);
    expect(OP_PASSWORD).not.toBe('finance new password 1');
  });

  it('only an admin may (403 for another role, nothing mailed); 404 for no such operator', async () => {
    const other = await createOperator(t, 'support');
    const { apiToken } = await t.app.services.operators.issueToken((await createOperator(t, 'finance')).id, 'api');
    const r = await t.app.inject({ method: 'POST', url: `/admin/v1/operators/${other.id}/password-reset`, headers: { authorization: `Bearer ${apiToken}` } });
    expect(r.statusCode).toBe(403);
    expect(await queued(other.email)).toBe(0);
    expect((await admin(t, 'POST', '/operators/NoSuchOp1234/password-reset')).status).toBe(404);
  });

  it('the CLI verb operators:password-reset calls that route', () => {
    expect(buildCall(['operators:password-reset', 'Op3Kz8Lm2Qx'])).toMatchObject({ method: 'POST', path: '/operators/Op3Kz8Lm2Qx/password-reset' });
  });
});
