import { Decimal } from 'decimal.js';
import type pg from 'pg';
import { DomainError } from '../../http/errors.js';
import type { Currency, LedgerEntryKind } from '../../generated/prisma/enums.js';

/** Anything that runs SQL inside the caller's transaction (a pg PoolClient). */
export type Queryable = Pick<pg.PoolClient, 'query'>;

export interface Posting {
  merchantId: string;
  currency: Currency;
  kind: LedgerEntryKind;
  /** 'payment' | 'payout' | 'refund' | 'adjustment' */
  refType: string;
  /** With `kind`, unique: one business event moves money once. */
  refId: string;
  available?: Decimal;
  locked?: Decimal;
  hold?: Decimal;
  memo?: string;
}

export interface BalanceRow { available: string; locked: string; hold: string }

/** The ledger refused the posting because the event already moved money. */
export class DuplicatePostingError extends Error {}

// One round trip: append the entry and apply its deltas to the balance row. The balances
// CHECK refuses any bucket below zero, so an overdraft never commits, whatever the concurrency:
// the row lock of the UPDATE serialises postings of one balance. (An INSERT .. ON CONFLICT
// upsert cannot be used: PostgreSQL checks the proposed row, a negative delta, before the
// conflict.) Balance rows are created with the merchant; APPLY_SQL covers one made without.
const POST_SQL = `
WITH e AS (
  INSERT INTO ledger_entries (merchant_id, currency, kind, ref_type, ref_id, delta_available, delta_locked, delta_hold, memo)
  VALUES ($1, $2::"Currency", $3::"LedgerEntryKind", $4, $5, $6, $7, $8, $9)
  RETURNING merchant_id, currency, delta_available, delta_locked, delta_hold
)
UPDATE balances b
   SET available = b.available + e.delta_available, locked = b.locked + e.delta_locked,
       hold = b.hold + e.delta_hold, updated_at = now()
  FROM e
 WHERE b.merchant_id = e.merchant_id AND b.currency = e.currency
RETURNING b.available::text, b.locked::text, b.hold::text`;

const ENSURE_SQL = `INSERT INTO balances (merchant_id, currency) VALUES ($1, $2::"Currency") ON CONFLICT DO NOTHING`;
const APPLY_SQL = `
UPDATE balances SET available = available + $3, locked = locked + $4, hold = hold + $5, updated_at = now()
 WHERE merchant_id = $1 AND currency = $2::"Currency"
RETURNING available::text, locked::text, hold::text`;

/** Creates a merchant's balance rows (one per currency) in the caller's transaction. */
export async function ensureBalances(c: Queryable, merchantId: string): Promise<void> {
  await c.query(
    `INSERT INTO balances (merchant_id, currency) SELECT $1, unnest(enum_range(NULL::"Currency")) ON CONFLICT DO NOTHING`,
    [merchantId],
  );
}

/**
 * Appends one ledger entry and moves the balance by its deltas, inside the caller's transaction.
 * Throws DomainError('balance_not_enough') when a bucket would go negative (the caller's
 * transaction is then aborted and must roll back), DuplicatePostingError when (kind, refId)
 * was already posted.
 */
export async function post(c: Queryable, p: Posting): Promise<BalanceRow> {
  const zero = new Decimal(0);
  const [a, l, h] = [p.available ?? zero, p.locked ?? zero, p.hold ?? zero];
  try {
    const deltas = [a.toFixed(), l.toFixed(), h.toFixed()];
    // Named: prepared once per connection (every payment, payout and refund posts; the plan of
    // this CTE is most of its database cost otherwise; docs/performance.md).
    const r = await c.query<BalanceRow>({
      name: 'ledger_post', text: POST_SQL, values: [p.merchantId, p.currency, p.kind, p.refType, p.refId, ...deltas, p.memo ?? null],
    });
    if (r.rows[0]) return r.rows[0];
    // No balance row yet: the entry is in, so create the row and apply the same deltas.
    await c.query(ENSURE_SQL, [p.merchantId, p.currency]);
    const r2 = await c.query<BalanceRow>(APPLY_SQL, [p.merchantId, p.currency, ...deltas]);
    return r2.rows[0]!;
  } catch (e) {
    throw ledgerError(e, `${p.kind} ${p.refId}`);
  }
}

/**
 * The error a failed posting statement means: an overdraft refused by the balances CHECK is
 * api:error.balance_not_enough, a second entry for one (kind, ref_id) a DuplicatePostingError.
 * For callers that post inside a larger statement of their own (payout creation).
 */
export function ledgerError(e: unknown, what = 'posting'): unknown {
  const err = e as { code?: string; constraint?: string };
  if (err.code === '23514' && err.constraint === 'balances_non_negative_check') return new DomainError('balance_not_enough');
  if (err.code === '23505' && err.constraint === 'ledger_entries_kind_ref_id_key') return new DuplicatePostingError(`${what} already posted`);
  return e;
}

/** Drift between each balance and the sum of its entries (empty when the books balance). */
export async function verifyBalances(c: Queryable): Promise<Array<{ merchant_id: string; currency: string; available: string; sum_available: string; locked: string; sum_locked: string; hold: string; sum_hold: string }>> {
  const r = await c.query(`
    WITH s AS (
      SELECT merchant_id, currency, sum(delta_available) AS a, sum(delta_locked) AS l, sum(delta_hold) AS h
      FROM ledger_entries GROUP BY merchant_id, currency
    )
    SELECT coalesce(b.merchant_id, s.merchant_id) AS merchant_id, coalesce(b.currency, s.currency)::text AS currency,
           coalesce(b.available, 0)::text AS available, coalesce(s.a, 0)::text AS sum_available,
           coalesce(b.locked, 0)::text AS locked, coalesce(s.l, 0)::text AS sum_locked,
           coalesce(b.hold, 0)::text AS hold, coalesce(s.h, 0)::text AS sum_hold
    FROM balances b FULL JOIN s ON s.merchant_id = b.merchant_id AND s.currency = b.currency
    WHERE coalesce(b.available, 0) <> coalesce(s.a, 0) OR coalesce(b.locked, 0) <> coalesce(s.l, 0) OR coalesce(b.hold, 0) <> coalesce(s.h, 0)`);
  return r.rows;
}
