import type { BlockList } from 'node:net';
import {
  cardDestination, ConnectorRefusedError, takesCard, IDEMPOTENCE_KEY_EXPIRED, type CallContext, type Capabilities, type ConnectionCheck, type Connector, type ConnectorMode, type CreatePayment, type CreatePayout,
  type CreateRefund, type InboundNotification, type OperationOutcome, type ParsedNotification, type PaymentOutcome,
  type PayoutWidget, type SettleHold,
} from '../../connector.js';
import { Decimal } from 'decimal.js';
import { parseAllowList, providerFetch, retryAfterMs, rubOfRefund, sendRepeating, type ProviderAnswer, type ProviderNet } from '../../provider-http.js';
import { keyExpired, money, notDone, operationOutcome, paymentOutcomeOf, refusal, ykReceipt, type YkError, type YkObject } from './mapping.js';
import { parseYooKassaNotification } from './notifications.js';
import { YOOKASSA_TOKEN_ISSUER, type YooKassaSettings } from './settings.js';

/**
 * When YooKassa asked for the same request again: 202, 429 and 5xx, after the wait it asked for
 * (ms) or the back-off (null); false otherwise. The wait is the body's `retry_after` (ms), which
 * the official PHP SDK honours for every answer it repeats (yoomoney/yookassa-sdk-php
 * lib/Client/BaseClient.php delay(): `retry_after` of the body, in ms), or a 429's Retry-After.
 */
function repeatAfter(a: ProviderAnswer): number | null | false {
  if (a.status !== 202 && a.status !== 429 && a.status < 500) return false;
  const ms = (a.body as { retry_after?: unknown } | null)?.retry_after;
  if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) return ms;
  return a.status === 429 ? retryAfterMs(a.retryAfter) : null;
}

/**
 * Nothing sent: the creation's Idempotence-Key (first sent at its `firstSentAt`) is past its
 * life, so a repeat could create a second object. The reason is exactly IDEMPOTENCE_KEY_EXPIRED
 * (the lifecycle hands the operation to an operator on it).
 */
