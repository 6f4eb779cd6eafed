import type { FastifyRequest } from 'fastify';
import { sha256Hex } from './crypto.js';

/**
 * SHA-256 of a request's bearer token, computed once per request: the rate limiter keys on it
 * and the auth hook looks the token up by it. Kept beside the request (a WeakMap, so nothing
 * outlives it), holding nothing the request does not hold already.
 */
const hashes = new WeakMap<FastifyRequest, { token: string; hash: string }>();

export function bearerHash(req: FastifyRequest, token: string): string {
  const seen = hashes.get(req);
  if (seen && seen.token === token) return seen.hash;
  const hash = sha256Hex(token);
  hashes.set(req, { token, hash });
  return hash;
}
