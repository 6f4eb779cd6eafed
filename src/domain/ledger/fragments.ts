import type { Currency } from '../../generated/prisma/enums.js';
import { merchantAccount } from './accounts.js';
import { merchantDeltas, transferId, type Transfer } from './ledger.js';

/**
 * Statement fragments for the hot paths, so they apply their transfer inside the one statement
 * they already send (docs/performance.md: round trips per request) and the ledger stays written
 * by this module alone. Each returns CTE text to splice after the caller's own CTEs, with the
 * parameters it reads starting at `first`, and a values function that fills them.
 */

/**
 * A credit transfer (every merchant leg credits available: a payment received), applied only
 * when `gate` (a CTE of the caller) returned a row. CTEs `lt`, `le`, `lb`. The balance is an
 * upsert: a credit never goes below zero, so the non-negative CHECK cannot trip on the proposed
 * row, and a merchant without a balance row still gets its money.
 */
export function creditFragment(gate: string, first: number): string {
  const $ = (i: number) => `$${first + i}`;
  return `lt AS (
  INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id)
  SELECT ${$(0)}, ${$(1)}::"LedgerEntryKind", ${$(2)}, ${$(3)}, ${$(4)} FROM ${gate} WHERE cardinality(${$(6)}::text[]) > 0
  RETURNING id),
le AS (
  INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount)
  SELECT lt.id, u.n::int, u.cur::"Currency", u.dr, u.cr, u.amt
    FROM lt, unnest(${$(5)}::text[], ${$(6)}::text[], ${$(7)}::text[], ${$(8)}::numeric[]) WITH ORDINALITY AS u(cur, dr, cr, amt, n)
  RETURNING 1),
lb AS (
  INSERT INTO balances AS bl (merchant_id, currency, available)
  SELECT ${$(4)}, ${$(9)}::"Currency", ${$(10)}::numeric FROM lt WHERE ${$(10)}::numeric > 0
  ON CONFLICT (merchant_id, currency) DO UPDATE SET available = bl.available + EXCLUDED.available, updated_at = now()
  RETURNING 1)`;
}

/** The 11 values of creditFragment; `t` null (nothing received) applies nothing. */
export function creditValues(t: Transfer | null, fallback: { kind: Transfer['kind']; refId: string; merchantId: string; currency: Currency }): unknown[] {
  if (t === null || t.legs.length === 0) {
    return [transferId(fallback.kind, fallback.refId), fallback.kind, 'none', fallback.refId, fallback.merchantId, [], [], [], [], fallback.currency, '0'];
  }
  const d = merchantDeltas(t);
  if (d === null || !d.locked.isZero() || !d.hold.isZero() || d.available.lt(0)) throw new Error(`transfer ${t.kind} ${t.refId} is not a credit`);
  return [
    transferId(t.kind, t.refId), t.kind, t.refType, t.refId, t.merchantId,
    t.legs.map((l) => l.currency), t.legs.map((l) => l.from), t.legs.map((l) => l.to), t.legs.map((l) => l.amount.toFixed()),
    d.currency, d.available.toFixed(),
  ];
}

/**
 * PAYOUT_LOCK transfers for every payout row `source` returns (columns id, amount, commission):
 * amount available -> locked, commission available -> hold (postings.payoutCreated, one
 * transfer per payout), and the merchant's balance moved by their sum. CTEs `lt`, `le`, `bal`
 * (`bal` returns a row only when the merchant has its balances row). Parameters: `merchant`
 * (text), `first` the currency, `first + 1` the three accounts (payoutLockValues).
 */
export function payoutLockFragment(source: string, merchant: string, first: number): string {
  const cur = `$${first}`;
  const acc = `$${first + 1}::text[]`;
  return `lt AS (
  INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id)
  SELECT 'PAYOUT_LOCK:' || s.id, 'PAYOUT_LOCK', 'payout', s.id, ${merchant} FROM ${source} s
  RETURNING id),
le AS (
  INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount)
  SELECT 'PAYOUT_LOCK:' || s.id, x.leg, ${cur}::"Currency", (${acc})[1], x.cr, x.amt
    FROM ${source} s, LATERAL (VALUES (1::int, (${acc})[2], s.amount), (2::int, (${acc})[3], s.commission)) AS x(leg, cr, amt)
   WHERE x.amt > 0
  RETURNING 1),
bal AS (
  UPDATE balances SET available = available - t.l - t.h, locked = locked + t.l, hold = hold + t.h, updated_at = now()
    FROM (SELECT sum(amount) AS l, sum(commission) AS h FROM ${source} HAVING count(*) > 0) t
   WHERE merchant_id = ${merchant} AND currency = ${cur}::"Currency"
  RETURNING 1)`;
}

export function payoutLockValues(merchantId: string, currency: Currency): unknown[] {
  return [currency, [merchantAccount(merchantId, 'available', currency), merchantAccount(merchantId, 'locked', currency), merchantAccount(merchantId, 'hold', currency)]];
}
