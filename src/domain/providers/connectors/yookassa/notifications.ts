import type { BlockList } from 'node:net';
import type { InboundNotification, ParsedNotification, PaymentOutcome } from '../../connector.js';
import { ipAllowed, type ProviderAnswer } from '../../provider-http.js';
import { operationOutcome, refusal, type YkObject } from './mapping.js';
import type { OperationType } from '../../../operation-type.js';

/** What checking a notification needs from the connector: its allow-list and a read with its credentials. */
export interface YooKassaNotificationDeps {
  /** `allowed_ips`, else YooKassa's published networks: never absent (YooKassa signs nothing). */
  allowList: BlockList;
  /** Payouts configured (the payout gateway's credentials set). */
  payouts: boolean;
  read(kind: OperationType, id: string): Promise<ProviderAnswer>;
  /** The payment as ours (a held one is captured on the way). */
  paymentOutcome(p: YkObject): Promise<PaymentOutcome>;
}

/**
 * `{type: "notification", event: "<object>.<status>", object: {id, ...}}`: the object is read
 * again and only that answer counts. The dedupe key is the object and the status READ
 * (`payment.succeeded:<id>` for an honest notification), so a duplicate, a late older event
 * and a forged status all fold into what YooKassa says now.
 */
export async function parseYooKassaNotification(n: InboundNotification, d: YooKassaNotificationDeps): Promise<ParsedNotification> {
  if (!ipAllowed(d.allowList, n.ip)) return { ok: false, reason: `source ${n.ip} is not in allowed_ips` };
  const b = n.body as { type?: unknown; event?: unknown; object?: { id?: unknown } } | null;
  if (!b || typeof b !== 'object' || b.type !== 'notification' || typeof b.event !== 'string') return { ok: false, reason: 'not a YooKassa notification' };
  const kind = b.event.split('.')[0];
  const id = b.object?.id;
  if (kind !== 'payment' && kind !== 'refund' && kind !== 'payout') return { ok: false, reason: `unsupported event ${b.event}` };
  if (typeof id !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(id)) return { ok: false, reason: 'no object id' };
  if (kind === 'payout' && !d.payouts) return { ok: false, reason: 'payouts are not configured' };
  const a = await d.read(kind, id);
  // An id YooKassa does not know for us is forged (or another shop's): nothing to apply.
  if (a.status === 404) return { ok: false, reason: `YooKassa does not know ${kind} ${id}` };
  if (a.status !== 200) throw refusal(a);
  const o = a.body as YkObject;
  const reply = { status: 200, body: '' };
  if (kind === 'payment') {
    const ourId = typeof o.metadata?.payment_id === 'string' ? o.metadata.payment_id : null;
    const outcome = await d.paymentOutcome(o);
    // Keyed by the final status reached (a held payment captured here is `succeeded`).
    const status = outcome.status === 'paid' ? 'succeeded' : outcome.status === 'declined' ? 'canceled' : o.status;
    return { ok: true, eventKey: `payment.${status}:${o.id}`, object: 'payment', ref: o.id, ourId, outcome, reply };
  }
  const eventKey = `${kind}.${o.status}:${o.id}`;
  const ourId = kind === 'payout' && typeof o.metadata?.payout_id === 'string' ? o.metadata.payout_id : null;
  return { ok: true, eventKey, object: kind, ref: o.id, ourId, outcome: operationOutcome(o), reply };
}
