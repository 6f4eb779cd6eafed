import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

// 16 and 32 px PNGs in one .ico (288 bytes): a blue card. Served by the service itself, no CDN.
const ICON = readFileSync(fileURLToPath(new URL('../assets/favicon.ico', import.meta.url)));

/** GET /favicon.ico, which browsers ask for on every origin; the pages and the cabinet link it. */
export function registerFavicon(app: FastifyInstance): void {
  app.get('/favicon.ico', { schema: { hide: true } }, async (_req, reply) =>
    reply.header('content-type', 'image/x-icon').header('cache-control', 'public, max-age=604800').send(ICON));
}
