import { Decimal } from 'decimal.js';
import type pg from 'pg';
import { DomainError } from '../../errors.js';
import type { Currency, LedgerEntryKind } from '../../generated/prisma/enums.js';
import { merchantAccount, MERCHANT_BUCKETS, operatorAccount, parseAccount, type MerchantBucket, type OperatorKind } from './accounts.js';

/** Anything that runs SQL inside the caller's transaction (a pg PoolClient). */
export type Queryable = Pick<pg.PoolClient, 'query'>;

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

/**
 * A transfer written as moves of one merchant's buckets (the shape callers had before the
 * ledger was double-entry, kept so a new single-merchant kind is one call): what the buckets do
 * not move between themselves goes to or comes from the operator account `against` (per bucket
 * or one for all), by default the kind's own (COUNTERPART).
 */
export interface Posting {
  merchantId: string;
  currency: Currency;
  kind: LedgerEntryKind;
  refType: string;
  refId: string;
  available?: Decimal;
  locked?: Decimal;
  hold?: Decimal;
  memo?: string;
  against?: OperatorKind | Partial<Record<MerchantBucket, OperatorKind>>;
  /** The connector of a per-connector counterpart (acquirer or payout clearing); default sandbox. */
  connector?: string;
}

export interface BalanceRow { available: string; locked: string; hold: string }

/** The ledger refused the transfer because the event already moved money. */
export class DuplicatePostingError extends Error {}

/** The operator account a merchant-bucket posting of each kind settles against. */
const COUNTERPART: Partial<Record<string, OperatorKind | Partial<Record<MerchantBucket, OperatorKind>>>> = {
  PAYMENT_CREDIT: 'acquirer_clearing',
  PAYOUT_DEBIT: { locked: 'payout_clearing', hold: 'fee_revenue' },
  REFUND_DEBIT: 'refund_clearing',
  ADJUSTMENT: 'adjustments',
  CHARGEBACK_DEBIT: 'chargebacks',
};

export const transferId = (kind: string, refId: string): string => `${kind}:${refId}`;

/**
 * The legs of a bucket posting: sources (buckets going down) pay destinations (buckets going
 * up) in the order available, locked, hold; what is left on either side settles against the
 * counterpart. PAYOUT_LOCK (-105, +100, +5) is available -> locked 100, available -> hold 5.
 */
export function transferOf(p: Posting): Transfer {
  const zero = new Decimal(0);
  const deltas: Record<MerchantBucket, Decimal> = { available: p.available ?? zero, locked: p.locked ?? zero, hold: p.hold ?? zero };
  const acct = (b: MerchantBucket) => merchantAccount(p.merchantId, b, p.currency);
  const against = p.against ?? COUNTERPART[p.kind];
  const counter = (b: MerchantBucket): string => {
    const kind = typeof against === 'string' ? against : against?.[b];
    if (!kind) throw new Error(`${p.kind} ${p.refId}: no operator account to settle ${b} against`);
    return operatorAccount(kind, p.currency, kind === 'acquirer_clearing' || kind === 'payout_clearing' ? p.connector ?? 'sandbox' : undefined);
  };
  const sources = MERCHANT_BUCKETS.filter((b) => deltas[b].lt(0)).map((b) => ({ b, left: deltas[b].neg() }));
  const dests = MERCHANT_BUCKETS.filter((b) => deltas[b].gt(0)).map((b) => ({ b, left: deltas[b] }));
  const legs: Leg[] = [];
  for (const s of sources) {
    for (const d of dests) {
      const amount = Decimal.min(s.left, d.left);
      if (amount.lte(0)) continue;
      legs.push({ from: acct(s.b), to: acct(d.b), amount, currency: p.currency });
      s.left = s.left.sub(amount);
      d.left = d.left.sub(amount);
    }
  }
  for (const s of sources) if (s.left.gt(0)) legs.push({ from: acct(s.b), to: counter(s.b), amount: s.left, currency: p.currency });
  for (const d of dests) if (d.left.gt(0)) legs.push({ from: counter(d.b), to: acct(d.b), amount: d.left, currency: p.currency });
  return { kind: p.kind, refType: p.refType, refId: p.refId, merchantId: p.merchantId, memo: p.memo, legs };
}

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

