import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../lib/crypto.js';
import { FORGOT_LIMITS, SignInGuard } from '../../lib/sign-in-guard.js';
import { newFormSecret } from '../../lib/web-session.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import { writeAudit } from '../../audit/audit.js';
import { ValidationError } from '../../errors.js';
import { MIN_PASSWORD } from '../../domain/merchant/team.service.js';
import { BASE, LOGIN_CSRF_COOKIE, render, type ConsoleRouteOptions } from '../context.js';

const public_ = { consolePublic: true } as const;

/**
 * The console's "Forgot password?" and the page its mailed one-time link opens (public: no
 * session). The request answers the same whether an operator has the address or not, limited as
 * the cabinet's is; setting the password spends the link and ends every console session of the
 * operator. Both steps are audited as the operator.
 */
export default async function consolePasswordResetRoutes(app: FastifyInstance, opts: ConsoleRouteOptions): Promise<void> {
  const resets = app.services.operatorPasswordResets;
  const guard = new SignInGuard(app.services.limits, 'operator-forgot', FORGOT_LIMITS);

  const withCsrf = (reply: FastifyReply) => {
    const pre = newFormSecret();
    reply.setCookie(LOGIN_CSRF_COOKIE, pre, { ...opts.cookieOpts, maxAge: 3600 });
    return pre;
  };
  const csrfOk = (req: FastifyRequest) => {
    const pre = req.cookies[LOGIN_CSRF_COOKIE] ?? '';
    return pre !== '' && safeEqual(formBody(req)._csrf ?? '', pre);
  };
  const forgotPage = (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) =>
    render(req, reply, 'forgot-password', { csrf: withCsrf(reply), ...data });

  app.get('/forgot-password', { config: public_, schema: { hide: true } }, async (req, reply) => forgotPage(req, reply));

  app.post('/forgot-password', { config: public_, schema: { hide: true } }, async (req, reply) => {
    const email = (formBody(req).email ?? '').trim().slice(0, 320);
    if (!csrfOk(req)) { reply.status(403); return forgotPage(req, reply, { error: 'The form has expired; please try again.', values: { email } }); }
    if (!email) { reply.status(422); return forgotPage(req, reply, { error: 'Enter your email.', values: { email } }); }
    if (!(await guard.admit(email, req.ip))) { reply.status(429); return forgotPage(req, reply, { error: 'Too many requests. Wait a few minutes and try again.', values: { email } }); }
    await resets.requestByEmail(email, (c, r) => writeAudit(c, { actor: `operator:${r.operatorId}`, name: r.email, ip: req.ip ?? null }, {
      action: 'operator.password.reset_link', objectType: 'operator', objectId: r.operatorId, before: null, after: { by: 'forgot_password' },
    }));
    return forgotPage(req, reply, {
      sent: `If an active operator signs in with ${email}, a link to set a new password is on its way there. It works once, for an hour.`,
    });
  });

  const gone = (req: FastifyRequest, reply: FastifyReply) => {
    reply.status(404);
    return render(req, reply, 'error', { status: 404, message: 'This password reset link is not valid any more (used, replaced by a newer one, or older than an hour). Ask for a new one on the sign-in page.' });
  };
  const resetPage = async (req: FastifyRequest, reply: FastifyReply, token: string, data: Record<string, unknown> = {}) => {
    const link = await resets.lookup(token);
    if (!link) return gone(req, reply);
    return render(req, reply, 'password-reset', { csrf: withCsrf(reply), email: link.email, min: MIN_PASSWORD, token, ...data });
  };

  app.get('/password-reset', { config: public_, schema: { hide: true } }, async (req, reply) => resetPage(req, reply, queryOf(req).token ?? ''));

  app.post('/password-reset', { config: public_, schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const token = b.token ?? '';
    if (!csrfOk(req)) { reply.status(403); return resetPage(req, reply, token, { error: 'The form has expired; please try again.' }); }
    try {
      const done = await resets.complete(token, b.password ?? '', (c, r) => writeAudit(c, { actor: `operator:${r.operatorId}`, name: r.email, ip: req.ip ?? null }, {
        action: 'operator.password.set', objectType: 'operator', objectId: r.operatorId, before: null, after: { by: 'reset_link', sessions_ended: r.sessionsEnded },
      }));
      if (!done) return gone(req, reply);
      reply.clearCookie(LOGIN_CSRF_COOKIE, { path: BASE });
      return reply.redirect(`${BASE}/login?reset=1`, 303);
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      reply.status(422);
      return resetPage(req, reply, token, { error: Object.values(e.errors).flat().join(' ') });
    }
  });
}
