import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sha256Hex } from '../lib/crypto.js';
import { UnauthenticatedError } from '../http/errors.js';
import { AUTH_MERCHANT_COLUMNS, assertMerchantUsable, type AuthMerchant } from '../domain/merchant/merchant-guard.js';

declare module 'fastify' {
  interface FastifyRequest {
    merchant: AuthMerchant;
  }
  interface FastifyContextConfig {
    /** Check the subscription too (endpoints whose spec lists the subscription keys). */
    subscription?: boolean;
  }
}

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/;

/** Resolves `Authorization: Bearer <token>` to a merchant, or 401. */
export async function authenticateMerchant(app: FastifyInstance, req: FastifyRequest): Promise<AuthMerchant> {
  const m = BEARER.exec(req.headers.authorization ?? '');
  if (!m) throw new UnauthenticatedError();
  // Named: prepared once per pooled connection, so PostgreSQL skips parse and plan on every
  // request after the first (docs/performance.md).
  const r = await app.db.pool.query<AuthMerchant>({
    name: 'merchant_auth',
    text: `SELECT ${AUTH_MERCHANT_COLUMNS} FROM merchants WHERE api_token_hash = $1`,
    values: [sha256Hex(m[1]!)],
  });
  const merchant = r.rows[0];
  if (!merchant) throw new UnauthenticatedError();
  return merchant;
}

/**
 * Installs the merchant auth hook on the scope it is registered in (not fp-wrapped on purpose
 * by callers: register it inside the /api/v1 scope so no route there can forget auth).
 */
export const merchantAuth = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('merchant', null as unknown as AuthMerchant);
    app.addHook('onRequest', async (req) => {
      req.merchant = await authenticateMerchant(app, req);
      assertMerchantUsable(req.merchant, { subscription: req.routeOptions.config.subscription === true });
    });
  },
  { name: 'merchant-auth' },
);
