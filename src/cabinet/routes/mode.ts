import type { FastifyInstance } from 'fastify';
import { BASE, MODE_COOKIE, type CabinetRouteOptions } from '../context.js';
import { formBody } from '../../lib/form-body.js';

/**
 * Where the switch comes back to: the section of the page it was on (/cabinet/bills for a bill,
 * whose id the other mode does not know), else the dashboard. Never anything but a cabinet path.
 */
const backTo = (path: string | undefined): string => (path ? /^\/cabinet\/[a-z-]{1,30}(?=\/|$)/.exec(path)?.[0] : undefined) ?? BASE;

/**
 * The live/test switch (PROVIDERS.md "Test mode"): POST /cabinet/mode {mode: live|test}
 * (CSRF-checked like every cabinet form). Test mode shows and creates the test twin's objects
 * and balances on every page; shops, tokens and settings are shared by both modes.
 */
export default async function modeRoutes(app: FastifyInstance, opts: CabinetRouteOptions): Promise<void> {
  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    if (b.mode === 'test') reply.setCookie(MODE_COOKIE, 'test', { ...opts.cookieOpts, maxAge: 30 * 86400 });
    else reply.clearCookie(MODE_COOKIE, { path: opts.cookieOpts.path });
    return reply.redirect(backTo(b.back), 303);
  });
}
