import { Type, type TSchema } from '@sinclair/typebox';
import type pg from 'pg';
import type { FastifyRequest } from 'fastify';
import { defineInput, v } from './input.js';
import { ValidationError } from '../errors.js';
import { parseSearchDate } from '../lib/time.js';

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

interface Cursor { t: Date; id: string; next: boolean }

export interface SearchParams {
  start: Date;
  /** Exclusive upper bound, or null for "up to now". */
  end: Date | null;
  perPage: number;
  cursor: Cursor | null;
  shopId: string | undefined;
  /** The search parameters the client sent, repeated in the page links. */
  echo: Record<string, string>;
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify({ t: c.t.toISOString(), i: c.id, n: c.next ? 1 : 0 })).toString('base64url');
}

function decodeCursor(s: string): Cursor {
  const bad = () => ValidationError.field('cursor', 'The cursor is invalid.');
  if (!/^[A-Za-z0-9_-]+$/.test(s)) throw bad();
  let o: unknown;
  try {
    o = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!o || typeof o !== 'object') throw bad();
  const { t, i, n } = o as Record<string, unknown>;
  if (typeof t !== 'string' || typeof i !== 'string' || i.length === 0 || i.length > 64 || (n !== 0 && n !== 1)) throw bad();
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(t)) throw bad();
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) throw bad();
  return { t: d, id: i, next: n === 1 };
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

export interface KeysetSearch<Row, Out> {
  /** Table with `merchant_id`, `created_at`, `id` columns and a (merchant_id, created_at, id) index. */
  table: string;
  /** SELECT list (trusted SQL); must include created_at and id as returned columns. */
  columns: string;
  merchantId: string;
  params: SearchParams;
  /** Extra equality filters: column (trusted name) -> value; undefined values are skipped. */
  filters?: Record<string, unknown>;
  /** Full URL of the endpoint without query, e.g. `${publicBaseUrl}/api/v1/bill/search`. */
  path: string;
  map(row: Row): Out;
  /** 'desc' (default, newest first) or 'asc' (oldest first). */
  order?: 'asc' | 'desc';
}

/** Full URL of the current endpoint (no query string) under the public base URL. */
export function endpointUrl(req: FastifyRequest, publicBaseUrl: string): string {
  return publicBaseUrl + (req.routeOptions.url ?? req.url.split('?')[0]);
}

/**
 * One page of a merchant's rows, newest first, by keyset on (created_at, id): one query, which
 * the (merchant_id, created_at, id) index serves whatever the page depth.
 */
export async function keysetSearch<Row extends { created_at: Date; id: string }, Out>(
  db: pg.Pool | pg.PoolClient, q: KeysetSearch<Row, Out>,
): Promise<Page<Out>> {
  const { params } = q;
  const values: unknown[] = [q.merchantId, params.start];
  const where = ['merchant_id = $1', 'created_at >= $2'];
  if (params.end) { values.push(params.end); where.push(`created_at < $${values.length}`); }
  for (const [col, val] of Object.entries({ shop_id: params.shopId, ...(q.filters ?? {}) })) {
    if (val === undefined) continue;
    values.push(val);
    where.push(`${col} = $${values.length}`);
  }
  const backwards = params.cursor !== null && !params.cursor.next;
  // A page is read in the listing's order, a previous page in the reverse order (then flipped).
  const descending = (q.order !== 'asc') !== backwards;
  if (params.cursor) {
    values.push(params.cursor.t, params.cursor.id);
    const op = descending ? '<' : '>';
    where.push(`(created_at, id) ${op} ($${values.length - 1}, $${values.length})`);
  }
  const dir = descending ? 'DESC' : 'ASC';
  values.push(params.perPage + 1);
  const sql = `SELECT ${q.columns} FROM ${q.table} WHERE ${where.join(' AND ')}
    ORDER BY created_at ${dir}, id ${dir} LIMIT $${values.length}`;
  const rows = (await db.query<Row>(sql, values)).rows;
  const more = rows.length > params.perPage;
  if (more) rows.pop();
  if (backwards) rows.reverse();

  const first = rows[0];
  const last = rows[rows.length - 1];
  let next: string | null = null;
  let prev: string | null = null;
  if (last && (backwards || more)) next = encodeCursor({ t: last.created_at, id: last.id, next: true });
  if (first && (backwards ? more : params.cursor !== null)) prev = encodeCursor({ t: first.created_at, id: first.id, next: false });

  const link = (c: string | null) => {
    if (c === null) return null;
    const qs = new URLSearchParams({ ...params.echo, cursor: c });
    return `${q.path}?${qs.toString()}`;
  };
  return {
    success: true,
    data: rows.map(q.map),
    links: { prev: link(prev), next: link(next) },
    meta: { path: q.path, per_page: params.perPage, next_cursor: next, prev_cursor: prev },
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
