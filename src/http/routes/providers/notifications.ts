import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONNECTOR_NAME } from '../../../domain/providers/registry.js';
import type { ParsedNotification } from '../../../domain/providers/connector.js';

const Params = Type.Object({ connector: Type.String({ maxLength: 40 }) });

/**
 * Inbound provider notifications, `POST /providers/{connector}/notifications` (public;
 * PROVIDERS.md "Inbound"): the connector verifies and parses it; ProviderNotificationService
 * records it once by (connector, event key) and applies it in the same transaction, so a
 * duplicate or an out-of-order one changes nothing; answered as the provider expects.
 * Unverifiable: 400; about no object of ours: 404 (`<object>_not_found`); nothing changes.
 */
export default async function providerNotificationRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  app.setValidatorCompiler(() => () => true);

  app.post<{ Params: { connector: string } }>('/:connector/notifications', {
    schema: { tags: ['providers'], summary: "A provider's notification about a payment, refund or payout (verified per connector kind)", params: Params, security: [] },
  }, async (req, reply) => {
    const name = req.params.connector;
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
    const done = await services.providerNotifications.apply(name, n);
    if (done.result === 'not_found') return reply.status(404).send({ error: `${done.object}_not_found` });
    req.log.info({ connector: name, eventKey: n.eventKey, object: n.object, result: done.result }, 'provider notification');
    return sendReply(reply, n.reply);
  });
}

function sendReply(reply: FastifyReply, r: { status: number; body: string }) {
  return reply.status(r.status).type('text/plain; charset=utf-8').send(r.body);
}
