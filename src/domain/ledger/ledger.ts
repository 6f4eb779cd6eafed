import { Decimal } from 'decimal.js';
import type { Queryable } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import type { Currency, LedgerEntryKind } from '../../generated/prisma/enums.js';
import { MERCHANT_BUCKETS, parseAccount, type MerchantBucket } from './accounts.js';
import { statement } from '../../db/statement.js';
import { ledgerParams, transfersSql, type LedgerParams } from './fragments.js';


/** One entry: `amount` (> 0) debited from `from` and credited to `to`, both in `currency`. */
export interface Leg { from: string; to: string; amount: Decimal; currency: Currency }

/**
 * One business event's movement of money. Its id is `<kind>:<refId>`: the ledger applies it
 * once. Legs touching merchant accounts all belong to `merchantId`, in one currency (the
 * balances row they move).
 */
export interface Transfer {
  kind: LedgerEntryKind;
  /** 'payment' | 'payout' | 'refund' | 'adjustment' | ... */
  refType: string;
  refId: string;
  merchantId: string | null;
  memo?: string;
  legs: Leg[];
}

export interface BalanceRow { available: string; locked: string; hold: string }

/** The ledger refused the transfer because the event already moved money. */
export class DuplicatePostingError extends Error {}

export const transferId = (kind: string, refId: string): string => `${kind}:${refId}`;

/** What a transfer does to its merchant's balances row (null: it touches no merchant account). */
export function merchantDeltas(t: Transfer): { currency: Currency; available: Decimal; locked: Decimal; hold: Decimal } | null {
  let out: { currency: Currency; available: Decimal; locked: Decimal; hold: Decimal } | null = null;
  const touch = (account: string, sign: 1 | -1, amount: Decimal) => {
    const a = parseAccount(account);
    if (a.merchantId === null) return;
    if (a.merchantId !== t.merchantId) throw new Error(`transfer ${t.kind} ${t.refId} moves another merchant's account ${account}`);
    out ??= { currency: a.currency, available: new Decimal(0), locked: new Decimal(0), hold: new Decimal(0) };
    if (out.currency !== a.currency) throw new Error(`transfer ${t.kind} ${t.refId} moves merchant accounts in two currencies`);
    const b = a.kind as MerchantBucket;
    out[b] = out[b].add(amount.mul(sign));
  };
  for (const l of t.legs) {
    touch(l.to, 1, l.amount);
    touch(l.from, -1, l.amount);
  }
  return out;
}

// One round trip: the transfer, its entries and its merchant's balance move, rendered by the
// one ledger writer (fragments.ts). The balances CHECK refuses any bucket below zero, so an
// overdraft never commits, whatever the concurrency: the row lock of the UPDATE serialises
// transfers of one balance.
const POST = statement<keyof LedgerParams>('ledger_post', `WITH ledger_gate AS (SELECT 1),
${transfersSql('ledger_gate', 'update')}
SELECT available, locked, hold FROM lb`);

const ENSURE_SQL = `INSERT INTO balances (merchant_id, currency) VALUES ($1, $2::"Currency") ON CONFLICT DO NOTHING`;
const APPLY_SQL = `
UPDATE balances SET available = available + $3, locked = locked + $4, hold = hold + $5, updated_at = now()
 WHERE merchant_id = $1 AND currency = $2::"Currency"
RETURNING available::text, locked::text, hold::text`;

/** Creates a merchant's balance rows and ledger accounts (three per currency) in the caller's transaction. */
export async function ensureBalances(c: Queryable, merchantId: string): Promise<void> {
  await c.query(
    `WITH b AS (
       INSERT INTO balances (merchant_id, currency) SELECT $1, unnest(enum_range(NULL::"Currency")) ON CONFLICT DO NOTHING
     )
     INSERT INTO ledger_accounts (id, currency, kind, merchant_id)
     SELECT c::text || ':merchant:' || $1 || ':' || k, c, k, $1
       FROM unnest(enum_range(NULL::"Currency")) c, unnest($2::text[]) k
     ON CONFLICT DO NOTHING`,
    [merchantId, MERCHANT_BUCKETS],
  );
}

/**
 * Applies one transfer inside the caller's transaction: its entries and its merchant's balance
 * move, one round trip; the transfer is built by postings.ts.
 * Throws DomainError('balance_not_enough') when a bucket would go negative (the caller's
 * transaction is then aborted and must roll back), DuplicatePostingError when the transfer
 * (kind, refId) was already applied.
 */
export async function post(c: Queryable, t: Transfer): Promise<BalanceRow> {
  const d = merchantDeltas(t);
  const params = ledgerParams(t.merchantId, d?.currency ?? 'RUB', [t], 'update');
  try {
    // Named: prepared once per connection (every payout and refund transfer goes through here).
    const r = await c.query<BalanceRow>(POST.bind(params));
    if (d === null) return { available: '0', locked: '0', hold: '0' };
    if (r.rows[0]) return r.rows[0];
    // No balance row yet: the entries are in, so create the row and apply the same deltas.
    const deltas = [d.available.toFixed(), d.locked.toFixed(), d.hold.toFixed()];
    await c.query(ENSURE_SQL, [t.merchantId, d.currency]);
    const r2 = await c.query<BalanceRow>(APPLY_SQL, [t.merchantId, d.currency, ...deltas]);
    return r2.rows[0]!;
  } catch (e) {
    throw ledgerError(e, `${t.kind} ${t.refId}`);
  }
}

// A provider conflict's debit (docs/adr/0021-provider-answer-after-final-state.md):
// `debt`, the one allowance of the balances CHECK (available + debt >= 0), is first raised to
// what available will fall below zero, then the transfer goes through post() as every other.
// The balances_debt_shrinks trigger lowers the debt only when available rises, so it stays
// exactly what available is below zero and no ordinary debit can ever use it.
const RAISE_DEBT_SQL = `
UPDATE balances SET debt = greatest(debt, $3::numeric - available), updated_at = now()
 WHERE merchant_id = $1 AND currency = $2::"Currency"`;

/**
 * Applies a transfer that follows a provider's answer against a final state we had already
 * made (a payout we returned that the provider paid): the money moved, so the merchant's
 * available may go below zero here and only here. Throws DuplicatePostingError when the
 * transfer was applied already. Not for anything a merchant or an operator asks for.
 */
export async function postOverdrawing(c: Queryable, t: Transfer): Promise<BalanceRow> {
  const d = merchantDeltas(t);
  if (d !== null && d.available.lt(0)) {
    await c.query(ENSURE_SQL, [t.merchantId, d.currency]);
    await c.query(RAISE_DEBT_SQL, [t.merchantId, d.currency, d.available.neg().toFixed()]);
  }
  return post(c, t);
}

/**
 * The error a failed transfer statement means: an overdraft refused by the balances CHECK is
 * api:error.balance_not_enough, a second transfer for one (kind, ref_id) a DuplicatePostingError.
 * For callers that post inside a larger statement of their own (payment finish, payout creation).
 */
export function ledgerError(e: unknown, what: string): unknown {
  const err = e as { code?: string; constraint?: string };
  if (err.code === '23514' && err.constraint === 'balances_non_negative_check') return new DomainError('balance_not_enough');
  if (err.code === '23505' && err.constraint === 'ledger_transfers_pkey') return new DuplicatePostingError(`${what} already posted`);
  return e;
}

export { verifyBalances, verifyLedger, listAccounts } from './verify.js';
