import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerHash } from '../lib/bearer-hash.js';
import { DomainError, UnauthenticatedError } from '../errors.js';
import { AUTH_MERCHANT_COLUMNS, assertMerchantUsable, type AuthMerchant } from '../domain/merchant/merchant-guard.js';
import { assertIpAllowed } from '../domain/merchant/ip-allowlist.js';
import { isKeyToken, type ApiScope } from '../domain/api-key/api-key.scopes.js';
import { scopeAllows } from './api-scopes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated merchant; null only on a deferAuth route until the handler resolves it. */
    merchant: AuthMerchant;
    /** SHA-256 of the bearer token, for a deferAuth route's own statement. */
    tokenHash: string | null;
    /** The restricted key the request authenticated with; null for the merchant's own token. */
    apiKey: { id: string; scopes: ApiScope[] } | null;
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

/** The `Authorization: Bearer <token>` token, or 401. */
function bearerToken(req: FastifyRequest): string {
  const m = BEARER.exec(req.headers.authorization ?? '');
  if (!m) throw new UnauthenticatedError();
  return m[1]!;
}

/**
 * Resolves `Authorization: Bearer <token>` to a merchant, or 401; then the merchant's IP
 * allow-list (403 api:error.ip_access_denied) on the client address as TRUST_PROXY defines it.
 * A restricted key's token (its prefix and length say so, src/domain/api-key/api-key.scopes.ts)
 * is looked up among the keys, and then must hold a scope the endpoint accepts (403
 * api:error.insufficient_scope); the merchant's own token never touches the keys table.
 */
export async function authenticateMerchant(app: FastifyInstance, req: FastifyRequest): Promise<AuthMerchant> {
  const token = bearerToken(req);
  if (isKeyToken(token)) {
    const k = await app.services.apiKeys.authenticate(bearerHash(req, token));
    if (!k) throw new UnauthenticatedError();
    assertIpAllowed(k.merchant, req.ip);
    if (!scopeAllows(req.routeOptions.url ?? '', k.scopes)) throw new DomainError('insufficient_scope');
    req.apiKey = { id: k.keyId, scopes: k.scopes };
    // What the key does is audited as the key's (src/audit/audit.ts apiActor), not the live token's.
    req.auditActor = `api-key:${k.keyId}`;
    // The request's log lines name the key (which integration did what; never its token).
    req.log = req.log.child({ api_key_id: k.keyId });
    return k.merchant;
  }
  // Named: prepared once per pooled connection, so PostgreSQL skips parse and plan on every
  // request after the first (docs/performance.md).
  const r = await app.db.pool.query<AuthMerchant>({
    name: 'merchant_auth',
    text: `SELECT ${AUTH_MERCHANT_COLUMNS} FROM merchants WHERE api_token_hash = $1`,
    values: [bearerHash(req, token)],
  });
  const merchant = r.rows[0];
  if (!merchant) throw new UnauthenticatedError();
  assertIpAllowed(merchant, req.ip);
  return merchant;
}

/**
 * The checks the hook runs on an authenticated merchant (IP allow-list, then merchant_banned and
 * the subscription keys), for a merchant a deferAuth route's own statement found by the token.
 */
export function acceptMerchant(req: FastifyRequest, merchant: AuthMerchant): AuthMerchant {
  assertIpAllowed(merchant, req.ip);
  assertMerchantUsable(merchant, { subscription: req.routeOptions.config.subscription === true });
  req.merchant = merchant;
  return merchant;
}

/**
 * A deferAuth read: when the hook deferred, `byToken` authenticates and reads in one statement
 * (null: no merchant has the token, 401) and the merchant is checked before the read is used;
 * otherwise (a restricted key, an Idempotency-Key) `byMerchant` reads for the merchant the hook
 * authenticated.
 */
export async function deferredRead<T>(
  req: FastifyRequest,
  byToken: (tokenHash: string) => Promise<{ merchant: AuthMerchant; value: T } | null>,
  byMerchant: (merchant: AuthMerchant) => Promise<T>,
): Promise<T> {
  if (req.merchant) return byMerchant(req.merchant);
  const r = await byToken(req.tokenHash!);
  if (!r) throw new UnauthenticatedError();
  acceptMerchant(req, r.merchant);
  return r.value;
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
    app.decorateRequest('apiKey', null);
    app.addHook('onRequest', async (req) => {
      // A restricted key is authenticated here (its scopes are checked before any handler):
      // one indexed lookup more than the live token's deferred path.
      if (req.routeOptions.config.deferAuth && req.headers['idempotency-key'] === undefined) {
        const token = bearerToken(req);
        if (!isKeyToken(token)) {
          req.tokenHash = bearerHash(req, token);
          return;
        }
      }
      req.merchant = await authenticateMerchant(app, req);
      assertMerchantUsable(req.merchant, { subscription: req.routeOptions.config.subscription === true });
    });
  },
  { name: 'merchant-auth' },
);
