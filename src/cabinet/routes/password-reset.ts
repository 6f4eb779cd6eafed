import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../lib/crypto.js';
import { newFormSecret } from '../../lib/web-session.js';
import { writeAudit } from '../../audit/audit.js';
import { MIN_PASSWORD } from '../../domain/merchant/team.service.js';
import { BASE, LOGIN_CSRF_COOKIE, formErrors, render, type CabinetRouteOptions } from '../context.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import type { Lang } from '../i18n.js';

// The page's words (kept beside the page, as the team page does).
const WORDS: Record<Lang, Record<string, string>> = {
  en: {
    title: 'Set a new password', text: 'Choose a new password for {email}, at least {n} characters. Every session of this account is signed out when it is set.',
    password: 'New password', submit: 'Set the password',
    gone: 'This password reset link is not valid any more (used, replaced by a newer one, or older than an hour). Ask support for a new one.',
  },
  ru: {
    title: 'Новый пароль', text: 'Задайте новый пароль для {email}, не короче {n} символов. Когда он будет задан, все сеансы этого аккаунта завершатся.',
    password: 'Новый пароль', submit: 'Задать пароль',
    gone: 'Ссылка для смены пароля больше не действует (использована, заменена новой или старше часа). Попросите поддержку прислать новую.',
  },
};
const words = (lang: Lang) => (k: string, vars: Record<string, string | number> = {}) =>
  (WORDS[lang][k] ?? k).replace(/\{(\w+)\}/g, (_, v: string) => String(vars[v] ?? ''));

/**
 * The page a mailed password reset link opens (public: no session; issue 27 item 1). The token
 * is in the query string (request logs keep only the path) and then in the form's body; the
 * form is protected by a double-submit cookie as the sign-in form is. Setting the password
 * spends the link and ends every session of the account; audited as the account itself.
 */
export default async function passwordResetRoutes(app: FastifyInstance, opts: CabinetRouteOptions): Promise<void> {
  const { passwordResets } = app.services;

  const gone = (req: FastifyRequest, reply: FastifyReply) => {
    reply.status(404);
    return render(req, reply, 'error', { status: 404, message: words(req.cabinet.lang)('gone') });
  };

  const form = async (req: FastifyRequest, reply: FastifyReply, token: string, data: Record<string, unknown> = {}) => {
    const link = await passwordResets.lookup(token);
    if (!link) return gone(req, reply);
    const pre = newFormSecret();
    reply.setCookie(LOGIN_CSRF_COOKIE, pre, { ...opts.cookieOpts, maxAge: 3600 });
    return render(req, reply, 'password-reset', { csrf: pre, w: words(req.cabinet.lang), email: link.email, min: MIN_PASSWORD, token, ...data });
  };

  app.get('/password-reset', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => form(req, reply, queryOf(req).token ?? ''));

  app.post('/password-reset', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const token = b.token ?? '';
    const pre = req.cookies[LOGIN_CSRF_COOKIE] ?? '';
    if (!pre || !safeEqual(b._csrf ?? '', pre)) { reply.status(403); return form(req, reply, token, { errors: { top: req.cabinet.t('csrf.invalid'), fields: {} } }); }
    try {
      const done = await passwordResets.complete(token, b.password ?? '', (c, a) => writeAudit(c, {
        actor: a.userId ? `merchant-user:${a.userId}` : `merchant:${a.merchantId}`, ip: req.ip ?? null,
      }, {
        action: 'merchant.password.set', objectType: a.userId ? 'merchant_user' : 'merchant', objectId: a.userId ?? a.merchantId,
        before: null, after: { by: 'reset_link', sessions_ended: a.sessionsEnded, ...(a.userId ? { merchant_id: a.merchantId } : {}) },
      }));
      if (!done) return gone(req, reply);
      reply.clearCookie(LOGIN_CSRF_COOKIE, { path: BASE });
      return reply.redirect(`${BASE}/login?reset=1`, 303);
    } catch (e) {
      reply.status(422);
      return form(req, reply, token, { errors: formErrors(req, e) });
    }
  });
}
