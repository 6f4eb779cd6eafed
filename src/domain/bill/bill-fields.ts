import { Decimal } from 'decimal.js';
import { Type } from '@sinclair/typebox';
import { boolOf, FieldError, type Rule } from '../../lib/input.js';
import { listOf } from '../../lib/brackets.js';
import { AMOUNT, formatWords, readNumber, type NumberFormat } from '../../lib/amount-text.js';
import { MAX_AMOUNT, money2 } from '../../lib/money.js';
import { assertSafeUrl, checkUrlShape, UnsafeUrlError } from '../../outbox/url-guard.js';
import { ValidationError } from '../../errors.js';

/** Payer fields a bill can ask the page for (bill/create `request_fields`). */
export const REQUEST_FIELDS = ['email', 'phone', 'name', 'comment'] as const;
export type RequestField = (typeof REQUEST_FIELDS)[number];

/** A cart line shown on the page; money and quantity as normalised decimal strings. */
export interface BillItem { name: string; price: string; quantity: string }

export const MAX_ITEMS = 100;
const MAX_QUANTITY = new Decimal('999999');
const QUANTITY: NumberFormat = { places: 3 };

/** A flag of `request_fields[name]`: a boolean as everywhere, plus a checkbox's on/off and an empty value. */
const flagOf = (x: unknown): boolean | null => (x === 'on' ? true : x === 'off' || x === '' ? false : boolOf(x));

/**
 * `request_fields` in every form the clients send: `request_fields[]=email` (an array),
 * `request_fields[email]=1` or `{"email":true}` (an object of flags; a false flag leaves the
 * field out), or `"email,phone"`. Unknown names are a 422. Returned deduplicated, in the order
 * of REQUEST_FIELDS.
 */
export const requestFieldsRule: Rule<RequestField[]> = {
  required: false,
  schema: Type.Union([
    Type.Array(Type.String({ enum: [...REQUEST_FIELDS] })),
    Type.Object(Object.fromEntries(REQUEST_FIELDS.map((f) => [f, Type.Optional(Type.Union([Type.Boolean(), Type.Integer({ enum: [0, 1] }), Type.String()]))]))),
    Type.String({ description: 'Comma-separated names' }),
  ], {
    description: 'Payer fields the payment page asks for, all required there: email, phone, name, comment. ' +
      'As request_fields[]=email, request_fields[email]=1, a JSON array or a JSON object of flags',
    examples: [['email', 'phone']],
  }),
  parse(raw, f) {
    let names: unknown[];
    if (typeof raw === 'string') names = raw.split(',').map((s) => s.trim()).filter(Boolean);
    else if (Array.isArray(raw)) names = raw;
    else if (raw !== null && typeof raw === 'object') {
      names = [];
      for (const [k, flag] of Object.entries(raw as Record<string, unknown>)) {
        const on = flagOf(flag);
        if (on === null) throw new FieldError(`The ${f}.${k} field must be true or false.`);
        if (on) names.push(k);
      }
    } else throw new FieldError(`The ${f.replace(/_/g, ' ')} must be a list.`);
    const set = new Set<RequestField>();
    for (const n of names) {
      const s = typeof n === 'string' ? n.trim().toLowerCase() : '';
      if (!(REQUEST_FIELDS as readonly string[]).includes(s)) throw new FieldError(`The selected ${f.replace(/_/g, ' ')} is invalid.`);
      set.add(s as RequestField);
    }
    return REQUEST_FIELDS.filter((x) => set.has(x));
  },
};

/** A line's price (kopecks) or quantity (3 decimals) in the one number format of amount-text.ts. */
function itemDecimal(raw: unknown, field: string, format: NumberFormat): Decimal {
  const d = readNumber(raw, format);
  if (d === null) throw new FieldError(`The ${field} must be written as ${formatWords(format)}.`);
  return d;
}

/**
 * `items[n][name|price|quantity]` (or a JSON array of such objects): name a string of 1..255,
 * price a decimal >= 0 with at most 2 decimals, quantity a decimal > 0 with at most 3.
 * The first bad line is reported as `items.<n>.<field>`.
 */
export const itemsRule: Rule<BillItem[]> = {
  required: false,
  schema: Type.Array(Type.Object({
    name: Type.String({ maxLength: 255 }),
    price: Type.Union([Type.String(), Type.Number()], { description: 'Unit price, 2 decimals at most' }),
    quantity: Type.Union([Type.String(), Type.Number()], { description: 'Positive, 3 decimals at most' }),
  }), {
    description: `Cart lines shown on the payment page (at most ${MAX_ITEMS}); as items[0][name]=..., or a JSON array`,
    examples: [[{ name: 'Wool scarf', price: '1290.00', quantity: 1 }, { name: 'Delivery', price: '200', quantity: 1 }]],
  }),
  parse(raw, f) {
    const list = listOf(raw);
    if (!list) throw new FieldError(`The ${f} must be a list.`);
    if (list.length > MAX_ITEMS) throw new FieldError(`The ${f} may not have more than ${MAX_ITEMS} items.`);
    return list.map((it, i) => {
      const at = `${f}.${i}`;
      if (it === null || typeof it !== 'object' || Array.isArray(it)) throw new FieldError(`The ${at} must be an object with name, price and quantity.`);
      const o = it as Record<string, unknown>;
      const name = typeof o.name === 'string' || typeof o.name === 'number' ? String(o.name).trim() : '';
      if (name === '') throw new FieldError(`The ${at}.name field is required.`);
      if (name.length > 255) throw new FieldError(`The ${at}.name may not be greater than 255 characters.`);
      const price = itemDecimal(o.price, `${at}.price`, AMOUNT);
      if (price.lt(0) || price.gt(MAX_AMOUNT) || price.decimalPlaces() > 2) {
        throw new FieldError(`The ${at}.price must be at least 0, at most ${MAX_AMOUNT.toFixed(2)}, with at most 2 decimals.`);
      }
      const quantity = o.quantity === undefined || o.quantity === null || o.quantity === '' ? new Decimal(1) : itemDecimal(o.quantity, `${at}.quantity`, QUANTITY);
      if (quantity.lte(0) || quantity.gt(MAX_QUANTITY) || quantity.decimalPlaces() > 3) {
        throw new FieldError(`The ${at}.quantity must be greater than 0, at most ${MAX_QUANTITY.toFixed()}, with at most 3 decimals.`);
      }
      return { name, price: money2(price), quantity: quantity.toFixed() };
    });
  },
};

/**
 * Per-bill URLs: success_url and fail_url go through the outbound URL guard like a shop's
 * (the customer's browser posts the signed redirect there); return_url is a plain link, so
 * only its shape is checked (http or https, no credentials). All refusals at once (422).
 */
export async function guardBillUrls(urls: { success_url?: string; fail_url?: string; return_url?: string }, allowPrivate: boolean): Promise<void> {
  const errors: Record<string, string[]> = {};
  for (const field of ['success_url', 'fail_url', 'return_url'] as const) {
    const value = urls[field];
    if (value === undefined) continue;
    try {
      if (field === 'return_url') checkUrlShape(value);
      else await assertSafeUrl(value, allowPrivate);
    } catch (e) {
      if (!(e instanceof UnsafeUrlError)) throw e;
      errors[field] = [`The ${field.replace(/_/g, ' ')} ${e.message}.`];
    }
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}
