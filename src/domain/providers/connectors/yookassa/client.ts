import type { BlockList } from 'node:net';
import { Decimal } from 'decimal.js';
import {
  ConnectorRefusedError, type CallContext, type Capabilities, type Connector, type ConnectorMode, type CreatePayment, type CreatePayout,
  type CreateRefund, type InboundNotification, type OperationOutcome, type ParsedNotification, type PaymentOutcome,
} from '../../connector.js';
import { ipAllowed, parseAllowList, providerFetch, rubOfRefund, type ProviderAnswer } from '../../provider-http.js';
import type { Receipt } from '../../../receipt/receipt.js';

/** YooKassa API v3 in production (yookassa.ru/developers/using-api/basics). */
export const YOOKASSA_BASE_URL = 'https://api.yookassa.ru/v3';

/**
 * The networks YooKassa sends notifications from, as published (yookassa.ru/developers,
 * "Входящие уведомления", IP addresses; the official PHP SDK's `lib/Helpers/SecurityHelper.php`
 * lists the same IPv4 networks and, for IPv6, four /64 networks inside 2a02:5180::/32). The
 * allow-list of a YooKassa connector without `allowed_ips` (issue 27): a forged notification
 * from elsewhere is refused before it costs a call to YooKassa.
 */
export const YOOKASSA_NOTIFICATION_SOURCES = '185.71.76.0/27, 185.71.77.0/27, 77.75.153.0/25, 77.75.156.11, 77.75.156.35, 77.75.154.128/25, 2a02:5180::/32';
/** Loopback, added to the default list in the `sandbox` profile only (a local emulator, tests). */
export const LOOPBACK_SOURCES = '127.0.0.0/8, ::1';

export interface YooKassaSettings {
  baseUrl: string;
  shopId: string;
  secretKey: string;
  /** The payout gateway's own pair (agentId and its key); payouts are off without them. */
  payoutAgentId?: string;
  payoutSecretKey?: string;
  /** Source networks notifications may come from (comma separated); any source when absent. */
  allowedIps?: string;
}

type Money = { value: string; currency: string };
interface YkObject {
  id: string;
  status: string;
  amount?: Money;
  confirmation?: { type?: string; confirmation_url?: string; confirmation_data?: string };
  cancellation_details?: { party?: string; reason?: string };
  metadata?: Record<string, unknown>;
  test?: boolean;
}
interface YkError { type: 'error'; code?: string; description?: string; parameter?: string }

/** What the notifications' events name, and where the object is read again. */
const OBJECTS = { payment: 'payments', refund: 'refunds', payout: 'payouts' } as const;

/**
 * A YooKassa shop (API v3), written from yookassa.ru/developers and the public SDKs
 * (docs/connectors/yookassa.md). One-stage payments (`capture: true`) by card or SBP, each
 * confirmed on YooKassa's own page (`confirmation.type = redirect`): the card number never
 * reaches this service. Every POST carries `Idempotence-Key` = our operation id, so repeating a
 * call whose answer was lost returns the object it created. YooKassa signs no notification:
 * one is only a hint, and the object is read again with our credentials and believed as read.
 */
export class YooKassaConnector implements Connector {
  readonly kind = 'yookassa' as const;
  readonly capabilities: Capabilities;
  private readonly allowList: BlockList | null;

