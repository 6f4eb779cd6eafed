import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerHash } from '../lib/bearer-hash.js';
import { SHARED_KEY_PREFIX, sharedRateLimitStore } from './rate-limit-store.js';

/** Thrown when a limit is hit; the error handler answers 429 JSON. */
export class TooManyRequestsError extends Error {
  constructor(public readonly retryAfterSeconds: number) { super('Too Many Attempts.'); }
}

const tokenKey = (req: FastifyRequest): string => {
  const h = req.headers.authorization ?? '';
  return h.startsWith('Bearer ') ? `${SHARED_KEY_PREFIX}${bearerHash(req, h.slice(7))}` : `ip:${req.ip}`;
};

/**
 * Per API token and per client IP request limits on the scope it is registered in
 * (config.rateLimitPerToken / rateLimitPerIp per minute; 0 disables one). Runs before auth,
 * so a flood of bad tokens is limited too. The per-token count is shared by every process
 * (src/plugins/rate-limit-store.ts); the per-address one, checked first, is per process.
 */
export const apiRateLimit = fp(
  async (app: FastifyInstance) => {
    const { rateLimitPerToken, rateLimitPerIp } = app.config;
    if (rateLimitPerToken === 0 && rateLimitPerIp === 0) return;
    if (!app.hasDecorator('createRateLimit')) await app.register(rateLimit, { global: false, store: sharedRateLimitStore(app.services.limits) });
    const checks = [
      rateLimitPerIp > 0 ? app.createRateLimit({ max: rateLimitPerIp, timeWindow: 60_000, keyGenerator: (req) => `ip:${req.ip}` }) : null,
      rateLimitPerToken > 0 ? app.createRateLimit({ max: rateLimitPerToken, timeWindow: 60_000, keyGenerator: tokenKey }) : null,
    ].filter((c): c is NonNullable<typeof c> => c !== null);
    app.addHook('onRequest', async (req, reply) => {
      for (const check of checks) {
        const r = await check(req);
        if (!r.isAllowed && r.isExceeded) {
          reply.header('retry-after', String(r.ttlInSeconds));
          throw new TooManyRequestsError(r.ttlInSeconds);
        }
      }
    });
  },
  { name: 'api-rate-limit' },
);
