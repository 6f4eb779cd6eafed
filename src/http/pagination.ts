import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { defineInput, v } from '../lib/input.js';
import { ValidationError } from '../errors.js';
import { parseSearchDate } from '../lib/time.js';
import { decodeCursor, type Cursor, type KeysetPage, type KeysetParams } from '../db/keyset.js';

/**
 * Search endpoints (bill/search, payment/search, payout/search): a date window plus keyset
 * (cursor) pagination on (created_at, id), newest first, answered Laravel cursorPaginate style:
 * `data`, `links: {prev, next}`, `meta: {path, per_page, next_cursor, prev_cursor}`.
 */

export const PER_PAGE_DEFAULT = 15;
export const PER_PAGE_MAX = 1000;
const DEFAULT_WINDOW_MS = 30 * 86400_000;

/** The input every search accepts; spread it into an endpoint's own `defineInput` if it has more. */
export const searchRules = {
  start_date: v.string({ max: 40, description: 'YYYY-MM-DD or YYYY-MM-DD HH:MM:SS[.ffffff] in the service time zone, or ISO 8601 with T and Z/±HH:MM (that instant); default: 30 days ago' }),
  finish_date: v.string({ max: 40, description: 'Same forms as start_date; a date alone covers its whole day, a time its whole second (with a fraction, its millisecond); default: now' }),
  per_page: v.integer({ min: 1, max: PER_PAGE_MAX, description: `Page size, default ${PER_PAGE_DEFAULT}, at most ${PER_PAGE_MAX}` }),
  cursor: v.string({ max: 512, description: 'Opaque cursor from meta.next_cursor / meta.prev_cursor' }),
  shop_id: v.string({ max: 64, description: 'Only this shop' }),
};
export const searchInput = defineInput(searchRules);

export interface SearchParams extends KeysetParams {
  /** The search parameters the client sent, repeated in the page links. */
  echo: Record<string, string>;
}

/** Validates the search input (422 with the bad fields) into a date window and a page request. */
export function parseSearchParams(input: Record<string, unknown>, tz: string, now = new Date()): SearchParams {
  const p = searchInput.parse(input);
  const errors: Record<string, string[]> = {};
  let start: Date | null = null;
  let end: Date | null = null;
  if (p.start_date !== undefined) {
    start = parseSearchDate(p.start_date, tz, 'start');
    if (!start) errors.start_date = ['The start date does not match the format Y-m-d, Y-m-d H:i:s or Y-m-d H:i:s.u.'];
  }
  if (p.finish_date !== undefined) {
    end = parseSearchDate(p.finish_date, tz, 'end');
    if (!end) errors.finish_date = ['The finish date does not match the format Y-m-d, Y-m-d H:i:s or Y-m-d H:i:s.u.'];
  }
  let cursor: Cursor | null = null;
  if (p.cursor !== undefined) {
    try {
      cursor = decodeCursor(p.cursor);
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      Object.assign(errors, e.errors);
    }
  }
  if (start && end && end.getTime() <= start.getTime()) {
    errors.finish_date = ['The finish date must be a date after or equal to start date.'];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  const echo: Record<string, string> = {};
  for (const k of ['start_date', 'finish_date', 'shop_id'] as const) if (p[k] !== undefined) echo[k] = p[k]!;
  if (p.per_page !== undefined) echo.per_page = String(p.per_page);
  return {
    start: start ?? new Date((end ?? now).getTime() - DEFAULT_WINDOW_MS),
    end,
    perPage: p.per_page ?? PER_PAGE_DEFAULT,
    cursor,
    shopId: p.shop_id,
    echo,
  };
}

/**
 * A page request without a date window (a bill's payments): `per_page` (default `perPageDefault`)
 * and `cursor`; `echo` repeats `keep` (e.g. the bill id) in the page links.
 */
export function pageParams(p: { per_page?: number; cursor?: string }, perPageDefault: number, keep: Record<string, string>): SearchParams {
  const cursor = p.cursor === undefined ? null : decodeCursor(p.cursor);
  const echo: Record<string, string> = { ...keep };
  if (p.per_page !== undefined) echo.per_page = String(p.per_page);
  return { start: new Date(0), end: null, perPage: p.per_page ?? perPageDefault, cursor, shopId: undefined, echo };
}

export interface Page<T> {
  success: true;
  data: T[];
  links: { prev: string | null; next: string | null };
  meta: { path: string; per_page: number; next_cursor: string | null; prev_cursor: string | null };
}

/** Full URL of the current endpoint (no query string) under the public base URL. */
export function endpointUrl(req: FastifyRequest, publicBaseUrl: string): string {
  return publicBaseUrl + (req.routeOptions.url ?? req.url.split('?')[0]);
}

/** A keyset page as the API answers it, Laravel cursorPaginate style; `map` makes each row its wire view. */
export function toPage<Row, Out>(p: KeysetPage<Row>, params: SearchParams, path: string, map: (row: Row) => Out): Page<Out> {
  const link = (c: string | null) => {
    if (c === null) return null;
    const qs = new URLSearchParams({ ...params.echo, cursor: c });
    return `${path}?${qs.toString()}`;
  };
  return {
    success: true,
    data: p.rows.map(map),
    links: { prev: link(p.prev), next: link(p.next) },
    meta: { path, per_page: params.perPage, next_cursor: p.next, prev_cursor: p.prev },
  };
}

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** Response schema of a search page whose items are `item`. */
export function pageSchema(item: TSchema): TSchema {
  return Type.Object({
    success: Type.Boolean(),
    data: Type.Array(item),
    links: Type.Object({ prev: NullableString, next: NullableString }),
    meta: Type.Object({
      path: Type.String(),
      per_page: Type.Integer(),
      next_cursor: NullableString,
      prev_cursor: NullableString,
    }),
  });
}
