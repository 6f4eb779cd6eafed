import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpServer, startTestMailWorker, resetLinkOf } from '../helpers/smtp.js';
import type { Worker } from '../../src/workers/index.js';
import { admin } from '../admin/helpers.js';
import { totpCode } from '../operator/helpers.js';
import { CabinetClient, MEMBER_PASSWORD, cabinetMerchant, enableTotp, signedIn } from './helpers.js';

/**
 * The cabinet's mail arrives at a real SMTP server: a team invitation carries
 * the link the owner also sees; turning two-factor sign-in on or off tells the account. No log
 * line (requests, workers) carries a one-time link's token or a mail's text.
 */
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let worker: Worker;
const lines: string[] = [];
beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await setupTestApp({ SMTP_URL: smtp.url, LOG_LEVEL: 'info' }, { logStream: { write: (l: string) => { lines.push(l); } } });
  worker = startTestMailWorker(t, { log: pino({ level: 'info' }, { write: (l: string) => { lines.push(l); } }) });
});
afterAll(async () => { await worker?.stop(); await t?.close(); await smtp?.close(); });

describe('cabinet mail', () => {
  it('a team invitation is mailed to the invitee with the link the owner sees; the mailed link sets the password', async () => {
    const m = await cabinetMerchant(t);
    const owner = await signedIn(t, m);
    const page = await owner.get('/cabinet/team');
    const invited = await owner.post('/cabinet/team', { _csrf: CabinetClient.csrfOf(page.body), email: 'Mailed.Dev@Team.test', role: 'developer' });
    expect(invited.statusCode).toBe(200);
    expect(invited.body).toContain('was mailed to');
    const shown = /id="invite-link" readonly value="([^"]+)"/.exec(invited.body)![1]!;
    const mail = await smtp.waitFor((x) => x.to.includes('mailed.dev@team.test'));
    const { name } = (await t.db.pool.query(`SELECT name FROM merchants WHERE id = $1`, [m.merchantId])).rows[0];
    expect(mail.subject).toBe(`You were invited to the merchant cabinet of ${name}`);
    expect(mail.text).toContain(shown);
    expect(mail.text).toContain('"developer"');
    const invitee = new CabinetClient(t);
    const path = new URL(shown).pathname;
    const form = await invitee.get(path);
    expect((await invitee.post(path, { _csrf: CabinetClient.csrfOf(form.body), password: MEMBER_PASSWORD })).statusCode).toBe(303);
    expect((await new CabinetClient(t).login('mailed.dev@team.test', MEMBER_PASSWORD)).statusCode).toBe(303);
    // No log line carries the invitation's token.
    expect(lines.filter((l) => l.includes(path.split('/').at(-1)!))).toEqual([]);
  });

  it('turning two-factor sign-in on and off is mailed to the account', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const { secret } = await enableTotp(c, -1);
    const on = await smtp.waitFor((x) => x.to.includes(m.email) && /turned on/.test(x.subject));
    expect(on.text).toContain('Two-factor sign-in was turned on');
    const page = await c.get('/cabinet/security');
    const off = await c.post('/cabinet/security/totp/disable', { _csrf: CabinetClient.csrfOf(page.body), code: await totpCode(secret, 0) });
    expect(off.statusCode).toBe(303);
    await smtp.waitFor((x) => x.to.includes(m.email) && /turned off/.test(x.subject));
  });

  it('no log line holds a reset link\'s token or a mail\'s text, also when the SMTP server refuses', async () => {
    const m = await cabinetMerchant(t);
    smtp.refuseNext(1, 451);
    expect((await admin(t, 'POST', `/merchants/${m.merchantId}/password-reset`)).status).toBe(202);
    const mail = await smtp.waitFor((x) => x.to.includes(m.email) && /password/i.test(x.subject));
    const link = resetLinkOf(mail);
    const token = new URL(link).searchParams.get('token')!;
    const c = new CabinetClient(t);
    const form = await c.get(new URL(link).pathname + new URL(link).search);
    const done = await c.post('/cabinet/password-reset', { _csrf: CabinetClient.csrfOf(form.body), token, password: 'logged nowhere 12345' });
    expect(done.statusCode).toBe(303);
    const all = lines.join('\n');
    expect(all).toContain('/cabinet/password-reset');
    expect(all).toContain('mail: send failed');
    expect(all).not.toContain(token);
    expect(all).not.toContain('Open this link');
    expect(all).not.toContain(m.email);
  });
});
