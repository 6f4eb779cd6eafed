import type { FastifyRequest } from 'fastify';
import type { Role } from '../domain/operator/roles.js';

/*
 * The operator's permission table, one for both of the operator's faces: the operator API
 * (src/admin, its bearer-token hook) and the console (src/operator, its session hook).
 */

/**
 * What a route needs. Every operator route declares one in `config.permission`; a GET without
 * one is `read`, anything else without one is `admin` (fail closed: a new route nobody thought
 * about is for admins only).
 */
export type Permission =
  | 'read'
  | 'payouts.moderate'
  | 'balance.adjust'
  | 'events.redeliver'
  | 'shops.test-postback'
  | 'merchants.password-reset'
  | 'merchants.two-factor-reset'
  | 'attention.resolve'
  | 'admin';

/** The one table of who may do what; `admin` may do everything. */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  admin: new Set<Permission>(['read', 'payouts.moderate', 'balance.adjust', 'events.redeliver', 'shops.test-postback', 'merchants.password-reset', 'merchants.two-factor-reset', 'attention.resolve', 'admin']),
  // Finance has moderation, adjustments, the attention list and the ledger.
  finance: new Set<Permission>(['read', 'payouts.moderate', 'balance.adjust', 'attention.resolve']),
  // Support unlocks a merchant's cabinet, by a reset link mailed to the
  // account (support never sees a password); a 2FA reset is for admins only (with a reason).
  support: new Set<Permission>(['read', 'events.redeliver', 'shops.test-postback', 'merchants.password-reset']),
  auditor: new Set<Permission>(['read']),
};

export const allows = (role: Role, p: Permission): boolean => ROLE_PERMISSIONS[role].has(p);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Operator API: what the route needs (see src/backoffice/permissions.ts). */
    permission?: Permission;
  }
}

/** The permission a route needs: its declared one, else `read` for GET/HEAD, else `admin`. */
export function routePermission(req: FastifyRequest): Permission {
  const declared = req.routeOptions.config?.permission;
  if (declared) return declared;
  return req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'admin';
}
