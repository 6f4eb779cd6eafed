import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import view from '@fastify/view';
import { templates } from '../lib/html.js';
import { safeEqual } from '../lib/crypto.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { isDatabaseUnavailable } from '../db/database-error.js';
import { UNAVAILABLE_RETRY_AFTER_S } from '../plugins/error-handler.js';
import { isMalformedBody } from '../plugins/bad-input.js';
import { pickLang, translator } from './i18n.js';
import { BASE, LOGIN_CSRF_COOKIE, MODE_COOKIE, SESSION_COOKIE, render } from './context.js';
import { formBody } from '../lib/form-body.js';
export { LOGIN_CSRF_COOKIE, SESSION_COOKIE };
import { SessionStore, mustEnrolTwoFactor } from './session.js';
import { FormTokens } from './forms.js';
import { cabinetRoutePermission, teamAllows } from './roles.js';
import { SIGN_IN_LIMITS } from './sign-in-guard.js';
import { installPageHeaders } from '../lib/web-session.js';
import type { CabinetRouteOptions } from './context.js';
import authRoutes from './routes/auth.js';
import dashboardRoutes from './routes/dashboard.js';
import billRoutes from './routes/bills.js';
import paymentRoutes from './routes/payments.js';
import payoutRoutes from './routes/payouts.js';
import shopRoutes from './routes/shops.js';
import shopCreateRoutes from './routes/shop-new.js';
import cardRoutes from './routes/cards.js';
import webhookRoutes from './routes/webhooks.js';
import apiRoutes from './routes/api.js';
import accountRoutes from './routes/accounts.js';
import modeRoutes from './routes/mode.js';
import teamRoutes from './routes/team.js';
import twoFactorRoutes from './routes/two-factor.js';
import passwordResetRoutes from './routes/password-reset.js';

const VIEWS = fileURLToPath(new URL('./views', import.meta.url));
const ASSETS = {
  'app.css': { type: 'text/css; charset=utf-8', body: readFileSync(fileURLToPath(new URL('./assets/app.css', import.meta.url))) },
  'app.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(fileURLToPath(new URL('./assets/app.js', import.meta.url))) },
  'payout-widget.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(fileURLToPath(new URL('./assets/payout-widget.js', import.meta.url))) },
} as const;



