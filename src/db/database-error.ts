import { Counter } from 'prom-client';

/**
 * Whose fault a database refusal is (as supabase/storage's `database-error.ts` does).
 *
 * - **client**: a value from a request that validation let through and PostgreSQL refused as a
 *   value (too long, out of range, not a number or date, a field-shaped CHECK). The client can
 *   fix it: 422.
 * - **invariant**: a rule of the service's own state refused a write the service itself
 *   computed: a balance going negative, refunds plus chargebacks past what a payment received, a
 *   ledger leg, the live/test walls, an append-only or fixed-once row. The client did nothing
 *   wrong and cannot fix it; the code (or a hand edit of a row) broke a rule: 500, an alert-level
 *   log line and `payments_invariant_violations_total{constraint}`.
 *
 * The rule for a CHECK (SQLSTATE 23514, also raised by triggers with a CONSTRAINT name): it is a
 * client one only when it is listed in `INPUT_CHECKS` (it restates a request field's format);
 * every other CHECK, named or not, is an invariant, so a new constraint is never blamed on the
 * client by default. test/foundation/database-error.test.ts holds every constraint of the
 * migrated database to one of the lists, so a new one is classified when it is added.
 *
 * Services that expect a particular refusal still catch it first and answer their own key (the
 * ledger's overdraft -> balance_not_enough, `connectors_mode_fixed_once_used` -> 422 on `mode`):
 * this module sees only what nobody caught.
 */

/** SQLSTATEs of a value refused as a value: input that slipped past validation. */
const INPUT_SQLSTATES: ReadonlySet<string> = new Set([
  '22001', // string_data_right_truncation: a value too long for its column
  '22003', // numeric_value_out_of_range
  '22P02', // invalid_text_representation
  '22007', // invalid_datetime_format
  '22008', // datetime_field_overflow
  '22021', // character_not_in_repertoire (a NUL byte)
  '54000', // program_limit_exceeded (an index row too large)
]);

/**
 * CHECKs that restate the format of a field a request (a merchant's or an operator's) sets
 * directly: a violation is that request's mistake, which validation should have answered first.
 */
export const INPUT_CHECKS: ReadonlySet<string> = new Set([
  'bills_amount_check', 'bills_locale_check', 'bills_ttl_check',
  'merchants_fees_check', 'merchants_limits_check',
  'fx_rates_positive_check', 'balance_adjustments_amount_check',
  'connectors_mode_check', 'connectors_name_check',
  'api_keys_scopes_array',
]);

/** CHECKs and trigger guards that hold money right: each is an alert when it refuses a write. */
export const MONEY_INVARIANTS: ReadonlySet<string> = new Set([
  // Balances and the ledger.
  'balances_non_negative_check',
  'ledger_entries_amount_check', 'ledger_entries_accounts_check', 'ledger_entries_currency_check',
  'ledger_transfers_id_check',
  'ledger_accounts_kind_check', 'ledger_accounts_owner_check', 'ledger_accounts_connector_check', 'ledger_accounts_currency_check',
  // What a payment, payout, refund or chargeback may hold.
  'payments_amounts_check', 'payments_chargeback_bound_check', 'payments_from_card_masked_check',
  'payouts_amounts_check', 'refunds_amount_check', 'chargebacks_amount_check',
  'payout_usage_amount_check', 'payout_usage_period_check', 'sandbox_money_clearances_amount_check',
  // Live and test money never meet (prisma/migrations/20261126000000_live_test_walls).
  'live_money_live_connector', 'live_and_test_never_meet', 'connectors_mode_fixed_once_used',
  'connectors_sandbox_is_test', 'merchants_twin_settings_follow_live', 'merchants_test_twin_sandbox_only',
  'merchant_users_live_merchant',
  // Append-only and fixed-once rows (triggers raising restrict_violation, no constraint name).
  'restrict_violation',
]);

/**
 * Foreign keys that hold the books together (SQLSTATE 23503): a ledger leg naming an account
 * that does not exist is a transfer built wrong or an account never created, never the
 * client's doing: an alert, as a money CHECK. Other foreign keys stay unclassified (a generic
 * 500), as before.
 */
