import type { FastifyRequest } from 'fastify';
import type { CabinetSession } from './session.js';

import { TEAM_ROLES, type TeamRole } from '../domain/merchant/team-roles.js';

export { TEAM_ROLES, type TeamRole };

/**
 * What a cabinet route needs: `read` (every page), `api` (the API token, the IP allow-list,
 * shop settings, the webhook URL, delivery log actions), `refunds`, `team` and `owner`
 * (money out: bills, payouts, payout accounts).
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
  'GET /cabinet/api/refresh': 'api',
  'POST /cabinet/api/refresh': 'api',
  'POST /cabinet/api/allowlist': 'api',
  'POST /cabinet/api/test-token': 'api',
  // The live/test switch changes what is shown, nothing stored.
  'POST /cabinet/mode': 'read',
  'POST /cabinet/shops/:id': 'api',
  'POST /cabinet/shops/:id/test-postback': 'api',
  'POST /cabinet/webhooks': 'api',
  'POST /cabinet/webhooks/events/:id/redeliver': 'api',
  'POST /cabinet/payments/:id/refund': 'refunds',
  'GET /cabinet/team': 'team',
  'POST /cabinet/team': 'team',
  'POST /cabinet/team/:id/role': 'team',
  'POST /cabinet/team/:id/remove': 'team',
  'POST /cabinet/team/two-factor': 'team',
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