/** Merchant cabinet, /cabinet/*: server-rendered pages over the same service classes as the API. */
export default async function cabinetRoutes(app: FastifyInstance): Promise<void> {
  const secure = app.config.publicBaseUrl.startsWith('https://');
  const sessions = new SessionStore(app.db);
  const forms = new FormTokens(app.db);
  app.decorateRequest('cabinet', null as never);

  await app.register(cookie);
  await app.register(view, {
    engine: { eta: templates(VIEWS) },
    root: VIEWS,
    production: true,
    propertyName: 'cabinetView',
  });

  const cookieOpts = { path: BASE, httpOnly: true, sameSite: 'lax' as const, secure };

  app.addHook('onRequest', async (req, reply) => {
    const { lang, fromQuery } = pickLang(req);
    if (fromQuery) reply.setCookie('cab_lang', lang, { ...cookieOpts, maxAge: 365 * 86400 });
    req.cabinet = { lang, t: translator(lang), session: null };
  });

  app.addHook('preHandler', async (req, reply) => {
    if (req.routeOptions.config.cabinetPublic) return;
    const s = await sessions.load(req.cookies[SESSION_COOKIE]);
    if (!s || s.merchant.status === 'BANNED') {
      if (s) await sessions.destroy(s.id);
      reply.clearCookie(SESSION_COOKIE, { path: BASE });
      // "Your session has expired" only for a browser that had a session: a first visit (no
      // cookie) is simply asked to sign in.
      // A banned merchant's session is ended and the sign-in page says the account is blocked,
      // not that the session expired.
      const params = new URLSearchParams();
      if (s) params.set('blocked', '1');
      else {
        if (req.method === 'GET') params.set('next', req.url);
        if (req.cookies[SESSION_COOKIE]) params.set('expired', '1');
      }
      const qs = params.toString();
      return reply.redirect(`${BASE}/login${qs ? `?${qs}` : ''}`, 303);
    }
    req.cabinet.session = s;
    // A right password with TOTP on reaches only the code page until the code is given.
    const secondFactorRoute = !!req.routeOptions.config.cabinetSecondFactor;
    if (s.stage === 'PASSWORD' && !secondFactorRoute) return reply.redirect(`${BASE}/2fa`, 303);
    if (s.stage === 'FULL' && secondFactorRoute) return reply.redirect(BASE, 303);
    // The team requires 2FA and this account has none: the security page (to set it up) and
    // sign-out only, whatever the URL or method; nothing else runs.
    if (mustEnrolTwoFactor(s) && !req.routeOptions.config.cabinetEnrolment) return reply.redirect(`${BASE}/security?required=1`, 303);
    if (req.cookies[MODE_COOKIE] === 'test') {
      req.cabinet.mode = 'test';
      req.cabinet.testMerchantId = (await app.services.merchants.ensureTestTwin(s.merchant.id)).twin.id;
    }
    // A team member's role (src/cabinet/roles.ts), checked before any handler: 403, nothing changes.
    if (!teamAllows(s, cabinetRoutePermission(req))) return errorPage(req, reply, 403, req.cabinet.t('error.unauthorized'));
    if (req.method === 'POST') {
      // Single-use form tokens (src/cabinet/forms.ts): a token sent twice does nothing the
      // second time and lands on the page the form came from.
      const used = await forms.consume(s, formBody(req)._csrf ?? '');
      if (used.result === 'invalid') return csrfRefused(req, reply);
      if (used.result === 'replay') {
        const to = req.routeOptions.config.cabinetReplayTo;
        return reply.redirect(to ? `${BASE}${to.path}?ok=${to.ok}` : `${backTo(req)}?ok=common.already_sent`, 303);
      }
      req.cabinet.formNonce = used.nonce;
    }
  });

  // A submission answered with an error (the form shown again with its messages) may be sent
  // again. Released before the answer leaves (onSend, not onResponse): a browser quick to send
  // the corrected form must not find its token still spent.
  app.addHook('onSend', async (req, reply, payload) => {
    const nonce = req.cabinet?.formNonce;
    if (nonce && reply.statusCode >= 400) await forms.release(nonce).catch((err) => req.log.warn({ err }, 'form token release'));
    return payload;
  });

  // Nothing inline: scripts and styles come from /cabinet/assets only (src/lib/web-session.ts).
  installPageHeaders(app);

  app.get('/assets/:file', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => {
    const a = ASSETS[(req.params as { file: string }).file as keyof typeof ASSETS];
    if (!a) throw new NotFoundError();
    return reply.type(a.type).header('cache-control', 'public, max-age=3600').send(a.body);
  });

  app.setNotFoundHandler(async (req, reply) => {
    if (!req.cabinet) req.cabinet = { lang: 'en', t: translator('en'), session: null };
    return errorPage(req, reply, 404, req.cabinet.t('error.not_found'));
  });
  app.setErrorHandler(async (err, req, reply) => {
    if (!req.cabinet) req.cabinet = { lang: 'en', t: translator('en'), session: null };
    if (err instanceof NotFoundError) return errorPage(req, reply, 404, req.cabinet.t('error.not_found'));
    if (err instanceof ValidationError || isMalformedBody(err, req)) return errorPage(req, reply, 422, req.cabinet.t('error.general'));
    const status = (err as { statusCode?: number }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) return errorPage(req, reply, status, req.cabinet.t('error.general'));
    if (isDatabaseUnavailable(err)) {
      reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
      return errorPage(req, reply, 503, req.cabinet.t('error.general'));
    }
    req.log.error({ err }, 'cabinet error');
    return errorPage(req, reply, 500, req.cabinet.t('error.general'));
  });

  const opts: CabinetRouteOptions = {
    sessions, cookieOpts,
    signInLimits: { ...SIGN_IN_LIMITS, perAddress: app.config.loginAttemptsPerIp, perAccount: app.config.loginFailuresPerAccount },
  };
  await app.register(authRoutes, opts);
  await app.register(dashboardRoutes);
  await app.register(billRoutes, { prefix: '/bills' });
  await app.register(paymentRoutes, { prefix: '/payments' });
  await app.register(payoutRoutes, { prefix: '/payouts' });
  await app.register(shopRoutes, { prefix: '/shops' });
  await app.register(shopCreateRoutes, { prefix: '/shops' });
  await app.register(webhookRoutes, { prefix: '/webhooks' });
  await app.register(cardRoutes, { prefix: '/cards' });
  await app.register(apiRoutes, { prefix: '/api' });
  await app.register(accountRoutes, { prefix: '/accounts' });
  await app.register(modeRoutes, { ...opts, prefix: '/mode' });
  await app.register(teamRoutes, { ...opts, prefix: '/team' });
  await app.register(twoFactorRoutes, opts);
  await app.register(passwordResetRoutes, opts);
}

function errorPage(req: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  reply.status(status);
  return render(req, reply, 'error', { status, message });
}

/**
 * Where a refused replay goes: the cabinet page the form was on (the Referer's path, kept only
 * when it is a plain /cabinet path: the redirect stays on this origin), else the dashboard.
 */
function backTo(req: FastifyRequest): string {
  try {
    const ref = new URL(String(req.headers.referer ?? ''));
    if (/^\/cabinet(?:\/[A-Za-z0-9_-]+)*$/.test(ref.pathname)) return ref.pathname;
  } catch { /* no or bad Referer */ }
  return BASE;
}

function csrfRefused(req: FastifyRequest, reply: FastifyReply) {
  return errorPage(req, reply, 403, req.cabinet.t('csrf.invalid'));
}

