import { Decimal } from 'decimal.js';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.js';
import type { MerchantFixture } from './merchant.js';

export const SUCCESS_CARD = '4242424242424242';
export const DECLINED_CARD = '4000000000000002';
/** Pays in the sandbox; refunds of payments made with it FAIL. */
export const REFUND_FAIL_CARD = '5555555555554444';

export interface BillOptions {
  amount?: string;
  type?: 'NORMAL' | 'MULTI';
  currencyIn?: 'RUB' | 'USD' | 'EUR';
  orderId?: string;
  custom?: string;
  name?: string;
  description?: string;
  payerPaysCommission?: boolean;
  paymentMethod?: 'BANK_CARD' | 'SBP';
  /** false: two-stage, the payment held until the operator captures it (docs/adr/0073). */
  capture?: boolean;
}

/** A bill through the same service as bill/create. */
export async function createBill(t: TestApp, m: MerchantFixture, o: BillOptions = {}): Promise<string> {
  const b = await t.app.services.bills.create({ id: m.merchantId }, {
    amount: new Decimal(o.amount ?? '100.00'), shopId: m.shopId, type: o.type, currencyIn: o.currencyIn, orderId: o.orderId,
    custom: o.custom, name: o.name, description: o.description, payerPaysCommission: o.payerPaysCommission, paymentMethod: o.paymentMethod,
    ...(o.capture === undefined ? {} : { capture: o.capture }),
  });
  return b.id;
}

/** A card form (valid expiry and CVC) for `number`. */
export const cardForm = (number = SUCCESS_CARD): Record<string, string> => ({
  method: 'BANK_CARD', card_number: number, card_expiry: '12/39', card_cvc: '123',
});

/** POST /pay/{billId} in JSON mode, as the sandbox tests and SDKs call it. */
export function payRequest(t: TestApp, billId: string, form: Record<string, string> = cardForm(), headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST', url: `/pay/${billId}`,
    // urlencoded like a browser form
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  });
}

/** Creates a bill and pays it through the payment page; returns the JSON answer. */
export async function payNewBill(t: TestApp, m: MerchantFixture, bill: BillOptions = {}, form: Record<string, string> = cardForm()): Promise<{ billId: string; paymentId: string; status: string; body: { payment_id: string; status: string; redirect: { url: string | null; fields: Record<string, string> } } }> {
  const billId = await createBill(t, m, bill);
  const r = await payRequest(t, billId, form);
  if (r.statusCode !== 200) throw new Error(`pay ${billId}: ${r.statusCode} ${r.body}`);
  const body = r.json();
  return { billId, paymentId: body.payment_id, status: body.status, body };
}

/** A two-stage bill of `amount` paid by card through the sandbox: the payment held (PROCESS with authorized_amount). */
export async function heldPayment(t: TestApp, m: MerchantFixture, amount: string): Promise<string> {
  const p = await payNewBill(t, m, { amount, capture: false });
  if (p.status !== 'PROCESS') throw new Error(`hold ${p.paymentId}: ${p.status}`);
  return p.paymentId;
}

/**
 * A card saved by a payment whose payer consented (a bill of `m`'s shop, created with `auth`,
 * m's own token unless given); its saved method id, for POST /api/v1/payment/charge.
 */
export async function savedCardOf(t: TestApp, m: MerchantFixture, card = SUCCESS_CARD, auth: Record<string, string> = m.auth): Promise<string> {
  const r0 = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: auth, payload: { shop_id: m.shopId, amount: '10.00', save_payment_method: true } });
  if (r0.statusCode !== 200) throw new Error(`bill/create: ${r0.statusCode} ${r0.body}`);
  const r = await payRequest(t, r0.json().bill_id, { ...cardForm(card), save_payment_method: '1' });
  const id = r.json().payment_id as string;
  if (r.json().status === 'PROCESS') {
    // The sandbox's lost answer (card 0119): the provider is asked, and says it paid and saved.
    await t.app.services.payments.askProvider({ id, connector: 'sandbox', ref: null, data: null });
  }
  const row = (await t.db.pool.query(`SELECT id FROM saved_payment_methods WHERE payment_id = $1`, [id])).rows[0];
  if (!row) throw new Error(`payment ${id} saved no card`);
  return row.id as string;
}
