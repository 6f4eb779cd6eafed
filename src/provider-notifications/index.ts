import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONNECTOR_NAME } from '../domain/providers/registry.js';
import type { ParsedNotification } from '../domain/providers/connector.js';

const Params = Type.Object({ connector: Type.String({ maxLength: 40 }) });

/**
 * Notifications a client address may have in flight or refused, per connector and second (issue
 * 27). Each counts when it arrives and is taken back once it proved genuine (verified and
 * applied), so a provider's own traffic is never throttled, while a flood of forged ones is
 * refused 429 before anything is verified: they cannot make the service spend authenticated calls
 * (YooKassa's are verified by reading the object back) faster than this. Counted once for all
 * processes (src/db/limit-counters.ts), in windows of one second.
 */
export const NOTIFICATIONS_PER_SECOND = 10;

/**
 * Inbound provider notifications, `POST /providers/{connector}/notifications` (public;
 * PROVIDERS.md "Inbound"): the connector verifies and parses it; ProviderNotificationService
 * records it once by (connector, event key) and applies it in the same transaction, so a
 * duplicate or an out-of-order one changes nothing; answered as the provider expects.
 * Unverifiable: 400; about no object of ours: 404 (`<object>_not_found`); more than
 * NOTIFICATIONS_PER_SECOND from one address to one connector: 429; nothing changes.
 */
export default async function providerNotificationRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  app.setValidatorCompiler(() => () => true);

  app.post<{ Params: { connector: string } }>('/:connector/notifications', {
    schema: { tags: ['providers'], summary: "A provider's notification about a payment, refund or payout (verified per connector kind)", params: Params, security: [] },
  }, async (req, reply) => {
    const name = req.params.connector;
    const key = `${name}|${req.ip}`;
    // Checked and counted in one statement: of a concurrent burst, no more than the limit passes.
    const unproven = await services.limits.admit([{ name: 'notifications', key, windowMs: 1000, limit: NOTIFICATIONS_PER_SECOND }]);
    if (!unproven) {
      req.log.warn({ connector: name, ip: req.ip }, 'provider notifications over the rate limit refused');
      return reply.status(429).header('retry-after', '1').send({ error: 'too_many_requests' });
    }
    const c = CONNECTOR_NAME.test(name) ? await services.connectors.get(name) : null;
    if (!c) return reply.status(404).send({ error: 'unknown_connector' });
    const called = await services.connectors.call(c, 'notification', async (ctx) => ({
      status: 'ok' as const, parsed: await c.parseNotification({ headers: req.headers, body: req.body ?? null, ip: req.ip }, ctx),
    }));
    // The connector could not check it (its provider did not answer): the provider retries.
    if (called.status !== 'ok') return reply.status(503).send({ error: 'provider_unavailable' });
    const n: ParsedNotification = called.parsed;
    if (!n.ok) {
      req.log.warn({ connector: name, reason: n.reason }, 'unverifiable provider notification refused');
      return reply.status(400).send({ error: 'unverifiable', reason: n.reason });
    }
    // About a go-live rehearsal's own object: noted for the run, never applied to money.
    if (await services.rehearsals.heard(name, n)) {
      req.log.info({ connector: name, eventKey: n.eventKey, object: n.object }, 'provider notification for a rehearsal');
      await services.limits.release([], unproven);
      return sendReply(reply, n.reply);
    }
    const done = await services.providerNotifications.apply(name, n);
    if (done.result === 'not_found') return reply.status(404).send({ error: `${done.object}_not_found` });
    req.log.info({ connector: name, eventKey: n.eventKey, object: n.object, result: done.result }, 'provider notification');
    await services.limits.release([], unproven);
    return sendReply(reply, n.reply);
  });
}

function sendReply(reply: FastifyReply, r: { status: number; body: string }) {
  return reply.status(r.status).type('text/plain; charset=utf-8').send(r.body);
}
