import { defineInput, v } from '../../lib/input.js';
import { ValidationError } from '../../errors.js';
import { itemsRule, requestFieldsRule } from './bill-fields.js';

/** A year: longer-lived bills are not bills with a lifetime. */
export const MAX_TTL = 365 * 86400;
const url = (description: string) => v.string({ max: 2048, description });

/**
 * A bill's fields as a merchant sends them, one definition for every face that creates bills:
 * the merchant API's bill/create (which also documents it) and the cabinet's new-bill form.
 */
export const billCreateInput = defineInput({
  amount: v.decimal({ required: true, description: 'Payment amount: positive, at most 2 decimals, at most 99999999.99' }),
  shop_id: v.string({ required: true, max: 64, description: 'Shop ID' }),
  order_id: v.string({ max: 255, description: 'Merchant order ID; returned in postbacks as InvId' }),
  description: v.string({ max: 1000, description: 'Payment description' }),
  type: v.enumOf(['normal', 'multi'] as const, { description: 'normal (default): one successful payment; multi: many' }),
  currency_in: v.enumOf(['RUB', 'USD', 'EUR'] as const, { description: "Currency the customer sees; default: the shop's" }),
  custom: v.stringOrJson({ max: 1000, description: 'Returned in postbacks as custom; a JSON object is kept (and returned) as its JSON text' }),
  payer_pays_commission: v.bool({ description: '1: the payer pays the fee on top of the amount' }),
  capture: v.bool({ description: 'false (0): two-stage card payment: the money is held on the payer\'s card until the merchant captures it (in full or in part) or cancels it; default true' }),
  save_payment_method: v.bool({ description: 'true (1): the payment page offers the payer to save the card for later charges by the merchant (POST /api/v1/payment/charge); saved only when the payer ticks the consent box and the payment succeeds; not with capture=false nor payment_method=SBP' }),
  name: v.string({ max: 255, description: 'Purpose of the payment, shown on the payment form' }),
  payment_method: v.enumOf(['BANK_CARD', 'SBP'] as const, { description: 'Preselects this method and allows no other' }),
  ttl: v.integer({ min: 1, max: MAX_TTL, description: `Seconds the bill lives (1..${MAX_TTL}); after that it takes no payment (POST /pay answers 403 api:error.bill_expired)` }),
  success_url: url("Where the customer's browser posts after a payment that received money; overrides the shop's Success URL"),
  fail_url: url("Where the customer's browser posts after a failed payment; overrides the shop's Fail URL"),
  return_url: url('A "back to shop" link on the payment page'),
  locale: v.enumOf(['ru', 'en'] as const, { description: 'Language of the payment page (its ?lang= still wins)' }),
  payer_email: v.string({ max: 255, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, description: "Prefills the payer's e-mail on the page" }),
  request_fields: requestFieldsRule,
  items: itemsRule,
});

/**
 * Saving a card (docs/adr/0074-saved-cards-and-recurring-charges.md) is for one-stage card
 * payments: refused on the field with a two-stage bill or a bill paid by SBP only (422).
 */
export function assertSaveMethodAllowed(p: { save_payment_method?: boolean; capture?: boolean; payment_method?: 'BANK_CARD' | 'SBP' }): void {
  if (p.save_payment_method !== true) return;
  if (p.capture === false) throw ValidationError.field('save_payment_method', 'A card cannot be saved on a two-stage bill (capture=false).');
  if (p.payment_method === 'SBP') throw ValidationError.field('save_payment_method', 'Only a card can be saved: the bill is paid by SBP only.');
}
