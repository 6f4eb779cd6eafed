import type { FastifyRequest } from 'fastify';
import type { CabinetSession } from './session.js';

import { TEAM_ROLES, type TeamRole } from '../domain/merchant/team-roles.js';
import { API_SCOPES, MONEY_OUT_SCOPES, type ApiScope } from '../domain/api-key/api-key.scopes.js';

export { TEAM_ROLES, type TeamRole };

/**
 * What a cabinet route needs: `read` (every page), `api` (the test token, restricted keys
 * within keyScopesAllowed, the IP allow-list, shop settings, the webhook URL, delivery log
 * actions), `refunds`, `team` and `owner` (money out: bills, payouts, payout accounts; the live
 * API token).
 */
export type CabinetPermission = 'read' | 'api' | 'refunds' | 'team' | 'owner';

export const TEAM_PERMISSIONS: Record<TeamRole, ReadonlySet<CabinetPermission>> = {
  owner: new Set<CabinetPermission>(['read', 'api', 'refunds', 'team', 'owner']),
  developer: new Set<CabinetPermission>(['read', 'api']),
  accountant: new Set<CabinetPermission>(['read']),
  support: new Set<CabinetPermission>(['read', 'refunds']),
};

/**
 * The cabinet's changes by route (method and URL as registered), kept here rather than in
 * each route file so the whole table is in one place. A GET not listed is `read`; any other
 * method not listed is `owner` (fail closed: a new form nobody classified is the owner's).
 */
const ROUTE_PERMISSIONS: Record<string, CabinetPermission> = {
  'POST /cabinet/logout': 'read',
  // The live token moves all the merchant's money: the owner's alone. Developers
  // integrate with restricted keys (below) and the test token.
  'GET /cabinet/api/refresh': 'owner',
  'POST /cabinet/api/refresh': 'owner',
  'POST /cabinet/api/keys': 'api',
  'POST /cabinet/api/keys/:id/revoke': 'api',
  'POST /cabinet/api/allowlist': 'api',
  'POST /cabinet/api/test-token': 'api',
  // The live/test switch changes what is shown, nothing stored.
  'POST /cabinet/mode': 'read',
  // A new shop is the owner's (its bills move money); shop settings are the developer's too.
  'GET /cabinet/shops/new': 'owner',
  'POST /cabinet/shops': 'owner',
  'POST /cabinet/shops/:id': 'api',
  'POST /cabinet/shops/:id/test-postback': 'api',
  'POST /cabinet/webhooks': 'api',
  'POST /cabinet/webhooks/events/:id/redeliver': 'api',
  'POST /cabinet/payments/:id/refund': 'refunds',
  // A revoked saved card is never charged again: the owner's, as money is (docs/adr/0074).
  'POST /cabinet/cards/:id/revoke': 'owner',
  'GET /cabinet/team': 'team',
  'POST /cabinet/team': 'team',
  'POST /cabinet/team/:id/role': 'team',
  'POST /cabinet/team/:id/remove': 'team',
  'POST /cabinet/team/two-factor': 'team',
  'POST /cabinet/team/time-zone': 'team',
  // Each account's own two-factor sign-in, whatever its role.
  'POST /cabinet/2fa': 'read',
  'POST /cabinet/2fa/cancel': 'read',
  'POST /cabinet/security/totp/enable': 'read',
  'POST /cabinet/security/totp/disable': 'read',
};

export const roleOf = (s: CabinetSession): TeamRole => s.user?.role ?? 'owner';

export function cabinetRoutePermission(req: FastifyRequest): CabinetPermission {
  const url = (req.routeOptions.url ?? '').replace(/\/+$/, '');
  const listed = ROUTE_PERMISSIONS[`${req.method} ${url}`];
  if (listed) return listed;
  return req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'owner';
}

export const teamAllows = (s: CabinetSession, p: CabinetPermission): boolean => TEAM_PERMISSIONS[roleOf(s)].has(p);

/**
 * The restricted-key scopes a role may create or revoke keys with: the owner any; a developer
 * none that move money out (a developer is refused cabinet payouts and refunds, so a key of
 * theirs is too); the others none.
 */
export function keyScopesAllowed(s: CabinetSession): readonly ApiScope[] {
  const role = roleOf(s);
  if (role === 'owner') return API_SCOPES;
  if (role === 'developer') return API_SCOPES.filter((x) => !MONEY_OUT_SCOPES.has(x));
  return [];
}
