import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../audit/audit.js';
import { holdAudit } from '../../domain/audit-steps.js';
import { holdReadingOf } from '../../domain/payment/hold-reading.js';
import { NotFoundError } from '../../errors.js';
import { defineInput, v } from '../../lib/input.js';
import { isIdLike } from '../../lib/input-fields.js';
import { formBody } from '../../lib/form-body.js';
import { operatorActions } from '../../backoffice/actions.js';
import { peopleAmountText } from '../../lib/amount-text.js';
import { BASE, done, render } from '../context.js';

const captureInput = defineInput({ amount: v.decimal({}) });
const admin = { permission: 'admin' } as const;

/** How the console writes a payment's status: a hold says what happened to it, as the cabinet does. */
export const HOLD_WORDS = { HELD: 'Authorised (held)', CAPTURED: 'Captured', CANCELLED_BY_SHOP: 'Cancelled by the shop' } as const;
export const paymentStatusWords = (p: Parameters<typeof holdReadingOf>[0]): string => {
  const h = holdReadingOf(p);
  return h ? HOLD_WORDS[h] : p.status;
};

/**
 * The console's payment page and the capture (full or partial) and cancel of a held payment,
 * from the payment page or the merchant page: the operator API's service and audit step
 * (docs/adr/0073-two-stage-payments.md), admins only as on the API.
 */
export default async function consoleHoldRoutes(app: FastifyInstance): Promise<void> {
  const { payments } = app.services;
  const idOf = (req: FastifyRequest) => {
    const id = (req.params as { id: string }).id;
    if (!isIdLike(id)) throw new NotFoundError('Payment not found.');
    return id;
  };
  /** Where to go after an action: the merchant page when the form came from it, else the payment's. */
  const back = (req: FastifyRequest, id: string) => {
    const from = formBody(req).back;
    return from && /^\/operator\/merchants\/[A-Za-z0-9]{1,64}$/.test(from) ? from : `${BASE}/payments/${encodeURIComponent(id)}`;
  };

  app.get('/payments/:id', { schema: { hide: true } }, async (req, reply) => {
    const p = await operatorActions(app).loadPayment(idOf(req));
    return render(req, reply, 'payment', { nav: 'merchants', p, statusWords: paymentStatusWords(p), hold: holdReadingOf(p) });
  });

  app.post('/payments/:id/capture', { config: admin, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    const raw = peopleAmountText(formBody(req).amount, 'en') ?? '';
    const amount = captureInput.parse({ amount: raw === '' ? undefined : raw }).amount ?? null;
    const r = await payments.captureHold(id, amount, holdAudit(actorOf(req)));
    return done(reply, back(req, id), r.status === 'SUCCESS' ? `Captured RUB ${r.amount.toFixed(2)}.` : 'Capture sent; the provider has not answered yet.');
  });

  app.post('/payments/:id/cancel', { config: admin, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    const r = await payments.cancelHold(id, holdAudit(actorOf(req)));
    return done(reply, back(req, id), r.status === 'FAIL' ? 'The hold is cancelled: nothing was charged.' : 'Cancellation sent; the provider has not answered yet.');
  });
}
