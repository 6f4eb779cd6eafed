import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import view from '@fastify/view';
import { templates } from '../lib/html.js';
import { safeEqual } from '../lib/crypto.js';
import { DomainError, NotFoundError, UnauthorizedActionError, ValidationError, ConflictError } from '../errors.js';
import { isMalformedBody } from '../plugins/bad-input.js';
import { UnsafeUrlError } from '../outbox/url-guard.js';
import { isDatabaseUnavailable } from '../db/database-error.js';
import { UNAVAILABLE_RETRY_AFTER_S } from '../plugins/error-handler.js';
import { allows, routePermission } from '../backoffice/permissions.js';
import { formBody } from '../lib/form-body.js';
import { SIGN_IN_LIMITS } from '../lib/sign-in-guard.js';
import { installPageHeaders } from '../lib/web-session.js';
import { BASE, SESSION_COOKIE, render, type ConsoleRouteOptions } from './context.js';
import { OperatorSessionStore } from './session.js';
import authRoutes from './routes/auth.js';
import pageRoutes from './routes/pages.js';
import attentionRoutes from './routes/attention.js';
import onboardingRoutes from './routes/onboarding.js';
import connectorRoutes from './routes/connectors.js';
import passwordResetRoutes from './routes/password-reset.js';
import operatorRoutes from './routes/operators.js';
import holdRoutes from './routes/holds.js';
import shopRoutes from './routes/shops.js';

const VIEWS = fileURLToPath(new URL('./views', import.meta.url));
const asset = (rel: string) => readFileSync(fileURLToPath(new URL(rel, import.meta.url)));
// The cabinet's stylesheet and script, and the console's few additions.
const ASSETS = {
  'app.css': { type: 'text/css; charset=utf-8', body: Buffer.concat([asset('../cabinet/assets/app.css'), asset('./assets/console.css')]) },
  'app.js': { type: 'text/javascript; charset=utf-8', body: asset('../cabinet/assets/app.js') },
} as const;

/**
 * Operator console, /operator/*: server-rendered pages over the services the operator API
 * uses, for operators signed in with a password and TOTP. Every route's permission is the
 * operator API's (`config.permission`, else `read` for GET and `admin` otherwise), checked
 * with the same table before the handler runs; every POST carries the session's CSRF token
 * and a single-use form token.
 */
export default async function operatorConsole(app: FastifyInstance): Promise<void> {
  const secure = app.config.publicBaseUrl.startsWith('https://');
  const sessions = new OperatorSessionStore(app.db);
  app.decorateRequest('console', null as never);

  await app.register(cookie);
  await app.register(view, {
    engine: { eta: templates(VIEWS) },
    root: VIEWS,
    production: true,
    propertyName: 'operatorView',
  });

  const cookieOpts = { path: BASE, httpOnly: true, sameSite: 'lax' as const, secure };

  app.addHook('onRequest', async (req) => { req.console = { session: null }; });

  app.addHook('preHandler', async (req, reply) => {
    const cfg = req.routeOptions.config;
    if (cfg.consolePublic) return;
    const s = await sessions.load(req.cookies[SESSION_COOKIE]);
    if (!s) {
      reply.clearCookie(SESSION_COOKIE, { path: BASE });
      const next = req.method === 'GET' ? `?next=${encodeURIComponent(req.url)}` : '';
      return reply.redirect(`${BASE}/login${next}`, 303);
    }
    if (s.stage === 'PASSWORD' && !cfg.secondFactor) return reply.redirect(`${BASE}/2fa`, 303);
    if (s.stage === 'FULL' && cfg.secondFactor) return reply.redirect(BASE, 303);
    req.console.session = s;
    req.auditActor = `operator:${s.operator.id}`;
    req.auditActorName = s.operator.email;
    req.operator = { role: s.operator.role, operatorId: s.operator.id };
    // The operator API's table, the same declaration per route: refused before anything runs.
    if (s.stage === 'FULL' && !allows(s.operator.role, routePermission(req))) {
      return errorPage(req, reply, 403, 'Your role does not allow this action. Nothing was changed.');
    }
    if (req.method === 'POST') {
      const b = formBody(req);
      if (!safeEqual(b._csrf ?? '', s.csrfToken)) return errorPage(req, reply, 403, 'The form has expired or did not come from this console. Nothing was changed.');
      if (!(await sessions.consumeFormToken(s.id, b._form ?? ''))) {
        return errorPage(req, reply, 409, 'This form was already submitted (or has expired). Nothing was changed; open the page again to act.');
      }
    }
  });

  installPageHeaders(app);

  app.get('/assets/:file', { config: { consolePublic: true }, schema: { hide: true } }, async (req, reply) => {
    const a = ASSETS[(req.params as { file: string }).file as keyof typeof ASSETS];
    if (!a) throw new NotFoundError();
    return reply.type(a.type).header('cache-control', 'public, max-age=3600').send(a.body);
  });

  app.setNotFoundHandler(async (req, reply) => {
    if (!req.console) req.console = { session: null };
    return errorPage(req, reply, 404, 'Not found.');
  });
  app.setErrorHandler(async (err, req, reply) => {
    if (!req.console) req.console = { session: null };
    const [status, message] = describe(err, req);
    if (status === 503) reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
    if (status >= 500) req.log.error({ err }, 'operator console error');
    return errorPage(req, reply, status, message);
  });

  const opts: ConsoleRouteOptions = {
    sessions, cookieOpts,
    signInLimits: { ...SIGN_IN_LIMITS, perAddress: app.config.loginAttemptsPerIp, perAccount: app.config.loginFailuresPerAccount },
  };
  await app.register(authRoutes, opts);
  await app.register(passwordResetRoutes, opts);
  await app.register(pageRoutes);
  await app.register(attentionRoutes);
  await app.register(onboardingRoutes);
  await app.register(connectorRoutes);
  await app.register(operatorRoutes);
  await app.register(holdRoutes);
  await app.register(shopRoutes);
}

/** What a service threw, for the operator: the status the operator API would answer and its message. */
function describe(err: unknown, req: FastifyRequest): [number, string] {
  if (err instanceof NotFoundError) return [404, err.message];
  if (err instanceof ValidationError) return [422, Object.entries(err.errors).map(([k, m]) => `${k}: ${m.join(' ')}`).join('; ')];
  if (err instanceof DomainError) return [err.status ?? 400, err.message.replace(/^api:error\./, '').replace(/_/g, ' ')];
  if (err instanceof UnsafeUrlError) return [422, `url: ${err.message}`];
  if (err instanceof UnauthorizedActionError) return [403, err.message];
  if (err instanceof ConflictError) return [409, err.message];
  if (isMalformedBody(err, req)) return [422, 'The form could not be read.'];
  const status = (err as { statusCode?: number }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return [status, (err as Error).message];
  if (isDatabaseUnavailable(err)) return [503, 'The database cannot be reached just now; nothing was done. Try again in a few seconds.'];
  return [500, 'Something went wrong; nothing is assumed done. Check the object before trying again.'];
}

export function errorPage(req: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  reply.status(status);
  return render(req, reply, 'error', { status, message });
}
