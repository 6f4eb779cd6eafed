import type pg from 'pg';
import type { Queryable } from '../../db/client.js';
import { paymentIdMonth } from '../../lib/ids.js';

/**
 * Statements about one payment by its id touch one monthly partition of `payments`
 * (docs/adr/0012-payment-ids-name-their-month.md): the id names its creation month
 * (lib/ids.ts), so the statement is first run with that month's bounds on the partition key,
 * which the planner prunes to the one partition; only when that finds (or changes) nothing is it
 * run again without them, for ids made before the format and ids that name no month. An id that
 * names its month finds its row the first time by construction (id and created_at are made from
 * the same instant in the insert); an unknown id costs both runs.
 */

/** The bounds of a payment's creation month, or null for a statement over every month. */
export type PaymentMonth = { from: string; to: string } | null;

/** ` AND <column> >= $<n> AND <column> < $<n+1>` with its two values; nothing for no month. */
export function monthCondition(column: string, month: PaymentMonth, firstParam: number): { sql: string; values: string[] } {
  if (month === null) return { sql: '', values: [] };
  return { sql: ` AND ${column} >= $${firstParam} AND ${column} < $${firstParam + 1}`, values: [month.from, month.to] };
}

/** The month a payment id names (null: it names none), as bounds for `monthCondition`. */
export function paymentMonthOf(id: string): PaymentMonth {
  const m = paymentIdMonth(id);
  return m && { from: m.from.toISOString(), to: m.to.toISOString() };
}

/**
 * Runs `statement(month)` for the payment `id`: pruned to the month its id names, then, when
 * that returned or changed no row, over every month. The first run changes nothing when it
 * matches nothing, so running the second is always safe (updates and FOR UPDATE reads alike).
 */
export async function queryPaymentById<R extends pg.QueryResultRow>(
  c: Queryable, id: string, statement: (month: PaymentMonth) => { text: string; values: unknown[] },
): Promise<pg.QueryResult<R>> {
  const month = paymentMonthOf(id);
  if (month !== null) {
    const r = await c.query<R>(statement(month));
    if ((r.rowCount ?? 0) > 0) return r;
  }
  return c.query<R>(statement(null));
}

/** The Prisma filter for the same month (cabinet reads), or nothing. */
export function paymentMonthWhere(month: PaymentMonth): { createdAt?: { gte: Date; lt: Date } } {
  return month === null ? {} : { createdAt: { gte: new Date(month.from), lt: new Date(month.to) } };
}

/**
 * `queryPaymentById` for a statement whose text ends in its WHERE clause (the id among
 * `values`): the month's bounds on `column` (default created_at; `p.created_at` for an alias)
 * are appended, then `suffix` (e.g. ` FOR UPDATE`).
 */
export function runPaymentById<R extends pg.QueryResultRow>(
  c: Queryable, id: string, s: { text: string; values: unknown[]; suffix?: string; column?: string },
): Promise<pg.QueryResult<R>> {
  return queryPaymentById<R>(c, id, (month) => {
    const m = monthCondition(s.column ?? 'created_at', month, s.values.length + 1);
    return { text: `${s.text}${m.sql}${s.suffix ?? ''}`, values: [...s.values, ...m.values] };
  });
}
