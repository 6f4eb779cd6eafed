import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../errors.js';

/** Deepest JSON nesting accepted: real requests nest two or three levels. */
export const MAX_JSON_DEPTH = 32;

/** Nesting depth of a parsed JSON value, counted without recursion (a deep body cannot overflow the stack). */
export function jsonDepthExceeds(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > max) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, d + 1]);
  }
  return false;
}

/**
 * The first field (path, query or body) whose text holds a NUL byte, or null. PostgreSQL
 * cannot store one, so such a request is refused up front, with the field named.
 */
function nulField(req: FastifyRequest): string | null {
  const stack: Array<[string, unknown]> = [];
  for (const src of [req.params, req.query, req.body]) {
    if (typeof src === 'string') stack.push(['body', src]);
    else if (src && typeof src === 'object') for (const [k, v] of Object.entries(src)) stack.push([k, v]);
  }
  let seen = 0;
  while (stack.length > 0 && seen++ < 100_000) {
    const [k, v] = stack.pop()!;
    if (typeof v === 'string') { if (v.includes('\u0000')) return k; continue; }
    if (k.includes('\u0000')) return 'field';
    if (v && typeof v === 'object') for (const [k2, v2] of Object.entries(v)) stack.push([k.includes('\u0000') ? 'field' : k, v2]);
  }
  return null;
}

/** preValidation hook: NUL bytes anywhere in the input are a 422 on that field. */
export async function refuseNulBytes(req: FastifyRequest): Promise<void> {
  const f = nulField(req);
  if (f !== null) throw ValidationError.field(f.replace(/\u0000/g, ''), `The ${f.replace(/[\u0000_]/g, ' ').trim()} must not contain NUL bytes.`);
}

// What busboy (@fastify/multipart) throws for a body that is not the multipart it claims to be;
// these errors carry no status of their own.
const MULTIPART_ERRORS = /^(Multipart: |Unexpected end of (form|multipart data)|Malformed (part header|content type|urlencoded form)|Part terminated early|Unexpected (part|end of file))/;

/** True for an error raised while reading a malformed request body (a client error, never a 500). */
export function isMalformedBody(err: unknown, req: FastifyRequest): boolean {
  if (!(err instanceof Error) || (err as { statusCode?: number }).statusCode !== undefined) return false;
  return (req.headers['content-type'] ?? '').toLowerCase().includes('multipart/') && MULTIPART_ERRORS.test(err.message);
}