// One round trip: the transfer, its entries and its merchant's balance move. The balances CHECK
// refuses any bucket below zero, so an overdraft never commits, whatever the concurrency: the
// row lock of the UPDATE serialises transfers of one balance. (An INSERT .. ON CONFLICT upsert
// cannot be used: PostgreSQL checks the proposed row, a negative delta, before the conflict.)
const TRANSFER_CTES = `
WITH t AS (
  INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id, memo)
  VALUES ($1, $2::"LedgerEntryKind", $3, $4, $5, $6) RETURNING id
), e AS (
  INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount)
  SELECT t.id, u.n::int, u.cur::"Currency", u.dr, u.cr, u.amt FROM t, unnest($7::text[], $8::text[], $9::text[], $10::numeric[]) WITH ORDINALITY AS u(cur, dr, cr, amt, n)
  RETURNING 1
)`;
const POST_SQL = `${TRANSFER_CTES}
UPDATE balances b
   SET available = b.available + $12, locked = b.locked + $13, hold = b.hold + $14, updated_at = now()
 WHERE b.merchant_id = $5 AND b.currency = $11::"Currency"
RETURNING b.available::text, b.locked::text, b.hold::text`;
const POST_OPERATOR_SQL = `${TRANSFER_CTES} SELECT count(*)::int AS n FROM e`;

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
 * move, one round trip. Accepts a Transfer, or a Posting of merchant buckets (transferOf).
 * Throws DomainError('balance_not_enough') when a bucket would go negative (the caller's
 * transaction is then aborted and must roll back), DuplicatePostingError when the transfer
 * (kind, refId) was already applied.
 */
export async function post(c: Queryable, input: Posting | Transfer): Promise<BalanceRow> {
  const t = 'legs' in input ? input : transferOf(input);
  if (t.legs.length === 0) throw new Error(`transfer ${t.kind} ${t.refId} has no legs`);
  for (const l of t.legs) if (!l.amount.gt(0)) throw new Error(`transfer ${t.kind} ${t.refId}: a leg of ${l.amount.toFixed()}`);
  const d = merchantDeltas(t);
  const values = [
    transferId(t.kind, t.refId), t.kind, t.refType, t.refId, t.merchantId, t.memo?.slice(0, 500) ?? null,
    t.legs.map((l) => l.currency), t.legs.map((l) => l.from), t.legs.map((l) => l.to), t.legs.map((l) => l.amount.toFixed()),
  ];
  try {
    if (d === null) {
      await c.query({ name: 'ledger_post_operator', text: POST_OPERATOR_SQL, values });
      return { available: '0', locked: '0', hold: '0' };
    }
    const deltas = [d.available.toFixed(), d.locked.toFixed(), d.hold.toFixed()];
    // Named: prepared once per connection (every payout and refund transfer goes through here).
    const r = await c.query<BalanceRow>({ name: 'ledger_post', text: POST_SQL, values: [...values, d.currency, ...deltas] });
    if (r.rows[0]) return r.rows[0];
    // No balance row yet: the entries are in, so create the row and apply the same deltas.
    await c.query(ENSURE_SQL, [t.merchantId, d.currency]);
    const r2 = await c.query<BalanceRow>(APPLY_SQL, [t.merchantId, d.currency, ...deltas]);
    return r2.rows[0]!;
  } catch (e) {
    throw ledgerError(e, `${t.kind} ${t.refId}`);
  }
}

// A provider conflict's debit (docs/decisions.md "A provider's answer after a final state"):
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
export function ledgerError(e: unknown, what = 'transfer'): unknown {
  const err = e as { code?: string; constraint?: string };
  if (err.code === '23514' && err.constraint === 'balances_non_negative_check') return new DomainError('balance_not_enough');
  if (err.code === '23505' && err.constraint === 'ledger_transfers_pkey') return new DuplicatePostingError(`${what} already posted`);
  return e;
}

export { verifyBalances, verifyLedger, listAccounts } from './verify.js';
