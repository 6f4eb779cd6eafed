import type { FastifyRequest } from 'fastify';

/** Body fields of a browser form as strings (forms post urlencoded; the cabinet's and the console's). */
export function formBody(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  const b = req.body;
  if (b && typeof b === 'object') {
    for (const [k, v] of Object.entries(b as Record<string, unknown>)) {
      if (typeof v === 'string') out[k] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    }
  }
  return out;
}

/** The query string's single-valued parameters as strings. */
export function queryOf(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}
