import { Decimal } from 'decimal.js';
import { callConnector } from '../../src/domain/providers/call.js';
import type { CallContext, Connector, ConnectorOperation } from '../../src/domain/providers/connector.js';
import { randomId } from '../../src/lib/ids.js';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.js';

/** A payment id as the service makes them (16 base62 characters). */
export const newOpId = () => randomId(16);

/** A form POST as a payer's browser sends it on a provider's hosted page (redirects not followed). */
export const formPost = (body: string) => ({ method: 'POST', redirect: 'manual' as const, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });

/**
 * Calls on one connector as the service makes them: built by the registry of `t()` (the test
 * file's app), each creation and read through the timed call wrapper, with the app's
 * CONNECTOR_TIMEOUT_MS or `timeoutMs` (a short one for the misbehaviour tests, a generous one
 * elsewhere so a loaded machine does not turn an answer into a timeout).
 */
export function connectorCalls(t: () => TestApp, conn: () => Connector, timeoutMs?: number) {
  const call = <T extends { status: string }>(op: ConnectorOperation, fn: (ctx: CallContext) => Promise<T>, c: Connector = conn()) =>
    timeoutMs === undefined ? t().app.services.connectors.call(c, op, fn) : callConnector(t().db, c, op, timeoutMs, fn);
  return {
    call,
    /** PUT /admin/v1/connectors/{name} with the admin token. */
    put: (name: string, payload: unknown) =>
      t().app.inject({ method: 'PUT', url: `/admin/v1/connectors/${name}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: payload as object }),
    /** Our payment page as the return URL, as the payment service passes it. */
    create: (paymentId: string, amount: string, method: 'card' | 'sbp' = 'card') => call('create_payment', (ctx) => conn().createPayment({
      paymentId, method, amount: new Decimal(amount), description: 'Заказ 7', returnUrl: `http://pay.test/pay/bill1/return/${paymentId}`,
    }, ctx)),
    getPayment: (paymentId: string, ref: string | null) => call('get_payment', (ctx) => conn().getPayment({ paymentId, ref }, ctx)),
    refund: (refundId: string, paymentRef: string, amount: string, o: { currency?: string; amountRub?: string } = {}) => call('refund', (ctx) => conn().refund({
      refundId, paymentId: 'p', paymentRef, amount: new Decimal(amount), currency: o.currency ?? 'RUB', amountRub: o.amountRub ? new Decimal(o.amountRub) : null, fromCard: null,
    }, ctx)),
    /** A notification as the inbound route hands it over, with a signal of its own. */
    parse: (body: unknown, ip = '127.0.0.1', c: Connector = conn()) => c.parseNotification({ headers: {}, body, ip }, { signal: AbortSignal.timeout(2000) }),
  };
}
