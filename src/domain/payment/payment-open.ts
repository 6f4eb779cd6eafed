import type { Config } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import { maskCard } from '../../lib/card.js';
import { newPaymentIdSuffix } from '../../lib/ids.js';
import { assertTransition, PAYABLE_FROM, payRefusal } from '../bill/bill.states.js';
import type { Connector } from '../providers/connector.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import type { Receipt } from '../receipt/receipt.js';
import { receiptToJson } from '../receipt/receipt-json.js';
import { paymentCandidates, quoteFor, readPayableBill, type PayableBill, type Quote } from './payable-bill.js';
import { PayValidationError, type PayInput } from './pay-input.js';
import { receiptFor } from './payment-finish.js';
import { openPayment } from './payment.repository.js';
import { assertPaymentTransition } from './payment.states.js';
import { nextCheckDelayMs } from './reconcile-schedule.js';

/** A saved card a charge opens its payment with (docs/adr/0074-saved-cards-and-recurring-charges.md). */
export interface ChargeOf {
  id: string; connector: Connector; providerId: string; mask: string | null;
  /** Where the charge's receipt goes (a fiscalized shop): the merchant's, or the saving payer's. */
  payer: { email: string | null; phone: string | null };
}

/** The payer form parsed against the bill (its fixed method) and whether the card form is the provider's. */
export type PayInputOf = (bill: PayableBill, o: { hostedCard: boolean }) => PayInput;

/** A payment form's token that already opened a payment (the page finds it: paymentOfForm). */
export class FormAlreadyUsedError extends DomainError {
  constructor() { super('payment_in_progress'); }
}

/** A payment opened and not sent yet: what its first send needs. */
export interface OpenedPayment {
  bill: PayableBill; paymentId: string; createdAt: string; quote: Quote; input: PayInput;
  /** The connectors that may take it, in routing order; the first is on record with it. */
  candidates: Connector[];
  saveConsent: boolean; charge?: ChargeOf;
  /** The receipt built when it was opened, which every connector tried gets (docs/adr/0087). */
  receipt: Receipt | null;
}

/**
 * Opens payments: reads the bill, checks it, then ONE atomic statement (`pay_open`) moves the
 * bill to PROCESS only if it is still payable (a NORMAL bill NEW or FAIL, a MULTI bill any
 * status, and active) and inserts the payment from that update, so the check and the change
 * cannot be split by a concurrent payment: of 20 concurrent POSTs on a NORMAL bill one opens a
 * payment and the others find the bill in PROCESS (409).
 */
export class PaymentOpening {
  constructor(private readonly config: Config, private readonly connectors: ConnectorRegistry) {}

  /** `input` may be a parser of the raw form, run on the bill (its fixed method, which never changes). */
  async open(c: Queryable, billId: string, rawInput: PayInput | PayInputOf, ip: string | null, formNonce: string | null, charge?: ChargeOf): Promise<OpenedPayment> {
    if (!/^[A-Za-z0-9]{1,64}$/.test(billId)) throw new DomainError('bill_not_found');
    const bill = await this.payableBillOrThrow(c, billId);
    if (charge) return this.openSaved(c, bill, charge, rawInput as PayInput);
    // The card route's connectors first: whether the card form is the provider's decides what the form must carry.
    const cardCandidates = bill.paymentMethod === 'SBP' ? [] : await paymentCandidates(this.connectors, bill, 'BANK_CARD');
    const input = typeof rawInput === 'function' ? rawInput(bill, { hostedCard: cardCandidates[0]?.capabilities.hostsCardForm ?? false }) : rawInput;
    if (bill.paymentMethod && bill.paymentMethod !== input.method) {
      throw new PayValidationError({ method: 'method_not_allowed' });
    }
    const quote = quoteFor(this.config, bill, input.method);
    if (!quote) throw new DomainError('rate-not-found');
    // A card the payer typed into a provider's own form never reached us: a connector that needs
    // the card number cannot be a fallback for it (it would decline a payer who did nothing wrong).
    const candidates = input.method === 'SBP' ? await paymentCandidates(this.connectors, bill, 'SBP')
      : input.card ? cardCandidates : cardCandidates.filter((c) => c.capabilities.hostsCardForm);
    return this.insert(c, bill, billId, input, quote, candidates, ip, formNonce);
  }

  /** A charge of a saved card: its own connector only (the one that saved it), no payer. */
  private async openSaved(c: Queryable, bill: PayableBill, charge: ChargeOf, input: PayInput): Promise<OpenedPayment> {
    const quote = quoteFor(this.config, bill, 'BANK_CARD');
    if (!quote) throw new DomainError('rate-not-found');
    return this.insert(c, bill, bill.id, input, quote, [charge.connector], null, null, charge);
  }

  private async insert(
    c: Queryable, bill: PayableBill, billId: string, input: PayInput, quote: Quote, candidates: Connector[], ip: string | null, formNonce: string | null, charge?: ChargeOf,
  ): Promise<OpenedPayment> {
    // The payer's consent counts only on a bill that offered it (the page shows the box then only).
    const saveConsent = !charge && bill.savePaymentMethod && input.method === 'BANK_CARD' && input.saveConsent === true;
    // No connector may take this method's money (production: no enabled live-mode connector on
    // the route): refused before any payment is opened; never handed to the sandbox.
    if (candidates.length === 0) throw new DomainError('method_unavailable');
    // A MULTI bill already in PROCESS (another payment running) stays there.
    if (bill.status !== 'PROCESS') assertTransition(bill.status, 'PROCESS', bill.type);
    assertPaymentTransition('NEW', 'PROCESS');
    // The payment's receipt, built once from the shop's settings now and kept with it (docs/adr/0087).
    const receipt = receiptFor(bill, quote, input.payer);
    const row = await openPayment(c, newPaymentIdSuffix(), {
      billId: bill.id, merchantId: bill.merchantId, shopId: bill.shopId, method: input.method, amountRub: quote.dueRub.toFixed(2), currency: bill.currency,
      rate: bill.currency === 'RUB' ? null : quote.rate.toFixed(), commission: quote.commission.toFixed(2),
      fromCard: charge ? charge.mask : input.card ? maskCard(input.card.number) : null, ip, payer: input.payer, payableFrom: PAYABLE_FROM,
      connector: candidates[0]?.name ?? null, firstCheckMs: nextCheckDelayMs(this.config, 0), formNonce, saveConsent,
      paymentMethodId: charge?.id ?? null, receipt: receipt ? receiptToJson(receipt) : null,
    }).catch((e: { code?: string; constraint?: string }) => {
      // The same payment form posted twice at once: the other POST opened the payment.
      if (e.code === '23505' && e.constraint === 'payment_form_nonces_pkey') throw new FormAlreadyUsedError();
      throw e;
    });
    if (row === null) {
      // The bill changed since it was read (another payment opened or finished it, or it was
      // deactivated): answer with what it is now.
      await this.payableBillOrThrow(c, billId);
      throw new DomainError('payment_in_progress');
    }
    return { bill, paymentId: row.id, createdAt: row.created_at, quote, input, candidates, saveConsent, charge, receipt };
  }

  /**
   * The bill, or the refusal a payer gets for it: unknown 404, finished 403, inactive 403,
   * expired 403 (api:error.bill_expired), in progress 409.
   */
  private async payableBillOrThrow(c: Queryable, billId: string): Promise<PayableBill> {
    const bill = await readPayableBill(c, this.connectors, billId, 'pay_read_bill');
    if (!bill) throw new DomainError('bill_not_found');
    const refusal = payRefusal(bill);
    if (refusal) throw new DomainError(refusal);
    return bill;
  }
}