export const MONEY_FOREIGN_KEYS: ReadonlySet<string> = new Set([
  'ledger_entries_debit_account_fkey', 'ledger_entries_credit_account_fkey',
]);

/** CHECKs on the service's own bookkeeping (sessions, mail, deployment): broken code, not money. */
export const INTERNAL_INVARIANTS: ReadonlySet<string> = new Set([
  'cabinet_sessions_stage', 'operator_sessions_stage', 'mail_outbox_status',
  'deployment_one_row', 'deployment_profile_check',
  'merchant_users_email_lower', 'operators_email_lower',
  'attention_items_object_type_check',
  // A card token only on a card account (the service builds it from a validated request).
  'payout_accounts_token_check',
  // A saved card's mode and mask (the service writes them from the merchant and the provider's answer).
  'saved_payment_methods_mode_check', 'saved_payment_methods_card_mask_check',
  // A go-live rehearsal's run record (the run writes it; no request sets these columns).
  'connector_rehearsals_check', 'connector_rehearsals_failed_steps_check', 'connector_rehearsals_status_check',
  // A trigger's RAISE with no ERRCODE.
  'raise_exception',
]);

export type DatabaseFault =
  | { fault: 'client'; sqlstate: string; constraint: string | null }
  | { fault: 'invariant'; sqlstate: string; constraint: string; money: boolean; table: string | null; detail: string };

interface PgFields { code: string; constraint: string | null; table: string | null; message: string }

const SQLSTATE = /^[0-9A-Z]{5}$/;
const PRISMA_CODE = /^P\d{4}$/;

/**
 * The PostgreSQL fields of an error from node-postgres (the error itself, or its `cause`) or
 * from Prisma's pg adapter (`meta.driverAdapterError.cause`, which keeps the SQLSTATE and the
 * message but not the constraint: that is read back from the message).
 */
function pgFieldsOf(e: unknown): PgFields | null {
  const seen = new Set<unknown>();
  let cur: unknown = e;
  while (cur && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur);
    const x = cur as { code?: unknown; severity?: unknown; constraint?: unknown; table?: unknown; message?: unknown; cause?: unknown;
      meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; originalMessage?: unknown } } } };
    const adapter = x.meta?.driverAdapterError?.cause;
    if (adapter && typeof adapter.originalCode === 'string' && SQLSTATE.test(adapter.originalCode)) {
      const message = typeof adapter.originalMessage === 'string' ? adapter.originalMessage : '';
      return { code: adapter.originalCode, constraint: constraintInMessage(message), table: null, message };
    }
    // Prisma's own codes (P2010...) look like SQLSTATEs; a pg error carries its severity.
    if (typeof x.code === 'string' && SQLSTATE.test(x.code) && (typeof x.severity === 'string' || !PRISMA_CODE.test(x.code))) {
      const message = typeof x.message === 'string' ? x.message : '';
      return {
        code: x.code,
        constraint: typeof x.constraint === 'string' ? x.constraint : constraintInMessage(message),
        table: typeof x.table === 'string' ? x.table : null,
        message,
      };
    }
    cur = x.cause;
  }
  return null;
}

const constraintInMessage = (m: string): string | null => /violates (?:check|foreign key) constraint "([^"]+)"/.exec(m)?.[1] ?? null;

/** Whose fault a database error is, or null when it is no refusal of a value or a rule (a lost connection, a deadlock...). */
export function classifyDatabaseError(e: unknown): DatabaseFault | null {
  const pg = pgFieldsOf(e);
  if (!pg) return null;
  if (INPUT_SQLSTATES.has(pg.code)) return { fault: 'client', sqlstate: pg.code, constraint: pg.constraint };
  let constraint: string;
  if (pg.code === '23514') {
    if (pg.constraint !== null && INPUT_CHECKS.has(pg.constraint)) return { fault: 'client', sqlstate: pg.code, constraint: pg.constraint };
    // A CHECK whose name was lost on the way (Prisma keeps only a trigger's message) is still not the client's.
    constraint = pg.constraint ?? 'unnamed_check';
  } else if (pg.code === '23001') {
    constraint = pg.constraint ?? 'restrict_violation';
  } else if (pg.code === 'P0001') {
    constraint = pg.constraint ?? 'raise_exception';
  } else if (pg.code === '23503' && pg.constraint !== null && MONEY_FOREIGN_KEYS.has(pg.constraint)) {
    constraint = pg.constraint;
  } else {
    return null;
  }
  return {
    fault: 'invariant', sqlstate: pg.code, constraint,
    money: MONEY_INVARIANTS.has(constraint) || MONEY_FOREIGN_KEYS.has(constraint) || constraint === 'unnamed_check',
    table: pg.table, detail: pg.message,
  };
}

