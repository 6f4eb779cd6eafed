import type pg from 'pg';
import { ValidationError } from '../errors.js';

/**
 * Keyset (cursor) pages of a merchant's rows on (created_at, id): one query, which the
 * (merchant_id, created_at, id) index serves whatever the page depth. The cursor is opaque to
 * clients; how a page is answered on the wire (links, meta) is the API face's business
 * (src/http/pagination.ts).
 */

export interface Cursor { t: Date; id: string; next: boolean }

/** Which page of which window. */
export interface KeysetParams {
  start: Date;
  /** Exclusive upper bound, or null for "up to now". */
  end: Date | null;
  perPage: number;
  cursor: Cursor | null;
  shopId: string | undefined;
}

/** One page of rows and the cursors to its neighbours (null: none). */
export interface KeysetPage<Row> {
  rows: Row[];
  next: string | null;
  prev: string | null;
}

export interface KeysetQuery {
  /** Table with `merchant_id`, `created_at`, `id` columns and a (merchant_id, created_at, id) index. */
  table: string;
  /** SELECT list (trusted SQL); must include created_at and id as returned columns. */
  columns: string;
  merchantId: string;
  params: KeysetParams;
  /** Extra equality filters: column (trusted name) -> value; undefined values are skipped. */
  filters?: Record<string, unknown>;
  /** 'desc' (default, newest first) or 'asc' (oldest first). */
  order?: 'asc' | 'desc';
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify({ t: c.t.toISOString(), i: c.id, n: c.next ? 1 : 0 })).toString('base64url');
}

/** The cursor a client sent back; anything else is a 422 on `cursor`. */
export function decodeCursor(s: string): Cursor {
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

/** One page of a merchant's rows in the listing's order. */
export async function keysetPage<Row extends { created_at: Date; id: string }>(
  db: Pick<pg.Pool, 'query'>, q: KeysetQuery,
): Promise<KeysetPage<Row>> {
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
  return { rows, next, prev };
}
