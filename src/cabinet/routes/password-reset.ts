import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../lib/crypto.js';
import { newFormSecret } from '../../lib/web-session.js';
import { writeAudit } from '../../audit/audit.js';
import { MIN_PASSWORD } from '../../domain/merchant/team.service.js';
import { BASE, LOGIN_CSRF_COOKIE, formErrors, render, type CabinetRouteOptions } from '../context.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import type { Lang } from '../../lib/i18n.js';
import { FORGOT_LIMITS, SignInGuard } from '../sign-in-guard.js';

// The page's words (kept beside the page, as the team page does).
const WORDS: Record<Lang, Record<string, string>> = {
  en: {
    title: 'Set a new password', text: 'Choose a new password for {email}, at least {n} characters. Every session of this account is signed out when it is set.',
    password: 'New password', submit: 'Set the password',
    gone: 'This password reset link is not valid any more (used, replaced by a newer one, or older than an hour). Ask support for a new one.',
    'forgot.title': 'Forgot password?', 'forgot.text': 'Enter the email you sign in with. We will mail a link to set a new password; it works once, for an hour.',
    'forgot.email': 'Email', 'forgot.submit': 'Send the link', 'forgot.back': 'Back to sign-in',
    'forgot.sent': 'If an account signs in with {email}, a link to set a new password is on its way there. It works once, for an hour. No mail? Check the address and the spam folder.',
    'forgot.throttled': 'Too many requests. Wait a few minutes and try again.', 'forgot.required': 'Enter your email.',
  },
  ru: {
    title: 'Новый пароль', text: 'Задайте новый пароль для {email}, не короче {n} символов. Когда он будет задан, все сеансы этого аккаунта завершатся.',
    password: 'Новый пароль', submit: 'Задать пароль',
    gone: 'Ссылка для смены пароля больше не действует (использована, заменена новой или старше часа). Попросите поддержку прислать новую.',
    'forgot.title': 'Забыли пароль?', 'forgot.text': 'Укажите адрес, с которым вы входите. Мы пришлём ссылку для нового пароля; она действует один раз, в течение часа.',
    'forgot.email': 'Эл. почта', 'forgot.submit': 'Прислать ссылку', 'forgot.back': 'Назад ко входу',
    'forgot.sent': 'Если с адресом {email} входят в кабинет, ссылка для нового пароля уже отправлена туда. Она действует один раз, в течение часа. Письма нет? Проверьте адрес и папку «Спам».',
    'forgot.throttled': 'Слишком много запросов. Подождите несколько минут и попробуйте снова.', 'forgot.required': 'Укажите адрес эл. почты.',
  },
};
const words = (lang: Lang) => (k: string, vars: Record<string, string | number> = {}) =>
  (WORDS[lang][k] ?? k).replace(/\{(\w+)\}/g, (_, v: string) => String(vars[v] ?? ''));

/**
 * The page a mailed password reset link opens (public: no session). The token
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

  // "Forgot password?": the same answer whether an account has the address or not (only the
  // mailbox learns it); audited as the account when there is one.
  const forgotGuard = new SignInGuard(app.services.limits, 'cabinet-forgot', FORGOT_LIMITS);
  const forgotForm = (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const pre = newFormSecret();
    reply.setCookie(LOGIN_CSRF_COOKIE, pre, { ...opts.cookieOpts, maxAge: 3600 });
    return render(req, reply, 'forgot-password', { csrf: pre, w: words(req.cabinet.lang), ...data });
  };

  app.get('/forgot-password', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => forgotForm(req, reply));

  app.post('/forgot-password', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const w = words(req.cabinet.lang);
    const email = (b.email ?? '').trim().slice(0, 320);
    const values = { email };
    const pre = req.cookies[LOGIN_CSRF_COOKIE] ?? '';
    if (!pre || !safeEqual(b._csrf ?? '', pre)) { reply.status(403); return forgotForm(req, reply, { errors: { top: req.cabinet.t('csrf.invalid'), fields: {} }, values }); }
    if (!email) { reply.status(422); return forgotForm(req, reply, { errors: { top: req.cabinet.t('common.fix'), fields: { email: w('forgot.required') } }, values }); }
    if (!(await forgotGuard.admit(email, req.ip))) { reply.status(429); return forgotForm(req, reply, { errors: { top: w('forgot.throttled'), fields: {} }, values }); }
    await passwordResets.requestByEmail(email, (c, a) => writeAudit(c, {
      actor: a.userId ? `merchant-user:${a.userId}` : `merchant:${a.merchantId}`, name: a.email, ip: req.ip ?? null,
    }, {
      action: 'merchant.password.reset_link', objectType: a.userId ? 'merchant_user' : 'merchant', objectId: a.userId ?? a.merchantId,
      before: null, after: { by: 'forgot_password', ...(a.userId ? { merchant_id: a.merchantId } : {}) },
    }));
    return forgotForm(req, reply, { sent: w('forgot.sent', { email }), values: {} });
  });

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
