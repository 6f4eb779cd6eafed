import { Decimal } from 'decimal.js';
import { DEBIT_NORMAL, parseAccount } from './accounts.js';
import type { Queryable } from '../../db/client.js';

// Every account's debits and credits, from the entries (each entry is one of each).
const ACCOUNT_SUMS = `
  SELECT acct, sum(d) AS debits, sum(c) AS credits FROM (
    SELECT debit_account AS acct, amount AS d, 0::numeric AS c FROM ledger_entries
    UNION ALL SELECT credit_account, 0, amount FROM ledger_entries) x
  GROUP BY acct`;

export interface Drift { merchant_id: string; currency: string; available: string; sum_available: string; locked: string; sum_locked: string; hold: string; sum_hold: string }

/** Drift between each merchant balances row and its three accounts' entries (empty when they agree). */
export async function verifyBalances(c: Queryable): Promise<Drift[]> {
  const r = await c.query<Drift>(`
    WITH s AS (${ACCOUNT_SUMS}),
    m AS (
      SELECT split_part(acct, ':', 3) AS merchant_id, split_part(acct, ':', 1) AS currency,
             coalesce(sum(credits - debits) FILTER (WHERE split_part(acct, ':', 4) = 'available'), 0) AS a,
             coalesce(sum(credits - debits) FILTER (WHERE split_part(acct, ':', 4) = 'locked'), 0) AS l,
             coalesce(sum(credits - debits) FILTER (WHERE split_part(acct, ':', 4) = 'hold'), 0) AS h
        FROM s WHERE split_part(acct, ':', 2) = 'merchant' GROUP BY 1, 2
    )
    SELECT coalesce(b.merchant_id, m.merchant_id) AS merchant_id, coalesce(b.currency::text, m.currency) AS currency,
           coalesce(b.available, 0)::text AS available, coalesce(m.a, 0)::text AS sum_available,
           coalesce(b.locked, 0)::text AS locked, coalesce(m.l, 0)::text AS sum_locked,
           coalesce(b.hold, 0)::text AS hold, coalesce(m.h, 0)::text AS sum_hold
      FROM balances b FULL JOIN m ON m.merchant_id = b.merchant_id AND m.currency = b.currency::text
     WHERE coalesce(b.available, 0) <> coalesce(m.a, 0) OR coalesce(b.locked, 0) <> coalesce(m.l, 0) OR coalesce(b.hold, 0) <> coalesce(m.h, 0)`);
  return r.rows;
}

export interface TrialBalanceRow { currency: string; debits: string; credits: string }
export type LedgerProblem =
  | ({ type: 'balance_drift' } & Drift)
  | { type: 'unbalanced'; currency: string; debits: string; credits: string }
  | { type: 'empty_transfer'; transfer_id: string };

/**
 * The books check: the trial balance per currency (every account's net balance on its debit or
 * credit side; the two columns are equal when every transfer balanced), every merchant balance
 * equal to its entries, every transfer with entries (an entry on an unknown account cannot be
 * written: foreign keys).
 */
export async function verifyLedger(c: Queryable): Promise<{ ok: boolean; trial_balance: TrialBalanceRow[]; problems: LedgerProblem[] }> {
  const trial = await c.query<TrialBalanceRow>(`
    WITH s AS (${ACCOUNT_SUMS})
    SELECT split_part(acct, ':', 1) AS currency,
           coalesce(sum(debits - credits) FILTER (WHERE debits > credits), 0)::text AS debits,
           coalesce(sum(credits - debits) FILTER (WHERE credits > debits), 0)::text AS credits
      FROM s GROUP BY 1 ORDER BY 1`);
  const problems: LedgerProblem[] = [];
  for (const t of trial.rows) if (!new Decimal(t.debits).eq(t.credits)) problems.push({ type: 'unbalanced', ...t });
  for (const d of await verifyBalances(c)) problems.push({ type: 'balance_drift', ...d });
  // Every entry's accounts exist: the foreign keys of ledger_entries refuse a leg on any other
  // when it is written (prisma/migrations/20261127100000_ledger_entry_accounts_exist).
  const empty = await c.query<{ transfer_id: string }>(`
    SELECT t.id AS transfer_id FROM ledger_transfers t WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.transfer_id = t.id) ORDER BY 1`);
  for (const e of empty.rows) problems.push({ type: 'empty_transfer', transfer_id: e.transfer_id });
  return { ok: problems.length === 0, trial_balance: trial.rows, problems };
}

export interface AccountView {
  id: string; currency: string; kind: string; merchant_id: string | null; connector: string | null;
  debits: string; credits: string;
  /** On the account's normal side: debits - credits for debit-normal accounts, else credits - debits. */
  balance: string;
  normal: 'debit' | 'credit';
}

/**
 * Every account (of one currency, or all; of one merchant, or all) with its totals and balance:
 * the catalogue's, and any operator account entries name that it lacks (a new connector's).
 */
export async function listAccounts(c: Queryable, filter: { currency?: string; merchantId?: string } = {}): Promise<AccountView[]> {
  const r = await c.query<{ id: string; debits: string; credits: string }>(`
    WITH s AS (${ACCOUNT_SUMS})
    SELECT coalesce(a.id, s.acct) AS id, coalesce(s.debits, 0)::text AS debits, coalesce(s.credits, 0)::text AS credits
      FROM ledger_accounts a FULL JOIN s ON s.acct = a.id
     WHERE split_part(coalesce(a.id, s.acct), ':', 1) = coalesce($1::text, split_part(coalesce(a.id, s.acct), ':', 1))
       AND ($2::text IS NULL OR split_part(coalesce(a.id, s.acct), ':', 3) = $2 AND split_part(coalesce(a.id, s.acct), ':', 2) = 'merchant')
     ORDER BY split_part(coalesce(a.id, s.acct), ':', 2) = 'merchant', 1`, [filter.currency ?? null, filter.merchantId ?? null]);
  return r.rows.map((row) => {
    const info = parseAccount(row.id);
    const a = { id: row.id, currency: info.currency, kind: info.kind, merchant_id: info.merchantId, connector: info.connector, debits: row.debits, credits: row.credits };
    const normal = DEBIT_NORMAL.includes(a.kind) ? 'debit' : 'credit';
    const net = new Decimal(a.debits).sub(a.credits);
    return { ...a, normal, balance: (normal === 'debit' ? net : net.neg()).toFixed(8) };
  });
}
