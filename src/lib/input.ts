import type { Decimal } from 'decimal.js';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../errors.js';
import { expandBrackets } from './brackets.js';
import { AMOUNT, formatWords, readNumber, type NumberFormat } from './amount-text.js';

/**
 * Request input as existing clients send it: query string, JSON (also on GET), urlencoded or
 * multipart, merged (body wins), bracket keys (`items[0][name]`) nested. `null` and absent
 * are the same.
 */
export function requestInput(req: FastifyRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const src of [req.query, req.body]) {
    if (src && typeof src === 'object' && !Array.isArray(src)) {
      for (const [k, v] of Object.entries(expandBrackets(src as Record<string, unknown>))) {
        if (v !== null && v !== undefined) out[k] = v;
      }
    }
  }
  return out;
}

const TRUE_WORDS = new Set(['1', 'true', 'yes']);
const FALSE_WORDS = new Set(['0', 'false', 'no']);

/**
 * A boolean as clients write it: JSON true/false, 1/0, or the text true/false/1/0/yes/no in any
 * case (Python's clients send `str(True)`, "True"); null for anything else.
 */
export function boolOf(x: unknown): boolean | null {
  if (typeof x === 'boolean') return x;
  if (x === 1 || x === 0) return x === 1;
  if (typeof x !== 'string') return null;
  const s = x.trim().toLowerCase();
  return TRUE_WORDS.has(s) ? true : FALSE_WORDS.has(s) ? false : null;
}

/** A field's message, collected by `defineInput` into the 422's `errors`. */
export class FieldError extends Error {}

export interface Rule<T, Req extends boolean = boolean> {
  parse(value: unknown, field: string): T;
  schema: TSchema;
  required: Req;
}

const label = (f: string) => f.replace(/_/g, ' ');

function scalar(value: unknown, field: string): string | number | boolean {
  if (Array.isArray(value) || (typeof value === 'object' && value !== null)) {
    throw new FieldError(`The ${label(field)} must be a single value.`);
  }
  return value as string | number | boolean;
}

function make<T, Req extends boolean>(required: Req, schema: TSchema, parse: (v: unknown, field: string) => T): Rule<T, Req> {
  return { required, schema, parse };
}

interface Common { required?: boolean; description?: string }

/** `required: true` in a rule's options makes its parsed field `T`, else `T | undefined`. */
type ReqOf<O> = O extends { required: true } ? true : false;
const req = <O extends Common>(o: O) => !!o.required as ReqOf<O>;