function expired(): { status: 'unknown'; ref: null; reason: string } {
  return { status: 'unknown', ref: null, reason: IDEMPOTENCE_KEY_EXPIRED };
}

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
  readonly payoutWidget?: PayoutWidget;
  private readonly allowList: BlockList;

  constructor(readonly name: string, readonly mode: ConnectorMode, private readonly s: YooKassaSettings, private readonly publicBaseUrl: string, private readonly net: ProviderNet) {
    const payouts = !!(s.payoutAgentId && s.payoutSecretKey);
    this.capabilities = {
      payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: payouts, sbp: payouts }, hostsCardForm: true,
      // A card number only to a gateway its operator marked PCI DSS certified; the widget's token always.
      payoutCardBy: { number: payouts && s.payoutPciDss, tokens: payouts ? [YOOKASSA_TOKEN_ISSUER] : [] },
      twoStage: true,
      savedCards: true,
    };
    if (payouts) this.payoutWidget = { provider: YOOKASSA_TOKEN_ISSUER, accountId: s.payoutAgentId!, scriptUrl: s.payoutWidgetUrl };
    this.allowList = parseAllowList(s.allowedIps);
  }

  // ---------------------------------------------------------------- payments

  async createPayment(req: CreatePayment, ctx: CallContext): Promise<PaymentOutcome> {
    const body = req.savedMethod ? {
      // An autopayment by a saved card: `payment_method_id`, no confirmation, no payer
      // (yookassa.ru/developers/payment-acceptance/scenario-extensions/recurring-payments/pay-with-saved).
      amount: money(req.amount),
      capture: true,
      payment_method_id: req.savedMethod.providerId,
      description: (req.description ?? `Payment ${req.paymentId}`).slice(0, 128),
      metadata: { payment_id: req.paymentId },
      ...(req.receipt ? { receipt: ykReceipt(req.receipt, this.s.ownReceipts) } : {}),
    } : {
      amount: money(req.amount),
      // Two-stage (docs/adr/0073-two-stage-payments.md): `capture: false` holds the money
      // (`waiting_for_capture`) until POST /payments/{id}/capture or /cancel
      // (yookassa.ru/developers/payment-acceptance/getting-started/payment-process#capture-and-cancel).
      capture: req.capture !== false,
      payment_method_data: { type: req.method === 'sbp' ? 'sbp' : 'bank_card' },
      // Back to our page (the payment's own, once the page gives one; the service's root otherwise).
      confirmation: { type: 'redirect', return_url: req.returnUrl ?? `${this.publicBaseUrl}/` },
      description: (req.description ?? `Payment ${req.paymentId}`).slice(0, 128),
      // `two_stage` tells a reader of the object that the hold is ours to settle (else it is captured on the way).
      metadata: { payment_id: req.paymentId, ...(req.capture === false ? { two_stage: '1' } : {}) },
      // Only with the payer's consent: the card is saved when the payment succeeds (payment_method.saved, .id)
      // (yookassa.ru/developers/payment-acceptance/scenario-extensions/recurring-payments/save-payment-method/save-during-payment).
      ...(req.savePaymentMethod ? { save_payment_method: true } : {}),
      ...(req.receipt ? { receipt: ykReceipt(req.receipt, this.s.ownReceipts) } : {}),
    };
    if (keyExpired(req.firstSentAt)) return expired();
    const a = await this.send('POST', '/payments', ctx, { body, key: req.paymentId });
    // 202 ("processing, repeat with the same key") or 429 still after the repeats: YooKassa may
    // hold a payment under this key; the lifecycle asks again with the same key.
    const open = a.status === 202 || a.status === 429 ? notDone(a) : null;
    if (open) return { status: 'unknown', ref: null, reason: open };
    // An autopayment needs no payer: YooKassa may have charged the card behind a 5xx ("result
    // unknown"), so it is asked again under the same key, never failed (docs/adr/0090).
    if (req.savedMethod && a.status >= 500) return { status: 'unknown', ref: null, reason: notDone(a)! };
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
    if (p.status !== 'waiting_for_capture') return paymentOutcomeOf(p);
    // A two-stage payment of ours: held until the merchant captures or cancels it.
    if (p.metadata?.two_stage === '1') return { status: 'authorized', amount: new Decimal(p.amount!.value), ref: p.id };
    const a = await this.send('POST', `/payments/${encodeURIComponent(p.id)}/capture`, ctx, { body: { amount: p.amount }, key: `capture-${p.id}` });
    if (a.status !== 200) return { status: 'pending', ref: p.id };
    const captured = a.body as YkObject;
    return captured.status === 'waiting_for_capture' ? { status: 'pending', ref: p.id } : this.paymentOutcome(captured, ctx);
  }

  /**
   * Two-stage: POST /payments/{id}/capture with `amount` (a partial capture releases the rest;
   * more than is held is refused, 400) or POST /payments/{id}/cancel; Idempotence-Key from our
   * payment id, so a repeat whose answer was lost is the same operation. Any other answer than
   * 200: the payment is read, and what it is now is the answer (a capture repeated after the
   * first succeeded reads `succeeded`); a payment still held after a 4xx is a refusal.
   */
  async capturePayment(req: SettleHold, ctx: CallContext): Promise<PaymentOutcome> {
    return this.settleHold('capture', req, ctx);
  }

  async cancelPayment(req: SettleHold, ctx: CallContext): Promise<PaymentOutcome> {
    return this.settleHold('cancel', req, ctx);
  }

  private async settleHold(verb: 'capture' | 'cancel', req: SettleHold, ctx: CallContext): Promise<PaymentOutcome> {
    if (!req.ref) throw new ConnectorRefusedError('yookassa:no_ref', 'yookassa: no payment id to settle');
    const a = await this.send('POST', `/payments/${encodeURIComponent(req.ref)}/${verb}`, ctx, {
      body: verb === 'capture' ? { amount: money(req.amount), ...(captureReceipt(req) ? { receipt: ykReceipt(req.receipt!, this.s.ownReceipts) } : {}) } : {},
      key: `${verb}-${req.paymentId}`,
    });
    if (a.status === 200) return this.paymentOutcome(a.body as YkObject, ctx);
    const open = notDone(a);
    if (open) return { status: 'unknown', ref: req.ref, reason: open };
    const now = await this.read('payments', req.ref, ctx);
    if (now.status === 'waiting_for_capture') throw refusal(a);
    return this.paymentOutcome(now, ctx);
  }

  // ---------------------------------------------------------------- refunds

  async refund(req: CreateRefund, ctx: CallContext): Promise<OperationOutcome> {
    if (!req.paymentRef) return { status: 'failed', code: 'no_provider_ref', message: 'yookassa: the payment has no YooKassa id', ref: null };
    // The shop took roubles: YooKassa gives back the RUB share of the refund. A refund of another
    // currency admitted before that share was kept has none: failed, never guessed.
    const rub = rubOfRefund(req);
    if (!rub) return { status: 'failed', code: 'yookassa:currency_not_supported', message: `yookassa: no RUB amount for a refund in ${req.currency}`, ref: null };
    if (keyExpired(req.firstSentAt)) return expired();
    const a = await this.send('POST', '/refunds', ctx, {
      body: {
        payment_id: req.paymentRef, amount: money(rub), description: `Refund ${req.refundId}`.slice(0, 250),
        ...(req.receipt ? { receipt: ykReceipt(req.receipt, this.s.ownReceipts) } : {}),
      },
      key: req.refundId,
    });
    if (a.status === 200) return operationOutcome(a.body as YkObject);
    // 202, 429 or a 5xx still after the repeats: "result unknown, repeat with the same key"; the
    // refund stays PROCESS and is asked again with its id as the key, never failed on a guess.
    const open = notDone(a);
    if (open) return { status: 'unknown', ref: null, reason: open };
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
    // Exactly one of payout_token and payout_destination_data (yookassa-sdk-python PayoutRequest.validate).
    let destination: { payout_token: string } | { payout_destination_data: Record<string, unknown> };
    if (p.accountType === 'CARD') {
      const card = cardDestination(p.account);
      if (card.kind === 'token') {
        // The payout widget's card synonym (using-payout-widget/making-payouts-with-synonym).
        if (!takesCard(this.capabilities, card.provider)) throw new ConnectorRefusedError('yookassa:token_not_supported', `yookassa: a ${card.provider} card token is not YooKassa's`);
        destination = { payout_token: card.token };
      } else {
        // A card number goes only to a gateway with a PCI DSS certificate (using-raw-data): refused
        // here, before anything is sent, so routing may try a connector that can take it.
        if (!this.s.payoutPciDss) throw new ConnectorRefusedError('yookassa:pan_not_allowed', 'yookassa: this payout gateway takes no card numbers (payout_pci_dss is off); the card must come through the payout widget');
        destination = { payout_destination_data: { type: 'bank_card', card: { number: card.number } } };
      }
    } else {
      if (!p.bankMemberId) throw new ConnectorRefusedError('yookassa:no_bank', 'yookassa: an SBP payout needs the bank\'s SBP id');
      destination = { payout_destination_data: { type: 'sbp', phone: p.account.replace(/^\+/, ''), bank_id: p.bankMemberId } };
    }
    if (keyExpired(p.firstSentAt)) return expired();
    const a = await this.send('POST', '/payouts', ctx, {
      body: { amount: money(p.amount, p.currency), ...destination, description: `Payout ${p.payoutId}`, metadata: { payout_id: p.payoutId } },
      key: p.payoutId, payout: true,
    });
    if (a.status === 200) return operationOutcome(a.body as YkObject);
    // Money may leave after a 202 ("processing") or a 500 ("result unknown"), and a 429 was not
    // taken yet: never routed elsewhere (a second payout), asked again here with the same key.
    const open = notDone(a);
    if (open) return { status: 'unknown', ref: null, reason: open };
    throw refusal(a);
  }

  async getPayout(q: { payoutId: string; ref: string | null }, ctx: CallContext): Promise<OperationOutcome> {
    if (!q.ref) throw new ConnectorRefusedError('yookassa:no_ref', 'yookassa: no payout id to read; repeat the payout with the same idempotence key');
    const o = await this.read('payouts', q.ref, ctx);
    // Read by a reference a notification named (not one we stored): the payout must be the one
    // we made, whose metadata carries our payout id (createPayout sends it), else it says nothing of ours.
    if (o.metadata?.payout_id !== q.payoutId) {
      throw new ConnectorRefusedError('yookassa:not_ours', `yookassa: payout ${o.id} is not payout ${q.payoutId} (its metadata names ${String(o.metadata?.payout_id ?? 'none')})`);
    }
    return operationOutcome(o);
  }

  // ---------------------------------------------------------------- notifications

  /** Verified by reading the object again (notifications.ts). */
  async parseNotification(n: InboundNotification, ctx: CallContext): Promise<ParsedNotification> {
    return parseYooKassaNotification(n, {
      allowList: this.allowList,
      payouts: this.capabilities.payout.card,
      read: (kind, id) => this.send('GET', `/${OBJECTS[kind]}/${encodeURIComponent(id)}`, ctx, { payout: kind === 'payout' }),
      paymentOutcome: (p) => this.paymentOutcome(p, ctx),
    });
  }

  // ---------------------------------------------------------------- HTTP

  /**
   * "Test connection": GET /me, the shop's own settings (yookassa.ru/developers, "Информация о
   * магазине"; the SDKs call it to check the credentials): a read that creates and changes nothing.
   * Only the shop's pair is checked; the payout gateway's is used by payouts alone.
   */
  async checkConnection(ctx: CallContext): Promise<ConnectionCheck> {
    const a = await this.send('GET', '/me', ctx, {});
    if (a.status === 200) {
      // Only what the answer means is said, never its text: the console is no window onto another server's replies.
      const me = (a.body ?? {}) as { test?: unknown };
      const test = me.test === true ? 'a test shop' : me.test === false ? 'a live shop' : null;
      const mismatch = (me.test === true && this.mode === 'live') || (me.test === false && this.mode === 'test')
        ? ` This connector is in ${this.mode} mode: check that it is the account you meant.` : '';
      return { ok: true, message: `YooKassa accepted the shop's credentials (account ${this.s.shopId}${test ? `, ${test}` : ''}).${mismatch}` };
    }
    return { ok: false, message: `YooKassa answered HTTP ${a.status}${errorCodeOf(a.body)}` };
  }

  private async read(what: 'payments' | 'refunds' | 'payouts', id: string, ctx: CallContext): Promise<YkObject> {
    const a = await this.send('GET', `/${what}/${encodeURIComponent(id)}`, ctx, { payout: what === 'payouts' });
    // A read that is not answered teaches nothing: the caller asks again later.
    if (a.status !== 200) throw refusal(a);
    return a.body as YkObject;
  }

  /**
   * One request, repeated as YooKassa asks (docs/connectors/yookassa.md "Errors"): a 202 after
   * its body's `retry_after` (ms), a 429 after Retry-After or the back-off, a 5xx after the
   * back-off, each with the same body and Idempotence-Key, at most PROVIDER_REPEATS times.
   */
  private async send(method: 'GET' | 'POST', path: string, ctx: CallContext, o: { body?: unknown; key?: string; payout?: boolean }): Promise<ProviderAnswer> {
    const [user, pass] = o.payout ? [this.s.payoutAgentId ?? '', this.s.payoutSecretKey ?? ''] : [this.s.shopId, this.s.secretKey];
    const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`, accept: 'application/json' };
    if (method === 'POST') { headers['content-type'] = 'application/json'; headers['idempotence-key'] = o.key!; }
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    const url = `${this.s.baseUrl.replace(/\/+$/, '')}${path}`;
    const { answer } = await sendRepeating(() => providerFetch('yookassa', url, { method, headers, body }, ctx.signal, this.net), repeatAfter, ctx.signal);
    return answer;
  }
}

/** YooKassa's error code (`invalid_credentials`...) when the answer has one of its form; nothing else of a body is repeated. */
function errorCodeOf(body: unknown): string {
  const code = (body as Partial<YkError> | null)?.code;
  return typeof code === 'string' && /^[a-z_]{1,40}$/.test(code) ? ` ${code}` : '';
}

/**
 * A capture carries the receipt only when it takes less than is held: "если списываете только
 * часть суммы, то в запросе на подтверждение платежа необходимо дополнительно передать данные для
 * чека"; a full capture changes nothing on the receipt and needs none
 * (yookassa.ru/developers/payment-acceptance/receipts/54fz/yoomoney/payments, "Платеж в две стадии").
 */
function captureReceipt(req: SettleHold): boolean {
  return req.receipt !== undefined && req.held !== undefined && !req.amount.eq(req.held);
}
