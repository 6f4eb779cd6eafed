import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnauthenticatedError, UnauthorizedActionError } from '../errors.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Role } from '../domain/operator/roles.js';
import { allows, routePermission } from '../backoffice/permissions.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated operator API caller. */
    operator?: { role: Role; operatorId: string | null };
  }
}

/**
 * True when `header` is `Bearer <ADMIN_API_TOKEN>`. Both sides are hashed first so the
 * comparison takes the same time whatever the length or content of the guess.
 */
export function adminTokenMatches(header: string | undefined, adminToken: string): boolean {
  const given = bearer(header);
  return timingSafeEqual(digest(given), digest(adminToken)) && given.length > 0;
}

function bearer(header: string | undefined): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1]! : '';
}

/** The header by which the CLI's in-process requests say which OS user ran it. */
export const CLI_HEADER = 'x-payments-cli';
// Nonce -> `cli:<os user>`, filled only by the CLI in its own process (registerCliActor): a
// server never registers one, so the header is meaningless over the network.
const cliActors = new Map<string, string>();

/** The CLI: the header value that makes this process's requests name `cli:<user>`. */
export function registerCliActor(user: string): string {
  const nonce = randomBytes(24).toString('base64url');
  cliActors.set(nonce, `cli:${user}`);
  return nonce;
}

function cliActorOf(header: string | string[] | undefined): string | null {
  return typeof header === 'string' ? (cliActors.get(header) ?? null) : null;
}

/**
 * Installs the operator auth and role check on the calling scope (not fp-wrapped: every route
 * registered in this scope, including child plugins, is covered). The caller is the
 * ADMIN_API_TOKEN (role admin, actor `admin-token`, or `cli:<os user>` from the CLI) or an active operator's unrevoked personal
 * token (its operator's role, actor `operator:<id>`). A role's refusal is a 403 before the
 * handler runs, so it changes nothing.
 */
export function installAdminAuth(app: FastifyInstance): void {
  app.addHook('onRequest', async (req) => {
    if (adminTokenMatches(req.headers.authorization, app.config.adminApiToken)) {
      req.operator = { role: 'admin', operatorId: null };
      // The CLI's own in-process requests name the OS user who ran it (cliActorOf).
      const cli = cliActorOf(req.headers[CLI_HEADER]);
      req.auditActor = cli ?? 'admin-token';
      req.auditActorName = cli ?? 'admin-token';
    } else {
      const token = bearer(req.headers.authorization);
      if (token === '' || token.length > 512) throw new UnauthenticatedError();
      // One query: a revoked token or a disabled operator finds nothing, from the commit on.
      const r = await app.db.pool.query<{ operator_id: string; role: string; email: string }>(
        `UPDATE operator_tokens t SET last_used_at = now()
           FROM operators o
          WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND o.id = t.operator_id AND o.status = 'ACTIVE'
         RETURNING t.operator_id, o.role::text AS role, o.email`,
        [sha256Hex(token)],
      );
      const row = r.rows[0];
      if (!row) throw new UnauthenticatedError();
      req.operator = { role: row.role.toLowerCase() as Role, operatorId: row.operator_id };
      req.auditActor = `operator:${row.operator_id}`;
      req.auditActorName = row.email;
    }
    if (!allows(req.operator.role, routePermission(req))) throw new UnauthorizedActionError();
  });
}
