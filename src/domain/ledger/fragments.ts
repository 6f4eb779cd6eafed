import { Decimal } from 'decimal.js';
import type { Currency } from '../../generated/prisma/enums.js';
import { merchantDeltas, transferId, type Transfer } from './ledger.js';

/**
 * How every statement writes the ledger: the transfers are values built by postings.ts (the
 * only place a leg rule lives), and this one renderer turns them into CTEs with named
 * parameters (src/db/statement.ts) that a statement splices after its own CTEs. The hot paths
 * (payment finishing, payout creation) thus apply their transfers inside the one statement they
 * already send (docs/performance.md: round trips per request), and `post()` sends the same CTEs
 * alone.
 *
 * CTEs: `lt` (the transfers), `le` (their entries), `lb` (the merchant's balances row moved by
 * the transfers' sum, returning the new balances). Nothing is written unless `gate` (a CTE of
 * the caller, or the ledger's own `ledger_gate`) returns a row, and no entry without its
 * transfer. A transfer id applies once (ledger_transfers_pkey).
 *
 * `balance`: `update` moves an existing balances row (the non-negative CHECK refuses an
 * overdraft; an upsert cannot, PostgreSQL checks the proposed row before the conflict);
 * `credit` upserts it, for transfers that only add to a merchant's buckets (a payment received
 * reaches a merchant whatever rows it has).
 */
export function transfersSql(gate: string, balance: 'update' | 'credit'): string {
  const lb = balance === 'credit'
    ? `lb AS (
  INSERT INTO balances AS bl (merchant_id, currency, available, locked, hold)
  SELECT :ledger_merchant, :ledger_currency::"Currency", :ledger_available::numeric, :ledger_locked::numeric, :ledger_hold::numeric
    FROM (SELECT 1 FROM lt LIMIT 1) x
   WHERE :ledger_merchant::text IS NOT NULL
  ON CONFLICT (merchant_id, currency) DO UPDATE SET available = bl.available + EXCLUDED.available,
         locked = bl.locked + EXCLUDED.locked, hold = bl.hold + EXCLUDED.hold, updated_at = now()
  RETURNING bl.available::text, bl.locked::text, bl.hold::text)`
    : `lb AS (
  UPDATE balances b SET available = b.available + :ledger_available::numeric, locked = b.locked + :ledger_locked::numeric,
         hold = b.hold + :ledger_hold::numeric, updated_at = now()
   WHERE b.merchant_id = :ledger_merchant AND b.currency = :ledger_currency::"Currency" AND EXISTS (SELECT 1 FROM lt)
  RETURNING b.available::text, b.locked::text, b.hold::text)`;
  return `lt AS (
  INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id, memo)
  SELECT u.id, u.kind::"LedgerEntryKind", u.ref_type, u.ref_id, :ledger_merchant, u.memo
    FROM (SELECT 1 FROM ${gate} LIMIT 1) g,
         unnest(:ledger_ids::text[], :ledger_kinds::text[], :ledger_ref_types::text[], :ledger_ref_ids::text[], :ledger_memos::text[])
           AS u(id, kind, ref_type, ref_id, memo)
  RETURNING id),
le AS (
  INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount)
  SELECT u.tid, u.leg, u.cur::"Currency", u.dr, u.cr, u.amt
    FROM unnest(:ledger_entry_transfers::text[], :ledger_entry_legs::int[], :ledger_entry_currencies::text[],
                :ledger_entry_debits::text[], :ledger_entry_credits::text[], :ledger_entry_amounts::numeric[])
           AS u(tid, leg, cur, dr, cr, amt)
   WHERE u.tid IN (SELECT id FROM lt)
  RETURNING 1),
${lb}`;
}

/** The parameters of transfersSql, by name. */
export type LedgerParams = Record<
  | 'ledger_ids' | 'ledger_kinds' | 'ledger_ref_types' | 'ledger_ref_ids' | 'ledger_memos'
  | 'ledger_entry_transfers' | 'ledger_entry_legs' | 'ledger_entry_currencies' | 'ledger_entry_debits' | 'ledger_entry_credits' | 'ledger_entry_amounts'
  | 'ledger_merchant' | 'ledger_currency' | 'ledger_available' | 'ledger_locked' | 'ledger_hold', unknown>;

/**
 * The values of transfersSql for `transfers` (none: the statement applies nothing). Every
 * merchant account they move is `merchantId`'s, in `currency`; their balance move is the sum of
 * their merchant deltas. `credit` refuses a transfer that takes anything from the merchant.
 */
export function ledgerParams(merchantId: string | null, currency: Currency, transfers: Transfer[], balance: 'update' | 'credit'): LedgerParams {
  const zero = new Decimal(0);
  const sum = { available: zero, locked: zero, hold: zero };
  const t = { ids: [] as string[], kinds: [] as string[], refTypes: [] as string[], refIds: [] as string[], memos: [] as (string | null)[] };
  const e = { tids: [] as string[], legs: [] as number[], curs: [] as string[], drs: [] as string[], crs: [] as string[], amts: [] as string[] };
  for (const x of transfers) {
    if (x.legs.length === 0) throw new Error(`transfer ${x.kind} ${x.refId} has no legs`);
    if (x.merchantId !== merchantId) throw new Error(`transfer ${x.kind} ${x.refId} is merchant ${x.merchantId}'s, not ${merchantId}'s`);
    const d = merchantDeltas(x);
    if (d !== null) {
      if (d.currency !== currency) throw new Error(`transfer ${x.kind} ${x.refId} moves ${d.currency}, not ${currency}`);
      if (balance === 'credit' && (d.available.lt(0) || d.locked.lt(0) || d.hold.lt(0))) throw new Error(`transfer ${x.kind} ${x.refId} is not a credit`);
      sum.available = sum.available.add(d.available);
      sum.locked = sum.locked.add(d.locked);
      sum.hold = sum.hold.add(d.hold);
    }
    const id = transferId(x.kind, x.refId);
    t.ids.push(id); t.kinds.push(x.kind); t.refTypes.push(x.refType); t.refIds.push(x.refId); t.memos.push(x.memo?.slice(0, 500) ?? null);
    x.legs.forEach((l, i) => {
      if (!l.amount.gt(0)) throw new Error(`transfer ${x.kind} ${x.refId}: a leg of ${l.amount.toFixed()}`);
      e.tids.push(id); e.legs.push(i + 1); e.curs.push(l.currency); e.drs.push(l.from); e.crs.push(l.to); e.amts.push(l.amount.toFixed());
    });
  }
  return {
    ledger_ids: t.ids, ledger_kinds: t.kinds, ledger_ref_types: t.refTypes, ledger_ref_ids: t.refIds, ledger_memos: t.memos,
    ledger_entry_transfers: e.tids, ledger_entry_legs: e.legs, ledger_entry_currencies: e.curs,
    ledger_entry_debits: e.drs, ledger_entry_credits: e.crs, ledger_entry_amounts: e.amts,
    ledger_merchant: merchantId, ledger_currency: currency,
    ledger_available: sum.available.toFixed(), ledger_locked: sum.locked.toFixed(), ledger_hold: sum.hold.toFixed(),
  };
}