  constructor(readonly name: string, readonly mode: ConnectorMode, private readonly s: YooKassaSettings, private readonly publicBaseUrl: string) {
    const payouts = !!(s.payoutAgentId && s.payoutSecretKey);
    this.capabilities = {
      payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: payouts, sbp: payouts }, hostsCardForm: true,
    };
    this.allowList = s.allowedIps ? parseAllowList(s.allowedIps) : null;
  }

  // ---------------------------------------------------------------- payments

  async createPayment(req: CreatePayment, ctx: CallContext): Promise<PaymentOutcome> {
    const body = {
      amount: money(req.amount),
      capture: true,
      payment_method_data: { type: req.method === 'sbp' ? 'sbp' : 'bank_card' },
      // Back to our page (the payment's own, once the page gives one; the service's root otherwise).
      confirmation: { type: 'redirect', return_url: req.returnUrl ?? `${this.publicBaseUrl}/` },
      description: (req.description ?? `Payment ${req.paymentId}`).slice(0, 128),
      metadata: { payment_id: req.paymentId },
      ...(req.receipt ? { receipt: ykReceipt(req.receipt) } : {}),
    };
    const a = await this.send('POST', '/payments', ctx, { body, key: req.paymentId });
    // A payment at YooKassa moves no money until the payer confirms it on YooKassa's page, which
    // the payer reaches only from this answer: any refusal here, a 5xx included, is safe to route on.
    if (a.status !== 200) throw refusal(a);
    const p = a.body as YkObject;
    if (typeof p.test === 'boolean' && p.test !== (this.mode === 'test')) {
      throw new ConnectorRefusedError('yookassa:mode_mismatch', `yookassa: the shop answers test=${p.test} but the connector's mode is ${this.mode}`);
    }
    return this.paymentOutcome(p, ctx);
  }

  async getPayment(q: { paymentId: string; ref: string | null }, ctx: CallContext): Promise<PaymentOutcome> {
    // Without YooKassa's id the payment can only be found by repeating its creation with the same
    // Idempotence-Key (createPayment with the same request): no lookup by our id exists.
    if (!q.ref) throw new ConnectorRefusedError('yookassa:no_ref', 'yookassa: no payment id to read; repeat the creation with the same idempotence key');
    return this.paymentOutcome(await this.read('payments', q.ref, ctx), ctx);
  }

  /**
   * The payment as ours. `waiting_for_capture` only arises for a shop set to hold payments
   * (we always ask capture: true): the payer has confirmed the full amount, so it is captured
   * here (keyed by YooKassa's id, so every reader captures it once) rather than left to expire.
   */
  private async paymentOutcome(p: YkObject, ctx: CallContext): Promise<PaymentOutcome> {
    switch (p.status) {
      case 'succeeded': return { status: 'paid', amountReceived: new Decimal(p.amount!.value), ref: p.id };
      case 'canceled': {
        const { party = 'yoo_money', reason = 'canceled' } = p.cancellation_details ?? {};
        return { status: 'declined', code: reason, message: `YooKassa: canceled by ${party} (${reason})`, ref: p.id };
      }
      case 'waiting_for_capture': {
        const a = await this.send('POST', `/payments/${encodeURIComponent(p.id)}/capture`, ctx, { body: { amount: p.amount }, key: `capture-${p.id}` });
        if (a.status !== 200) return { status: 'pending', ref: p.id };
        const captured = a.body as YkObject;
        return captured.status === 'waiting_for_capture' ? { status: 'pending', ref: p.id } : this.paymentOutcome(captured, ctx);
      }
      default: {
        const c = p.confirmation;
        if (c?.type === 'redirect' && c.confirmation_url) return { status: 'action', action: { type: 'redirect', url: c.confirmation_url }, ref: p.id };
        if (c?.type === 'qr' && c.confirmation_data) {
          return { status: 'action', action: { type: 'sbp_qr', payload: c.confirmation_data, links: [{ name: 'SBP', url: c.confirmation_data }] }, ref: p.id };
        }
        return { status: 'pending', ref: p.id };
      }
    }
  }

  // ---------------------------------------------------------------- refunds

  async refund(req: CreateRefund, ctx: CallContext): Promise<OperationOutcome> {
    if (!req.paymentRef) return { status: 'failed', code: 'no_provider_ref', message: 'yookassa: the payment has no YooKassa id', ref: null };
    // The shop took roubles: YooKassa gives back the RUB share of the refund. A refund of another
    // currency admitted before that share was kept has none: failed, never guessed.
    const rub = rubOfRefund(req);
    if (!rub) return { status: 'failed', code: 'yookassa:currency_not_supported', message: `yookassa: no RUB amount for a refund in ${req.currency}`, ref: null };
    const a = await this.send('POST', '/refunds', ctx, {
      body: {
        payment_id: req.paymentRef, amount: money(rub), description: `Refund ${req.refundId}`.slice(0, 250),
        ...(req.receipt ? { receipt: ykReceipt(req.receipt) } : {}),
      },
      key: req.refundId,
    });
    if (a.status === 200) return operationOutcome(a.body as YkObject);
    // YooKassa: a 500 is "result unknown, repeat with the same key"; the refund stays PROCESS
    // and is asked again with its id as the key, never failed on a guess.
    if (a.status >= 500) throw new Error(`yookassa: refund answered HTTP ${a.status} (result unknown)`);
    // The provider's no (over-refund, a payment it cannot refund): final, nothing moved.
    if (a.status === 400 || a.status === 404) {
      const e = a.body as YkError | null;
      return { status: 'failed', code: `yookassa:${e?.code ?? a.status}`, message: e?.description ?? `HTTP ${a.status}`, ref: null };
    }
    throw refusal(a);
  }

  async getRefund(q: { refundId: string; ref: string | null }, ctx: CallContext): Promise<OperationOutcome> {
    if (!q.ref) throw new ConnectorRefusedError('yookassa:no_ref', 'yookassa: no refund id to read; repeat the refund with the same idempotence key');
    return operationOutcome(await this.read('refunds', q.ref, ctx));
  }

  // ---------------------------------------------------------------- payouts

  async createPayout(p: CreatePayout, ctx: CallContext): Promise<OperationOutcome> {
    if (!this.capabilities.payout.card) throw new ConnectorRefusedError('yookassa:payouts_not_configured', 'yookassa: no payout gateway credentials');
    if (p.currency !== 'RUB') throw new ConnectorRefusedError('yookassa:currency_not_supported', `yookassa: payouts are in RUB, not ${p.currency}`);
    let destination: Record<string, unknown>;
    if (p.accountType === 'CARD') destination = { type: 'bank_card', card: { number: p.account } };
    else {
      if (!p.bankMemberId) throw new ConnectorRefusedError('yookassa:no_bank', 'yookassa: an SBP payout needs the bank\'s SBP id');
      destination = { type: 'sbp', phone: p.account.replace(/^\+/, ''), bank_id: p.bankMemberId };
    }
    const a = await this.send('POST', '/payouts', ctx, {
      body: { amount: money(p.amount, p.currency), payout_destination_data: destination, description: `Payout ${p.payoutId}`, metadata: { payout_id: p.payoutId } },
      key: p.payoutId, payout: true,
    });
    if (a.status === 200) return operationOutcome(a.body as YkObject);
    // Money may have left on a 500 ("result unknown"): never routed elsewhere, asked again here.
    if (a.status >= 500) throw new Error(`yookassa: payout answered HTTP ${a.status} (result unknown)`);
    throw refusal(a);
  }

  async getPayout(q: { payoutId: string; ref: string | null }, ctx: CallContext): Promise<OperationOutcome> {
    if (!q.ref) throw new ConnectorRefusedError('yookassa:no_ref', 'yookassa: no payout id to read; repeat the payout with the same idempotence key');
    return operationOutcome(await this.read('payouts', q.ref, ctx));
  }

  // ---------------------------------------------------------------- notifications

  /**
   * `{type: "notification", event: "<object>.<status>", object: {id, ...}}`: the object is read
   * again and only that answer counts. The dedupe key is the object and the status READ
   * (`payment.succeeded:<id>` for an honest notification), so a duplicate, a late older event
   * and a forged status all fold into what YooKassa says now.
   */
  async parseNotification(n: InboundNotification, ctx: CallContext): Promise<ParsedNotification> {
    if (this.allowList && !ipAllowed(this.allowList, n.ip)) return { ok: false, reason: `source ${n.ip} is not in allowed_ips` };
    const b = n.body as { type?: unknown; event?: unknown; object?: { id?: unknown } } | null;
    if (!b || typeof b !== 'object' || b.type !== 'notification' || typeof b.event !== 'string') return { ok: false, reason: 'not a YooKassa notification' };
    const kind = b.event.split('.')[0];
    const id = b.object?.id;
    if (kind !== 'payment' && kind !== 'refund' && kind !== 'payout') return { ok: false, reason: `unsupported event ${b.event}` };
    if (typeof id !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(id)) return { ok: false, reason: 'no object id' };
    if (kind === 'payout' && !this.capabilities.payout.card) return { ok: false, reason: 'payouts are not configured' };
    const a = await this.send('GET', `/${OBJECTS[kind]}/${encodeURIComponent(id)}`, ctx, { payout: kind === 'payout' });
    // An id YooKassa does not know for us is forged (or another shop's): nothing to apply.
    if (a.status === 404) return { ok: false, reason: `YooKassa does not know ${kind} ${id}` };
    if (a.status !== 200) throw refusal(a);
    const o = a.body as YkObject;
    const reply = { status: 200, body: '' };
    if (kind === 'payment') {
      const ourId = typeof o.metadata?.payment_id === 'string' ? o.metadata.payment_id : null;
      const outcome = await this.paymentOutcome(o, ctx);
      // Keyed by the final status reached (a held payment captured here is `succeeded`).
      const status = outcome.status === 'paid' ? 'succeeded' : outcome.status === 'declined' ? 'canceled' : o.status;
      return { ok: true, eventKey: `payment.${status}:${o.id}`, object: 'payment', ref: o.id, ourId, outcome, reply };
    }
    const eventKey = `${kind}.${o.status}:${o.id}`;
    const ourId = kind === 'payout' && typeof o.metadata?.payout_id === 'string' ? o.metadata.payout_id : null;
    return { ok: true, eventKey, object: kind, ref: o.id, ourId, outcome: operationOutcome(o), reply };
  }

  // ---------------------------------------------------------------- HTTP

  private async read(what: 'payments' | 'refunds' | 'payouts', id: string, ctx: CallContext): Promise<YkObject> {
    const a = await this.send('GET', `/${what}/${encodeURIComponent(id)}`, ctx, { payout: what === 'payouts' });
    // A read that is not answered teaches nothing: the caller asks again later.
    if (a.status !== 200) throw refusal(a);
    return a.body as YkObject;
  }

  private send(method: 'GET' | 'POST', path: string, ctx: CallContext, o: { body?: unknown; key?: string; payout?: boolean }): Promise<ProviderAnswer> {
    const [user, pass] = o.payout ? [this.s.payoutAgentId ?? '', this.s.payoutSecretKey ?? ''] : [this.s.shopId, this.s.secretKey];
    const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`, accept: 'application/json' };
    if (method === 'POST') { headers['content-type'] = 'application/json'; headers['idempotence-key'] = o.key!; }
    return providerFetch('yookassa', `${this.s.baseUrl.replace(/\/+$/, '')}${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) }, ctx.signal);
  }
}

