import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { UnauthenticatedError } from '../errors.js';
import { safeEqual, sha256Hex } from '../lib/crypto.js';
import { collectDbGauges, createDbGauges } from './db-gauges.js';
import { connectorMetrics } from '../domain/providers/call.js';
import { invariantViolations } from '../db/database-error.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus registry (one per app, so several apps in a process do not clash). */
    metrics: Registry;
  }
}

/** Seconds; tuned for an API whose p99 target is 25 ms. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Requests that matched no route share one label, so probing URLs cannot blow up cardinality. */
const UNMATCHED = 'unmatched';

/**
 * GET /metrics in Prometheus text format, behind the operator's bearer token (it discloses
 * business volumes: payouts by status, event backlog). fp-wrapped so that the onResponse hook
 * sees every route of the app. The hook is the only per-request cost: one histogram observation
 * and one counter increment, labelled by route pattern (never the raw URL).
 */
export default fp(
  async function metricsRoutes(app: FastifyInstance): Promise<void> {
    const registry = new Registry();
    app.decorate('metrics', registry);
    collectDefaultMetrics({ register: registry });

    const labelNames = ['method', 'route', 'status_code'] as const;
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames,
      registers: [registry],
    });
    const latency = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving the request to sending the reply, by method, route pattern and status code.',
      labelNames,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    const gauges = createDbGauges(registry);
    // Provider calls are counted per process by the call wrapper; each app's registry shows them.
    registry.registerMetric(connectorMetrics.calls);
    registry.registerMetric(connectorMetrics.latency);
    // Broken database invariants (src/db/database-error.ts): any increase is an alert.
    registry.registerMetric(invariantViolations);

    // The label set's children, made once per method, route pattern and status: prom-client
    // otherwise hashes the label values on every increment and observation. Bounded by the
    // routes the app has (unmatched URLs share one label).
    const children = new Map<string, { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof latency.labels> }>();
    app.addHook('onResponse', (req, reply, done) => {
      const route = req.routeOptions.url ?? UNMATCHED;
      const key = `${req.method} ${reply.statusCode} ${route}`;
      let c = children.get(key);
      if (!c) {
        const labels = { method: req.method, route, status_code: reply.statusCode };
        c = { count: requests.labels(labels), time: latency.labels(labels) };
        children.set(key, c);
      }
      c.count.inc();
      c.time.observe(reply.elapsedTime / 1000);
      done();
    });

    const adminHash = sha256Hex(app.config.adminApiToken);
    app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
      const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
      if (!m || !safeEqual(sha256Hex(m[1]!), adminHash)) throw new UnauthenticatedError();
      await collectDbGauges(app, gauges);
      const body = await registry.metrics();
      return reply.type(registry.contentType).send(body);
    });
  },
  { name: 'metrics' },
);
