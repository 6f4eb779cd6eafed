import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../lib/crypto.js';
import { Gate } from '../../lib/gate.js';
import { SignInGuard } from '../../lib/sign-in-guard.js';
import { newFormSecret, safeNext } from '../../lib/web-session.js';
import { queryOf, formBody } from '../../lib/form-body.js';
import { writeAudit, type Actor } from '../../audit/audit.js';
import { newTotpSecret, totpQrDataUrl, totpUri } from '../../domain/operator/two-factor.js';
import { BASE, LOGIN_CSRF_COOKIE, SESSION_COOKIE, render, type ConsoleRouteOptions } from '../context.js';
import type { ConsoleSession } from '../session.js';

const second = { secondFactor: true } as const;

/**
 * Console sign-in: the cabinet's sign-in limits (SignInGuard, per address, per email and
 * address, per email) before any bcrypt round, then the second factor: a TOTP code or a
 * recovery code, or on the first sign-in the TOTP enrolment. The second factor has its own
 * guard, keyed by the operator, so a stolen password alone cannot guess codes for long.
 * Every sign-in, failed sign-in and 2FA change is in the audit trail.
 */
export default async function consoleAuthRoutes(app: FastifyInstance, opts: ConsoleRouteOptions): Promise<void> {
  const { sessions, cookieOpts } = opts;
  const guard = new SignInGuard(app.services.limits, 'operator-sign-in', opts.signInLimits);
  const codeGuard = new SignInGuard(app.services.limits, 'operator-code', { ...opts.signInLimits, perPair: 5, perAccount: 20 });
  const checks = new Gate(4, 500);
  const twoFactor = app.services.operatorTwoFactor;

  const audit = (who: Actor, action: string, objectId: string, after: Record<string, unknown> | null = null) =>
    app.services.audit.record(who, { action, objectType: 'operator', objectId, before: null, after });
  const anonymous = (req: FastifyRequest): Actor => ({ actor: 'anonymous', ip: req.ip ?? null });
  const operatorActor = (req: FastifyRequest, s: ConsoleSession): Actor => ({ actor: `operator:${s.operator.id}`, name: s.operator.email, ip: req.ip ?? null });

  const loginForm = async (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const pre = newFormSecret();
    reply.setCookie(LOGIN_CSRF_COOKIE, pre, { ...cookieOpts, maxAge: 3600 });
    return render(req, reply, 'login', { csrf: pre, next: safeNext(queryOf(req).next ?? formBody(req).next, BASE), ...data });
  };

  app.get('/login', { config: { consolePublic: true }, schema: { hide: true } }, async (req, reply) => {
    const s = await sessions.load(req.cookies[SESSION_COOKIE]);
    if (s?.stage === 'FULL') return reply.redirect(BASE, 303);
    const q = queryOf(req);
    const notice = q.bye ? 'You have signed out.' : q.reset ? 'Your new password is set and every console session was signed out. Sign in with it.' : q.next ? 'Please sign in.' : null;
    return loginForm(req, reply, { notice });
  });

  app.post('/login', { config: { consolePublic: true }, schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const values = { email: b.email ?? '' };
    const pre = req.cookies[LOGIN_CSRF_COOKIE] ?? '';
    if (!pre || !safeEqual(b._csrf ?? '', pre)) {
      reply.status(403);
      return loginForm(req, reply, { error: 'The form has expired; please try again.', values });
    }
    if (!b.email?.trim() || !b.password) {
      reply.status(422);
      return loginForm(req, reply, { error: 'Enter your email and password.', values });
    }
    const email = b.email.trim().slice(0, 320);
    const ticket = await guard.admit(email, req.ip);
    const checked = ticket ? await checks.run(() => sessions.checkPassword(email, b.password!.slice(0, 200))) : null;
    if (!ticket || !checked) {
      reply.status(429);
      return loginForm(req, reply, { error: 'Too many attempts. Wait a few minutes and try again.', values });
    }
    const op = checked.value;
    if (!op || op.status !== 'ACTIVE') {
      // Known or not, the same answer; the trail names the operator when the email is one.
      const id = op?.id ?? (await sessions.idOfEmail(email));
      await audit(anonymous(req), 'operator.sign_in.failed', id ?? email.toLowerCase(), { step: 'password', reason: op ? 'disabled' : 'invalid' });
      reply.status(401);
      return loginForm(req, reply, { error: 'Wrong email or password.', values });
    }
    await guard.succeeded(ticket);
    const cookie = await sessions.create(op.id, 'PASSWORD');
    reply.clearCookie(LOGIN_CSRF_COOKIE, { path: BASE });
    reply.setCookie(SESSION_COOKIE, cookie, cookieOpts);
    const next = safeNext(b.next, BASE);
    return reply.redirect(`${BASE}/2fa${next !== BASE ? `?next=${encodeURIComponent(next)}` : ''}`, 303);
  });

  /** The second factor: a code form, or the enrolment when the operator has no TOTP yet. */
  app.get('/2fa', { config: second, schema: { hide: true } }, async (req, reply) => {
    const s = req.console.session!;
    if (!s.operator.totpEnabled) return enrolPage(req, reply, s);
    return render(req, reply, 'second-factor', { next: safeNext(queryOf(req).next, BASE) });
  });

  const enrolPage = async (req: FastifyRequest, reply: FastifyReply, s: ConsoleSession, data: Record<string, unknown> = {}) => {
    // One secret per half-signed-in session, kept (encrypted) until a code confirms it.
    let secret: string;
    if (s.pendingTotpEnc) secret = twoFactor.openSecret(s.pendingTotpEnc);
    else {
      secret = newTotpSecret();
      await sessions.setPendingTotp(s.id, twoFactor.sealSecret(secret));
    }
    const uri = totpUri(s.operator.email, secret);
    return render(req, reply, 'enrol', { secret, uri, qr: await totpQrDataUrl(uri), email: s.operator.email, ...data });
  };

  const codeRefused = async (req: FastifyRequest, reply: FastifyReply, s: ConsoleSession, step: string) => {
    await audit(operatorActor(req, s), 'operator.sign_in.failed', s.operator.id, { step });
    reply.status(401);
    const error = 'That code is not right (or was used already). Try the current code.';
    return s.operator.totpEnabled ? render(req, reply, 'second-factor', { error, next: safeNext(formBody(req).next, BASE) }) : enrolPage(req, reply, s, { error });
  };

  const throttled = (req: FastifyRequest, reply: FastifyReply) => {
    reply.status(429);
    return render(req, reply, 'second-factor', { error: 'Too many wrong codes. Wait a few minutes and try again.', next: BASE });
  };

  const signedIn = async (req: FastifyRequest, reply: FastifyReply, s: ConsoleSession) => {
    const cookie = await sessions.promote(s);
    reply.setCookie(SESSION_COOKIE, cookie, cookieOpts);
  };

  app.post('/2fa', { config: second, schema: { hide: true } }, async (req, reply) => {
    const s = req.console.session!;
    if (!s.operator.totpEnabled) return reply.redirect(`${BASE}/2fa`, 303);
    const b = formBody(req);
    const ticket = await codeGuard.admit(s.operator.id, req.ip);
    if (!ticket) return throttled(req, reply);
    const factor = await twoFactor.check(s.operator.id, b.code ?? '', (c, r) => writeAudit(c, operatorActor(req, s), {
      action: 'operator.sign_in', objectType: 'operator', objectId: s.operator.id, before: null, after: { factor: r.factor },
    }));
    if (!factor) return codeRefused(req, reply, s, 'totp');
    await codeGuard.succeeded(ticket);
    await signedIn(req, reply, s);
    return reply.redirect(safeNext(b.next, BASE), 303);
  });

  app.post('/2fa/enrol', { config: second, schema: { hide: true } }, async (req, reply) => {
    const s = req.console.session!;
    if (s.operator.totpEnabled || !s.pendingTotpEnc) return reply.redirect(`${BASE}/2fa`, 303);
    const ticket = await codeGuard.admit(s.operator.id, req.ip);
    if (!ticket) return throttled(req, reply);
    const who = operatorActor(req, s);
    const r = await twoFactor.enable(s.operator.id, twoFactor.openSecret(s.pendingTotpEnc), formBody(req).code ?? '', async (c) => {
      await writeAudit(c, who, { action: 'operator.totp.enable', objectType: 'operator', objectId: s.operator.id, before: { totp_enabled: false }, after: { totp_enabled: true, recovery_codes_issued: 10 } });
      await writeAudit(c, who, { action: 'operator.sign_in', objectType: 'operator', objectId: s.operator.id, before: null, after: { factor: 'totp', enrolled: true } });
    });
    if (!r) return codeRefused(req, reply, s, 'totp_enrol');
    await codeGuard.succeeded(ticket);
    await signedIn(req, reply, s);
    req.console.session = null;
    // Shown once, in the answer to this POST (as the cabinet shows a new API token); not stored.
    return render(req, reply, 'recovery-codes', { codes: r.recoveryCodes });
  });

  app.post('/logout', { config: { permission: 'read' }, schema: { hide: true } }, async (req, reply) => {
    await sessions.destroy(req.console.session!.id);
    reply.clearCookie(SESSION_COOKIE, { path: BASE });
    return reply.redirect(`${BASE}/login?bye=1`, 303);
  });
}