export const v = {
  string<O extends Common & { max?: number; min?: number; pattern?: RegExp }>(o: O = {} as O): Rule<string, ReqOf<O>> {
    const max = o.max ?? 255;
    return make(req(o), Type.String({ maxLength: max, description: o.description }), (raw, f) => {
      const x = scalar(raw, f);
      if (typeof x === 'boolean') throw new FieldError(`The ${label(f)} must be a string.`);
      const s = String(x);
      if (s.length > max) throw new FieldError(`The ${label(f)} may not be greater than ${max} characters.`);
      if (o.min !== undefined && s.length < o.min) throw new FieldError(`The ${label(f)} must be at least ${o.min} characters.`);
      if (o.pattern && !o.pattern.test(s)) throw new FieldError(`The ${label(f)} format is invalid.`);
      return s;
    });
  },
  /**
   * A string; a JSON object or array (a bot sends `custom` as `{"user_id":1}`) is kept as its
   * JSON text, so it comes back as such.
   */
  stringOrJson<O extends Common & { max?: number }>(o: O = {} as O): Rule<string, ReqOf<O>> {
    const max = o.max ?? 255;
    return make(req(o), Type.Union([Type.String({ maxLength: max }), Type.Object({}, { additionalProperties: true })], { description: o.description }), (raw, f) => {
      if (typeof raw === 'boolean') throw new FieldError(`The ${label(f)} must be a string.`);
      const s = raw !== null && typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
      if (s.length > max) throw new FieldError(`The ${label(f)} may not be greater than ${max} characters.`);
      return s;
    });
  },
  /**
   * A number in the wire format (amount-text.ts: digits, an optional dot, at most `places`
   * decimals, 2 unless said; a leading '-' only when `signed`) as a Decimal; anything else is a
   * 422 on the field naming the format. Range rules belong to the service (api:error.invalid_amount).
   */
  decimal<O extends Common & Partial<NumberFormat>>(o: O = {} as O): Rule<Decimal, ReqOf<O>> {
    const format: NumberFormat = { places: o.places ?? AMOUNT.places, signed: o.signed ?? false };
    const words = formatWords(format);
    return make(req(o), Type.Union([Type.String(), Type.Number()], { description: o.description ? `${o.description}; ${words}` : words }), (raw, f) => {
      const d = readNumber(scalar(raw, f), format);
      if (d === null) throw new FieldError(`The ${label(f)} must be written as ${words}.`);
      return d;
    });
  },
  integer<O extends Common & { min?: number; max?: number }>(o: O = {} as O): Rule<number, ReqOf<O>> {
    return make(req(o), Type.Integer({ description: o.description }), (raw, f) => {
      const x = scalar(raw, f);
      const s = String(x).trim();
      if (typeof x === 'boolean' || !/^-?\d{1,15}$/.test(s)) throw new FieldError(`The ${label(f)} must be an integer.`);
      const n = Number(s);
      if (o.min !== undefined && n < o.min) throw new FieldError(`The ${label(f)} must be at least ${o.min}.`);
      if (o.max !== undefined && n > o.max) throw new FieldError(`The ${label(f)} may not be greater than ${o.max}.`);
      return n;
    });
  },
  /** A boolean as clients write it (`boolOf`). */
  bool<O extends Common>(o: O = {} as O): Rule<boolean, ReqOf<O>> {
    const schema = Type.Union([Type.Boolean(), Type.Integer({ enum: [0, 1] }), Type.String({ description: 'true/false, 1/0, yes/no, in any case (True, False)' })], { description: o.description });
    return make(req(o), schema, (raw, f) => {
      const b = boolOf(scalar(raw, f));
      if (b === null) throw new FieldError(`The ${label(f)} field must be true or false.`);
      return b;
    });
  },
  /** One of `values`, matched case-insensitively, returned as listed. */
  enumOf<T extends string, O extends Common = Common>(values: readonly T[], o: O = {} as O): Rule<T, ReqOf<O>> {
    return make(req(o), Type.String({ enum: [...values], description: o.description }), (raw, f) => {
      const x = scalar(raw, f);
      const s = String(x).toUpperCase();
      const hit = values.find((val) => val.toUpperCase() === s);
      if (hit === undefined || typeof x === 'boolean') throw new FieldError(`The selected ${label(f)} is invalid.`);
      return hit;
    });
  },
};

/** What `parse` returns: required fields are `T`, the others `T | undefined`. */
type Parsed<R extends Record<string, Rule<unknown>>> = {
  [K in keyof R]: R[K] extends Rule<infer T, infer Req> ? (Req extends true ? T : T | undefined) : never;
};

export interface InputSpec<R extends Record<string, Rule<unknown>>> {
  rules: R;
  /** JSON schema for the OpenAPI document (not used to validate). */
  schema: TSchema;
  parse(input: Record<string, unknown>): Parsed<R>;
}

/**
 * Declares an endpoint's fields once: `parse` validates (all fields, Laravel-style errors; an
 * empty string counts as absent for a required field), `schema` documents them.
 */
export function defineInput<R extends Record<string, Rule<unknown>>>(rules: R): InputSpec<R> {
  const props: Record<string, TSchema> = {};
  const required: string[] = [];
  for (const [k, r] of Object.entries(rules)) {
    props[k] = r.required ? r.schema : Type.Optional(r.schema);
    if (r.required) required.push(k);
  }
  return {
    rules,
    schema: Type.Object(props, { additionalProperties: true }),
    parse(input) {
      const errors: Record<string, string[]> = {};
      const out: Record<string, unknown> = {};
      for (const [k, r] of Object.entries(rules)) {
        const raw = input[k];
        if (raw === undefined || raw === null || raw === '') {
          if (r.required) errors[k] = [`The ${label(k)} field is required.`];
          continue;
        }
        try {
          out[k] = r.parse(raw, k);
        } catch (e) {
          if (!(e instanceof FieldError)) throw e;
          errors[k] = [e.message];
        }
      }
      if (Object.keys(errors).length > 0) throw new ValidationError(errors);
      return out as never;
    },
  };
}

export type { Parsed };