/** `{value: "10.00", currency}` from the Decimal: a string with two decimals, never a float. */
function money(d: Decimal, currency = 'RUB'): Money {
  if (d.decimalPlaces() > 2 || d.lte(0)) throw new ConnectorRefusedError('yookassa:invalid_amount', `yookassa: ${d.toString()} is not an amount in kopecks`);
  return { value: d.toFixed(2), currency };
}

/**
 * The receipt as YooKassa takes it on POST /payments and POST /refunds
 * (yookassa.ru/developers/payment-acceptance/receipts/54fz/yoomoney/basics and .../parameters-values;
 * the official SDKs' Receipt and ReceiptItem): `customer` {email, phone (ITU-T E.164 digits, no
 * "+")}, `items` [{description (<= 128), quantity (a number), amount {value, currency} = the PRICE
 * OF ONE UNIT, vat_code, payment_subject, payment_mode}], `tax_system_code`. The receipt's total is
 * the sum of amount x quantity, which must equal the payment's (or refund's) amount.
 */
export function ykReceipt(r: Receipt): Record<string, unknown> {
  const customer: Record<string, string> = {};
  if (r.customer.email) customer.email = r.customer.email;
  if (r.customer.phone) customer.phone = r.customer.phone.replace(/^\+/, '');
  return {
    customer,
    items: r.lines.map((l) => ({
      description: l.name, quantity: l.quantity.toNumber(), amount: money(l.price), vat_code: l.vatCode,
      payment_subject: l.paymentSubject, payment_mode: l.paymentMode,
    })),
    tax_system_code: r.taxSystemCode,
  };
}

/** A refund or payout object as ours. */
function operationOutcome(o: YkObject): OperationOutcome {
  if (o.status === 'succeeded') return { status: 'succeeded', ref: o.id };
  if (o.status === 'canceled') {
    const { party = 'yoo_money', reason = 'canceled' } = o.cancellation_details ?? {};
    return { status: 'failed', code: reason, message: `YooKassa: canceled by ${party} (${reason})`, ref: o.id };
  }
  return { status: 'pending', ref: o.id };
}

/** A non-200 answer as a refusal carrying YooKassa's error code (`yookassa:invalid_request`). */
function refusal(a: ProviderAnswer): ConnectorRefusedError {
  const e = a.body as YkError | null;
  const code = e && e.type === 'error' && e.code ? e.code : `http_${a.status}`;
  const detail = e?.description ? `: ${e.description}${e.parameter ? ` (${e.parameter})` : ''}` : '';
  return new ConnectorRefusedError(`yookassa:${code}`, `yookassa: HTTP ${a.status} ${code}${detail}`);
}