/**
 * Broken invariants per process, registered into each app's registry by src/metrics (as the
 * connector metrics are), so a worker's and a request's count in the same series.
 */
export const invariantViolations = new Counter({
  name: 'payments_invariant_violations_total',
  help: 'Writes the database refused because a rule of the service\'s own state would break (a money CHECK, a trigger guard), by constraint. Any increase is an alert.',
  labelNames: ['constraint'] as const,
  registers: [],
});

interface AlertLogger { error(obj: object, msg: string): void }

/**
 * The alert for a broken invariant: one log line at level `error` with `alert: true` (alerting
 * matches that field; `fatal` stays for a process that cannot go on, and this one serves on) and
 * the counter. The caller answers 500 (a request) or leaves the job to be retried (a worker).
 */
export function reportInvariantViolation(log: AlertLogger, f: Extract<DatabaseFault, { fault: 'invariant' }>, err: unknown, where: string): void {
  invariantViolations.inc({ constraint: f.constraint });
  log.error({
    alert: true, event: 'invariant_violation', constraint: f.constraint, money: f.money, sqlstate: f.sqlstate,
    table: f.table, detail: f.detail, where, err,
  }, `a database invariant refused a write: ${f.constraint}`);
}

/**
 * SQLSTATEs of a server that cannot serve now: shutting down, starting, a standby (a failover in
 * progress, or a connection still on a demoted primary), a lost connection.
 */
const UNAVAILABLE_SQLSTATES: ReadonlySet<string> = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (also raised when no host of the list accepts writes)
  '25006', // read_only_sql_transaction: connected to a standby
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
  '53300', // too_many_connections
]);
const UNAVAILABLE_SOCKET_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** Prisma's codes for a server it cannot reach or that closed on it, and its pool's wait. */
const UNAVAILABLE_PRISMA_CODES: ReadonlySet<string> = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** What Prisma's pg adapter calls the same (`meta.driverAdapterError.cause.kind`). */
const UNAVAILABLE_ADAPTER_KINDS: ReadonlySet<string> = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/** node-postgres and pg-pool say these in words only (no code). */
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|Query read timeout|terminating connection due to administrator command|no PostgreSQL server accepting writes/i;

/**
 * The database could not be reached or cannot serve now (it is down, restarting, failing over,
 * or every pooled connection is busy past the wait): nobody's fault, worth a retry. The API
 * answers it 503 with Retry-After (docs/adr/0099-failover-answers-503.md), never 500.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [e];
  while (queue.length > 0) {
    const cur = queue.shift();
    if (!cur || typeof cur !== 'object' || seen.has(cur)) continue;
    seen.add(cur);
    const x = cur as { code?: unknown; message?: unknown; kind?: unknown; originalCode?: unknown; cause?: unknown; errors?: unknown;
      meta?: { driverAdapterError?: { cause?: unknown } } };
    if (typeof x.code === 'string' && (UNAVAILABLE_SQLSTATES.has(x.code) || UNAVAILABLE_SOCKET_CODES.has(x.code) || UNAVAILABLE_PRISMA_CODES.has(x.code))) return true;
    if (typeof x.originalCode === 'string' && UNAVAILABLE_SQLSTATES.has(x.originalCode)) return true;
    if (typeof x.kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(x.kind)) return true;
    if (typeof x.message === 'string' && UNAVAILABLE_MESSAGE.test(x.message)) return true;
    queue.push(x.cause, x.meta?.driverAdapterError, x.meta?.driverAdapterError?.cause);
    if (Array.isArray(x.errors)) queue.push(...x.errors);
  }
  return false;
}
