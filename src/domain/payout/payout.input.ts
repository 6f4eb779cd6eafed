import type { Decimal } from 'decimal.js';
import type { PersonalPayoutInput, RegularPayoutInput } from './payout.service.js';
import { defineInput, v } from '../../lib/input.js';
import { ValidationError } from '../../errors.js';
import { cardDigits, luhnValid, maskCard, normalizePhone } from '../../lib/card.js';

export const personalCreateInput = defineInput({
  amount: v.decimal({ required: true, description: 'Payout amount, RUB' }),
  payout_account_id: v.string({ required: true, max: 64, description: 'Stored payout account' }),
  order_id: v.string({ max: 255, description: 'Unique per merchant: a retry with the same parameters returns the same payouts' }),
});

export const regularCreateInput = defineInput({
  amount: v.decimal({ required: true, description: 'Payout amount' }),
  currency: v.enumOf(['RUB'] as const, { required: true, description: 'RUB' }),
  account_type: v.enumOf(['credit_card', 'sbp'] as const, { required: true }),
  account_identifier: v.string({ required: true, max: 64, description: 'Card number (credit_card) or phone (sbp)' }),
  account_bank: v.integer({ min: 1, description: 'SBP member id of the bank; required when account_type=sbp' }),
  card_holder: v.string({ max: 255, description: 'Cardholder name; required when account_type=credit_card' }),
  order_id: v.string({ max: 255, description: 'Unique per merchant: a retry with the same parameters returns the same payouts' }),
});

export const statusInput = defineInput({
  id: v.string({ max: 64, description: 'Payout id; required when order_id is absent' }),
  order_id: v.string({ max: 255, description: 'Order id; required when id is absent' }),
  payout_id: v.string({ max: 64, description: 'Alias of id (some clients send this name); id wins when both are sent' }),
});

/** payout/personal/create's body (the API's and the cabinet's form) as the service takes it. */
export function parsePersonal(input: Record<string, unknown>): PersonalPayoutInput {
  const p = personalCreateInput.parse(input);
  return { amount: p.amount, payoutAccountId: p.payout_account_id, orderId: p.order_id };
}

/** payout/status: by id (or its alias payout_id), else by order_id; one of them is required. */
export function parseStatus(input: Record<string, unknown>): { id: string } | { orderId: string } {
  const p = statusInput.parse(input);
  const id = p.id ?? p.payout_id;
  if (id !== undefined) return { id };
  if (p.order_id !== undefined) return { orderId: p.order_id };
  throw new ValidationError({
    id: ['The id field is required when order id is not present.'],
    order_id: ['The order id field is required when id is not present.'],
  });
}

/** Field rules plus the conditional ones (card checks, phone form, per-type required fields), all reported at once. */
export function parseRegular(input: Record<string, unknown>): RegularPayoutInput {
  const errors: Record<string, string[]> = {};
  // Field by field, so that one answer lists every bad field, the conditional rules included.
  const p: Record<string, unknown> = {};
  for (const k of Object.keys(regularCreateInput.rules)) {
    try {
      const out = regularCreateInput.parse(pick(input, k)) as Record<string, unknown>;
      if (input[k] !== undefined && input[k] !== null && input[k] !== '') p[k] = out[k];
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      Object.assign(errors, e.errors);
    }
  }
  const f = p as Partial<{ amount: Decimal; account_type: 'credit_card' | 'sbp'; account_identifier: string; account_bank: number; card_holder: string; order_id: string }>;
  const type = f.account_type;
  let identifier = '';
  let masked = '';
  if (type === 'credit_card') {
    if ((f.card_holder === undefined || f.card_holder.trim() === '') && !errors.card_holder) errors.card_holder = ['The card holder field is required when account type is credit_card.'];
    if (f.account_identifier !== undefined) {
      const digits = cardDigits(f.account_identifier!);
      if (!/^\d{13,19}$/.test(digits) || !luhnValid(digits)) errors.account_identifier = ['The account identifier must be a valid card number.'];
      else { identifier = digits; masked = maskCard(digits); }
    }
  } else if (type === 'sbp') {
    if (f.account_bank === undefined && !errors.account_bank) errors.account_bank = ['The account bank field is required when account type is sbp.'];
    if (f.account_identifier !== undefined) {
      const phone = normalizePhone(f.account_identifier!);
      if (!phone) errors.account_identifier = ['The account identifier must be a valid phone number (+7 and 10 digits).'];
      else { identifier = phone; masked = phone; }
    }
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return {
    amount: f.amount!,
    accountType: type === 'credit_card' ? 'CARD' : 'SBP',
    identifier,
    masked,
    cardHolder: type === 'credit_card' ? f.card_holder!.trim() : null,
    bankMemberId: type === 'sbp' ? String(f.account_bank) : null,
    orderId: f.order_id,
  };
}

/** The input with only field `k` kept, and the other required fields stubbed so parse checks `k` alone. */
function pick(input: Record<string, unknown>, k: string): Record<string, unknown> {
  const stub: Record<string, unknown> = { amount: '1', currency: 'RUB', account_type: 'sbp', account_identifier: 'x' };
  return { ...stub, [k]: input[k] };
}
