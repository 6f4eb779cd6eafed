import { Decimal } from 'decimal.js';
import type { FastifyRequest } from 'fastify';
import { v } from './input.js';
import { ValidationError } from '../errors.js';

/** The JSON (or form) body as an object; anything else is an empty object. */
export function bodyObject(req: FastifyRequest): Record<string, unknown> {
  const b = req.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

/** Collects Laravel-style field errors and throws them all at once. */
export class Errors {
  readonly map: Record<string, string[]> = {};
  add(field: string, message: string): void { (this.map[field] ??= []).push(message); }
  get empty(): boolean { return Object.keys(this.map).length === 0; }
  throwIfAny(): void { if (!this.empty) throw new ValidationError(this.map); }
}

const label = (f: string) => f.replace(/^.*\./, '').replace(/_/g, ' ');

export interface DecimalRule {
  /** Smallest allowed value; `exclusive` makes it strict (> min). */
  min: Decimal.Value;
  exclusive?: boolean;
  max?: Decimal.Value;
  /** Most decimal places the column keeps; more is a format error, never rounded. */
  places: number;
}

/**
 * A decimal field (string or number) in the wire format (lib/amount-text.ts: `places` decimals,
 * a leading '-' only when `min` is negative) checked against its column's range; null on error.
 */
export function decimalField(errors: Errors, field: string, raw: unknown, rule: DecimalRule): Decimal | null {
  let d: Decimal;
  try {
    d = v.decimal({ places: rule.places, signed: new Decimal(rule.min).isNegative() }).parse(raw, field);
  } catch (e) {
    errors.add(field, (e as Error).message);
    return null;
  }
  const min = new Decimal(rule.min);
  if (rule.exclusive ? d.lte(min) : d.lt(min)) {
    errors.add(field, rule.exclusive ? `The ${label(field)} must be greater than ${min.toFixed()}.` : `The ${label(field)} must be at least ${min.toFixed()}.`);
    return null;
  }
  if (rule.max !== undefined && d.gt(rule.max)) {
    errors.add(field, `The ${label(field)} may not be greater than ${new Decimal(rule.max).toFixed()}.`);
    return null;
  }
  return d;
}

/** A boolean (true/false, 1/0, "true"/"false"); undefined on error. */
export function boolField(errors: Errors, field: string, raw: unknown): boolean | undefined {
  try {
    return v.bool().parse(raw, field);
  } catch (e) {
    errors.add(field, (e as Error).message);
    return undefined;
  }
}

/** One of `values` (case-insensitive), returned as listed; undefined on error. */
export function enumField<T extends string>(errors: Errors, field: string, raw: unknown, values: readonly T[]): T | undefined {
  try {
    return v.enumOf(values).parse(raw, field);
  } catch (e) {
    errors.add(field, (e as Error).message);
    return undefined;
  }
}

/** A nested object field (`grants`, `fees`); null when absent, 422 when not an object. */
export function objectField(errors: Errors, field: string, raw: unknown): Record<string, unknown> | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    errors.add(field, `The ${label(field)} must be an object.`);
    return null;
  }
  return raw as Record<string, unknown>;
}

/** Path ids: anything absurd is simply not found. */
export const isIdLike = (s: string): boolean => /^[A-Za-z0-9_-]{1,64}$/.test(s);
