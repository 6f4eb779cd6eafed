import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { withPgTx } from '../../../db/client.js';
import { CONNECTOR_NAME } from '../../../domain/providers/registry.js';
import type { OperationOutcome, ParsedNotification, PaymentOutcome } from '../../../domain/providers/connector.js';
import { heard } from '../../../domain/attention/attention.service.js';

class NotApplicable extends Error {
  constructor(readonly status: number, readonly body: Record<string, unknown>) { super(String(body.error)); }
}

const Params = Type.Object({ connector: Type.String({ maxLength: 40 }) });

/**
 * Inbound provider notifications, `POST /providers/{connector}/notifications` (public;
 * PROVIDERS.md "Inbound"): the connector verifies and parses it; it is recorded once by
 * (connector, event key) and applied in the same transaction through the object's state table
 * and the ledger (a payment through PaymentService.applyOutcome), so a duplicate or an
 * out-of-order one changes nothing; answered as the provider expects. Unverifiable: 400, nothing changes.
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
    try {
      const applied = await withPgTx(app.db.pool, async (tx) => {
        const ins = await tx.query(
          `INSERT INTO provider_notifications (connector, event_key, object_type, object_id, provider_ref, outcome)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb) ON CONFLICT (connector, event_key) DO NOTHING`,
          [name, n.eventKey, n.object, n.ourId, n.ref, JSON.stringify(heard(n.outcome))]);
        if (ins.rowCount !== 1) return 'duplicate';
        switch (n.object) {
          case 'payment': {
            const id = await services.payments.findAtConnector(name, n.ourId, n.ref, tx);
            if (!id) throw new NotApplicable(404, { error: 'payment_not_found' });
            await services.payments.applyOutcome(id, n.outcome as PaymentOutcome, { tx });
            return 'applied';
          }
          // Refunds and payouts: their services apply the answer in this transaction.
          case 'refund':
          case 'payout': {
            const target = n.ourId ? { id: n.ourId, connector: name } : { connector: name, ref: n.ref };
            const svc = n.object === 'refund' ? services.refunds : services.payouts;
            const done: { status: unknown; id?: string } = await svc.applyProviderOutcome(target, n.outcome as OperationOutcome, tx);
            if (done.status === null) throw new NotApplicable(404, { error: `${n.object}_not_found` });
            // Which of our objects it was about (found by the provider's reference): kept with the record.
            if (done.id && !n.ourId) {
              await tx.query(`UPDATE provider_notifications SET object_id = $3 WHERE connector = $1 AND event_key = $2`, [name, n.eventKey, done.id]);
            }
            return 'applied';
          }
        }
      });
      req.log.info({ connector: name, eventKey: n.eventKey, object: n.object, result: applied }, 'provider notification');
    } catch (e) {
      // Nothing was recorded (rolled back): the provider's retry is applied later.
      if (e instanceof NotApplicable) return reply.status(e.status).send(e.body);
      throw e;
    }
    return sendReply(reply, n.reply);
  });
}

function sendReply(reply: FastifyReply, r: { status: number; body: string }) {
  return reply.status(r.status).type('text/plain; charset=utf-8').send(r.body);
}
