import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { UnauthenticatedError } from '../http/errors.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * True when `header` is `Bearer <ADMIN_API_TOKEN>`. Both sides are hashed first so the
 * comparison takes the same time whatever the length or content of the guess.
 */
export function adminTokenMatches(header: string | undefined, adminToken: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  const given = m ? m[1]! : '';
  return timingSafeEqual(digest(given), digest(adminToken)) && given.length > 0;
}

/**
 * Installs the operator bearer check on the calling scope (not fp-wrapped: every route
 * registered in this scope, including child plugins, is covered).
 */
export function installAdminAuth(app: FastifyInstance): void {
  app.addHook('onRequest', async (req) => {
    if (!adminTokenMatches(req.headers.authorization, app.config.adminApiToken)) throw new UnauthenticatedError();
  });
}
