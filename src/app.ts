import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import type { Db } from './db/client.js';
import { createServices, type Services } from './services.js';
import { errorHandler } from './plugins/error-handler.js';
import { jsonDepthExceeds, refuseNulBytes } from './plugins/bad-input.js';
import { keepNumberText } from './lib/json-number-text.js';
import { configSecrets, loggerOptions } from './logger.js';
import type { LifecycleObserver } from './domain/operations/lifecycle.js';
import { migrationsCurrent } from './db/migrate.js';
import { registerFavicon } from './http/favicon.js';
import { merchantDocument } from './http/openapi/documents.js';
import { registerOperatorDocs } from './http/openapi/operator-docs.js';
import merchantApi from './http/index.js';
import providerNotifications from './provider-notifications/index.js';
import payPage from './page/index.js';
import sandboxBankPages from './page/sandbox-bank.js';
import { registerSandboxShop } from './page/sandbox-shop.js';
import cabinet from './cabinet/index.js';
import operatorApi from './admin/index.js';
import operatorConsole from './operator/index.js';
import metricsRoutes from './metrics/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    services: Services;
    observers: Observers;
  }
}

/**
 * Who is told of the service's phases, given when the app is built: a metrics exporter, or a
 * test that stops the process at one (test/helpers/crash-entry.ts). Nothing by default.
 */
export interface Observers {
  /** Each phase of a provider operation (src/domain/operations/lifecycle.ts). */
  lifecycle?: LifecycleObserver;
  /** A keyed request's change and its stored answer committed; the answer is about to be sent. */
  onCommitted?: (req: FastifyRequest) => void;
}

export interface BuildOptions {
  config: Config;
  db: Db;
  /** false in tests that do not want logs. */
  logger?: boolean;
  /** Where logs go (default stdout); tests capture them here. */
  logStream?: { write(line: string): void };
  services?: Services;
  observers?: Observers;
}

/** The whole HTTP service: plugins, then routes, then the error handler (see STYLE.md). */
export async function buildApp(opts: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger === false ? false : { ...loggerOptions(opts.config.logLevel, { format: opts.config.logFormat, secrets: configSecrets(opts.config) }), ...(opts.logStream ? { stream: opts.logStream } : {}) },
    trustProxy: typeof opts.config.trustProxy === 'number'
      ? ((n: number) => (_addr: string, hop: number) => hop < n)(opts.config.trustProxy)
      : opts.config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Bill ids etc. never need long params; refuse absurd URLs early.
    routerOptions: { maxParamLength: 200, ignoreTrailingSlash: true },
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', opts.config);
  app.decorate('db', opts.db);
  app.decorate('observers', opts.observers ?? {});
  // A provider contradicting a final status is logged at error level through this app's logger.
  app.decorate('services', opts.services ?? createServices(opts.config, opts.db, { observer: opts.observers?.lifecycle, log: opts.logger === false ? undefined : app.log }));
  // A rehearsal runs in the background of this process: it ends before the pool closes.
  app.addHook('onClose', async () => { await app.services.rehearsals.drain(); });
  // A run a restart cut off is ended at boot, not left `running` (docs/adr/0136).
  // Ended before the first request (no statement of it lands in one); a database unreachable at
  // boot does not stop the start: the next look at the rehearsals ends them.
  app.addHook('onReady', async () => {
    await app.services.rehearsals.endInterrupted().catch((e: Error) => app.log.warn({ err: e.message }, 'interrupted rehearsals not ended at boot'));
  });

  // Existing clients send JSON bodies on GET too.
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  // An empty JSON body (clients that set Content-Type: application/json on every GET) is no body.
  const jsonParser = app.getDefaultJsonParser('error', 'remove');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    // Numbers not in their shortest form (`1e3`, `100.000`) arrive as their text, so an amount
    // is read by the digits the client sent (src/lib/json-number-text.ts).
    return jsonParser(req, keepNumberText(body as string), (err, value) => {
      if (err) return done(err, undefined);
      // A deeply nested body would overflow the stack of whatever walks it (the idempotency hash).
      if (jsonDepthExceeds(value)) return done(Object.assign(new Error('JSON nested too deeply'), { statusCode: 400 }), undefined);
      return done(null, value);
    });
  });
  await app.register(formbody);
  await app.register(multipart, { attachFieldsToBody: 'keyValues', limits: { fileSize: 64 * 1024, files: 1, fields: 100 } });
  // After the body parsers (multipart parses in its own preValidation hook, registered first).
  app.addHook('preValidation', refuseNulBytes);
  // Any other content type: the body is ignored (as the API's original server does), so the
  // request fails validation with a 422 naming the missing fields, never a 415 or 500.
  app.addContentTypeParser('*', (_req, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', (e) => done(e, undefined));
  });

  await app.register(errorHandler);

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Payment service API', version: '1.0.0', description: 'Cut into the merchants\' /docs and the operators\' /admin/docs (src/http/openapi/documents.ts).' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', transformSpecification: (spec) => merchantDocument(spec as Record<string, unknown>, { idempotencyTtlHours: opts.config.idempotencyTtlHours }) });
  registerOperatorDocs(app);

  // Which profile runs (PAYMENTS_PROFILE) is said by both: an operator or a load balancer sees a
  // sandbox deployment for what it is.
  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok', profile: opts.config.profile }));
  registerFavicon(app);
  app.get('/ready', { schema: { hide: true } }, async (_req, reply) => {
    const ok = await migrationsCurrent(app.db.pool);
    return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', profile: opts.config.profile });
  });

  // The faces: each registers its own routes and installs its own auth inside its own scope;
  // none imports another (test/foundation/layering.test.ts).
  await app.register(merchantApi, { prefix: '/api/v1' });
  await app.register(providerNotifications, { prefix: '/providers' });
  await app.register(payPage, { prefix: '/pay' });
  await app.register(sandboxBankPages, { prefix: '/sandbox' });
  await app.register(cabinet, { prefix: '/cabinet' });
  await app.register(operatorApi, { prefix: '/admin/v1' });
  await app.register(operatorConsole, { prefix: '/operator' });
  await app.register(metricsRoutes);
  // The demo shop's built-in receiver (sandbox/dev profile only, where private URLs are allowed).
  if (opts.config.allowPrivateWebhookUrls) registerSandboxShop(app);
  return app;
}
