import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sha256Hex } from '../lib/crypto.js';
import { UnauthenticatedError } from '../errors.js';
import { AUTH_MERCHANT_COLUMNS, assertMerchantUsable, type AuthMerchant } from '../domain/merchant/merchant-guard.js';
import { assertIpAllowed } from '../domain/merchant/ip-allowlist.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated merchant; null only on a deferAuth route until the handler resolves it. */
    merchant: AuthMerchant;
    /** SHA-256 of the bearer token, for a deferAuth route's own statement. */
    tokenHash: string | null;
  }
  interface FastifyContextConfig {
    /** Check the subscription too (endpoints whose spec lists the subscription keys). */
    subscription?: boolean;
    /**
     * The handler authenticates inside its own statement (one round trip fewer on a hot path)
     * and calls `ensureMerchant` on every other path. Not deferred when an Idempotency-Key is
     * sent (that layer needs the merchant first).
     */
    deferAuth?: boolean;
  }
}

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/;

/** SHA-256 of the `Authorization: Bearer <token>` token, or 401. */
export function bearerTokenHash(req: FastifyRequest): string {
  const m = BEARER.exec(req.headers.authorization ?? '');
  if (!m) throw new UnauthenticatedError();
  return sha256Hex(m[1]!);
}

/**
 * Resolves `Authorization: Bearer <token>` to a merchant, or 401; then the merchant's IP
 * allow-list (403 api:error.ip_access_denied) on the client address as TRUST_PROXY defines it.
 */
export async function authenticateMerchant(app: FastifyInstance, req: FastifyRequest): Promise<AuthMerchant> {
  // Named: prepared once per pooled connection, so PostgreSQL skips parse and plan on every
  // request after the first (docs/performance.md).
  const r = await app.db.pool.query<AuthMerchant>({
    name: 'merchant_auth',
    text: `SELECT ${AUTH_MERCHANT_COLUMNS} FROM merchants WHERE api_token_hash = $1`,
    values: [bearerTokenHash(req)],
  });
  const merchant = r.rows[0];
  if (!merchant) throw new UnauthenticatedError();
  assertIpAllowed(merchant, req.ip);
  return merchant;
}

/**
 * On a deferAuth route: the merchant, authenticated and checked exactly as the hook would
 * (401, then merchant_banned and the subscription keys). Every error path of such a route
 * calls it first, so errors come in the same order as on any other route.
 */
export async function ensureMerchant(app: FastifyInstance, req: FastifyRequest): Promise<AuthMerchant> {
  if (!req.merchant) {
    req.merchant = await authenticateMerchant(app, req);
    assertMerchantUsable(req.merchant, { subscription: req.routeOptions.config.subscription === true });
  }
  return req.merchant;
}

/**
 * Installs the merchant auth hook on the scope it is registered in (not fp-wrapped on purpose
 * by callers: register it inside the /api/v1 scope so no route there can forget auth).
 */
export const merchantAuth = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('merchant', null as unknown as AuthMerchant);
    app.decorateRequest('tokenHash', null);
    app.addHook('onRequest', async (req) => {
      if (req.routeOptions.config.deferAuth && req.headers['idempotency-key'] === undefined) {
        req.tokenHash = bearerTokenHash(req);
        return;
      }
      req.merchant = await authenticateMerchant(app, req);
      assertMerchantUsable(req.merchant, { subscription: req.routeOptions.config.subscription === true });
    });
  },
  { name: 'merchant-auth' },
);
