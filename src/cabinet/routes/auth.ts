import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../lib/crypto.js';
import { BASE, LOGIN_CSRF_COOKIE, MODE_COOKIE, SESSION_COOKIE, render, type CabinetRouteOptions } from '../context.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import { SignInGuard } from '../sign-in-guard.js';
import { Gate } from '../../lib/gate.js';
import { safeNext as sharedSafeNext } from '../../lib/web-session.js';

/** Only same-cabinet paths are followed after sign-in (src/lib/web-session.ts). */
const safeNext = (next: string | undefined): string => sharedSafeNext(next, BASE);

export default async function authRoutes(app: FastifyInstance, opts: CabinetRouteOptions): Promise<void> {
  const { sessions, cookieOpts } = opts;
  const guard = new SignInGuard(app.services.limits, 'cabinet-sign-in', opts.signInLimits);
  // Password checks in flight: as many as bcrypt has threads (libuv's pool, 4 by default), so a
  // burst of sign-ins holds at most that many database connections and queues in memory.
  const checks = new Gate(4, 500);

  const loginForm = async (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    // Sign-in CSRF: a double-submit token, since there is no session yet.
    const pre = randomBytes(24).toString('base64url');
    reply.setCookie(LOGIN_CSRF_COOKIE, pre, { ...cookieOpts, maxAge: 3600 });
    return render(req, reply, 'login', { csrf: pre, next: safeNext(queryOf(req).next ?? formBody(req).next), ...data });
  };

  app.get('/login', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => {
    const s = await sessions.load(req.cookies[SESSION_COOKIE]);
    if (s && s.merchant.status === 'ACTIVE') return reply.redirect(BASE, 303);
    const q = queryOf(req);
    if (q.blocked) return loginForm(req, reply, { error: req.cabinet.t('login.banned') });
    const notice = q.bye ? req.cabinet.t('login.signedout') : q.reset ? req.cabinet.t('login.password_set') : q.expired ? req.cabinet.t('login.expired') : null;
    return loginForm(req, reply, { notice });
  });

  app.post('/login', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => {
    const { t } = req.cabinet;
    const b = formBody(req);
    const pre = req.cookies[LOGIN_CSRF_COOKIE] ?? '';
    if (!pre || !safeEqual(b._csrf ?? '', pre)) {
      reply.status(403);
      return loginForm(req, reply, { error: t('csrf.invalid'), values: { email: b.email ?? '' } });
    }
    const fields: Record<string, string> = {};
    if (!b.email?.trim()) fields.email = t('error.required');
    if (!b.password) fields.password = t('error.required');
    if (Object.keys(fields).length > 0) {
      reply.status(422);
      return loginForm(req, reply, { error: t('common.fix'), errors: { fields }, values: { email: b.email ?? '' } });
    }
    const email = b.email!.slice(0, 320);
    // Refused before any hashing, with the same answer whether the email exists or not.
    const ticket = await guard.admit(email, req.ip);
    if (!ticket) {
      reply.status(429);
      return loginForm(req, reply, { error: t('login.throttled'), values: { email: b.email ?? '' } });
    }
    const checked = await checks.run(() => sessions.login(email, b.password!.slice(0, 200)));
    if (!checked) {
      reply.status(429);
      return loginForm(req, reply, { error: t('login.throttled'), values: { email: b.email ?? '' } });
    }
    const r = checked.value;
    // Every sign-in and failed sign-in of a known account is in the audit trail; an
    // unknown email is not (it names no object, and the sign-in limits already count it).
    const account = r.ok ? r : r.account;
    // With TOTP on, the sign-in is recorded when the code is given (src/cabinet/routes/two-factor.ts).
    if (account && !(r.ok && r.secondFactor)) {
      await app.services.audit.record({
        actor: r.ok ? (r.userId ? `merchant-user:${r.userId}` : `merchant:${r.merchantId}`) : 'anonymous', name: r.ok ? email.trim().toLowerCase() : null, ip: req.ip ?? null,
      }, {
        action: r.ok ? 'merchant.sign_in' : 'merchant.sign_in.failed', objectType: account.userId ? 'merchant_user' : 'merchant',
        objectId: account.userId ?? account.merchantId, before: null, after: r.ok ? null : { reason: r.reason },
      });
    }
    if (!r.ok) {
      reply.status(401);
      return loginForm(req, reply, { error: r.reason === 'banned' ? t('login.banned') : t('login.invalid'), values: { email: b.email ?? '' } });
    }
    await guard.succeeded(ticket);
    reply.clearCookie(LOGIN_CSRF_COOKIE, { path: BASE });
    // Every sign-in starts in live mode: a test switch left by an earlier session (another team
    // member on this browser, an expired session) must not show test data as if it were live.
    reply.clearCookie(MODE_COOKIE, { path: BASE });
    reply.setCookie(SESSION_COOKIE, r.cookie, cookieOpts);
    if (r.secondFactor) {
      const next = safeNext(b.next);
      return reply.redirect(`${BASE}/2fa${next !== BASE ? `?next=${encodeURIComponent(next)}` : ''}`, 303);
    }
    return reply.redirect(safeNext(b.next), 303);
  });

  app.post('/logout', { config: { cabinetEnrolment: true }, schema: { hide: true } }, async (req, reply) => {
    await sessions.destroy(req.cabinet.session!.id);
    reply.clearCookie(SESSION_COOKIE, { path: BASE });
    reply.clearCookie(MODE_COOKIE, { path: BASE });
    return reply.redirect(`${BASE}/login?bye=1`, 303);
  });
}
