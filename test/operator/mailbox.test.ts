import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { startTestMailWorker } from '../helpers/smtp.js';
import { startMailWorker } from '../../src/workers/mail.js';
import { CabinetClient, PASSWORD, cabinetMerchant } from '../cabinet/helpers.js';
import { adminApi, enrolledOperator, moderatedPayout, type OperatorFixture } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Issue 27 items 1-2 in the console: a password reset says where the link went, never a
 * password; without SMTP_URL in the sandbox profile mail is kept in a dev mailbox that admins
 * read at /operator/mailbox (its texts hold one-time links: not for other roles); in production
 * without SMTP_URL a reset is refused (503) rather than promised, and the worker warns once.
 */
let t: TestApp;
const ops: Partial<Record<'admin' | 'support' | 'finance', OperatorFixture>> = {};
beforeAll(async () => {
  t = await setupTestApp();
  for (const r of ['admin', 'support', 'finance'] as const) ops[r] = await enrolledOperator(t, r);
});
afterAll(async () => { await t?.close(); });

/** Runs the mail worker until nothing is pending (the sandbox's "delivery" into the dev mailbox). */
async function drain(): Promise<void> {
  const w = startTestMailWorker(t);
  try {
    await waitFor(async () => (await t.db.pool.query(`SELECT count(*)::int AS n FROM mail_outbox WHERE status = 'PENDING'`)).rows[0].n === 0, 'no mail left pending');
  } finally { await w.stop(); }
}

describe('the console\'s password reset', () => {
  it('says "A reset link was sent to o***@..." and shows no password; the dev mailbox holds the link, which works', async () => {
    const m = await cabinetMerchant(t);
    const page = `/operator/merchants/${m.merchantId}`;
    const r = await ops.support!.client.act(page, `${page}/password-reset`, {});
    expect(r.statusCode).toBe(303);
    const shown = await ops.support!.client.get(r.headers.location as string);
    const masked = `${m.email[0]}***${m.email.slice(m.email.indexOf('@'))}`;
    expect(shown.body).toContain(`A reset link was sent to ${masked}.`);
    expect(shown.body).not.toContain('secret-once');

    await drain();
    const box = await ops.admin!.client.get('/operator/mailbox');
    expect(box.statusCode).toBe(200);
    expect(box.body).toContain('id="dev-mailbox"');
    const link = /(http:\/\/pay\.test\/cabinet\/password-reset\?token=[A-Za-z0-9_-]+)/.exec(box.body)?.[1];
    expect(link).toBeDefined();
    expect((await t.db.pool.query('SELECT status FROM mail_outbox WHERE to_address = $1', [m.email])).rows).toEqual([{ status: 'KEPT' }]);

    const c = new CabinetClient(t);
    const form = await c.get(new URL(link!).pathname + new URL(link!).search);
    expect(form.statusCode).toBe(200);
    const token = /name="token" value="([^"]+)"/.exec(form.body)![1]!;
    const done = await c.post('/cabinet/password-reset', { _csrf: CabinetClient.csrfOf(form.body), token, password: 'set from the mailbox 1' });
    expect(done.headers.location).toBe('/cabinet/login?reset=1');
    expect((await c.get('/cabinet/login?reset=1')).body).toContain('Your new password is set');
    expect((await new CabinetClient(t).login(m.email, PASSWORD)).statusCode).toBe(401);
  });

  it('the mailbox is for admins only (its texts hold one-time links): 403 for support and finance, and only admins see it in the menu', async () => {
    for (const role of ['support', 'finance'] as const) {
      expect((await ops[role]!.client.get('/operator/mailbox')).statusCode, role).toBe(403);
      expect((await ops[role]!.client.get('/operator')).body, role).not.toContain('/operator/mailbox');
    }
    expect((await ops.admin!.client.get('/operator')).body).toContain('/operator/mailbox');
  });

  it('payout moderation results are mailed to the merchant\'s owner address', async () => {
    const a = await moderatedPayout(t);
    const d = await moderatedPayout(t);
    await ops.finance!.client.act('/operator/payouts', `/operator/payouts/${a.payoutId}/approve`);
    await ops.finance!.client.act('/operator/payouts', `/operator/payouts/${d.payoutId}/decline`, { reason: 'the card holder does not match' });
    const email = async (id: string) => (await adminApi(t, 'GET', `/merchants/${id}`)).email as string;
    const mails = (await t.app.services.mail.list()).filter((x) => x.kind.startsWith('payout_'));
    expect(mails.map((x) => [x.kind, x.to, x.merchant_id])).toEqual([
      ['payout_declined', await email(d.merchantId), d.merchantId],
      ['payout_approved', await email(a.merchantId), a.merchantId],
    ]);
    expect(mails[0]!.text).toContain('the card holder does not match');
    expect(mails[0]!.text).toContain('RUB\u00a0600.00');
  });
});

describe('production without SMTP_URL', () => {
  it('a password reset is refused with 503 (nothing created, nothing queued); the mail worker warns once and sends nothing', async () => {
    const p = await setupTestApp({ PAYMENTS_PROFILE: 'production' });
    try {
      const m = await cabinetMerchant(p);
      const r = await p.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/password-reset`, headers: { authorization: 'Bearer test-admin-token-0123456789abcdef' } });
      expect(r.statusCode).toBe(503);
      expect(r.json()).toEqual({ success: false, message: expect.stringContaining('SMTP_URL') });
      expect((await p.db.pool.query('SELECT count(*)::int AS n FROM cabinet_password_resets')).rows[0].n).toBe(0);
      expect((await p.db.pool.query('SELECT count(*)::int AS n FROM mail_outbox')).rows[0].n).toBe(0);

      const lines: string[] = [];
      const log = pino({ level: 'info' }, { write: (l: string) => { lines.push(l); } });
      await p.db.pool.query(`INSERT INTO mail_outbox (kind, to_address, subject, body_enc) VALUES ('payout_approved', 'x@example.test', 's', NULL)`);
      const w = startMailWorker({ config: p.config, db: p.db, services: p.app.services, log }, { pollMs: 10 });
      await waitFor(() => lines.some((l) => l.includes('SMTP_URL is not set')), 'the mail worker to warn that SMTP_URL is not set');
      // Time is the subject: the worker polls every 10 ms, so these 100 ms are several more polls
      // that must not warn again.
      await new Promise((res) => setTimeout(res, 100));
      await w.stop();
      expect(lines.filter((l) => l.includes('SMTP_URL is not set'))).toHaveLength(1);
      expect((await p.db.pool.query('SELECT status FROM mail_outbox')).rows).toEqual([{ status: 'PENDING' }]);
    } finally { await p.close(); }
  });
});

describe('the dev mailbox order', () => {
  it('is newest first by the mail\'s number, not its text (issue 30: 99 before 100 was the bug)', async () => {
    await t.db.pool.query(`SELECT setval(pg_get_serial_sequence('mail_outbox', 'id'), GREATEST(95, (SELECT max(id) FROM mail_outbox)))`);
    for (let i = 0; i < 8; i++) {
      await t.app.services.mail.enqueue(t.db.pool, { merchantId: null, kind: 'team_invite', to: `order-${i}@example.test`, subject: `order ${i}`, text: 'x' });
    }
    const ids = (await t.app.services.mail.list(500)).map((x) => Number(x.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });
});
