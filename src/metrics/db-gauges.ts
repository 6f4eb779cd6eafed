import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { NO_URL } from '../outbox/events.js';

const PAYOUT_STATUSES = ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'] as const;
const CONFLICT_OBJECTS = ['payment', 'payout', 'refund'] as const;

export interface DbGauges {
  backlog: Gauge;
  oldestAge: Gauge;
  retrying: Gauge;
  dead: Gauge;
  notConfigured: Gauge;
  attempts: Gauge;
  payouts: Gauge<'status'>;
  conflicts: Gauge<'object_type'>;
  conflictsOpen: Gauge<'object_type'>;
  rehearsalFailed: Gauge<'connector'>;
  receiptFailures: Gauge<'object_type'>;
  poolTotal: Gauge;
  poolIdle: Gauge;
  poolWaiting: Gauge;
  poolMax: Gauge;
  attentionOpen: Gauge<'kind'>;
  attentionOldest: Gauge<'kind'>;
  payoutProcessOldest: Gauge;
  reconcileOverdue: Gauge;
}

const ATTENTION_KINDS = ['unknown_outcome', 'conflict', 'receipt_failed'] as const;

export function createDbGauges(registry: Registry): DbGauges {
  const g = (name: string, help: string) => new Gauge({ name, help, registers: [registry] });
  return {
    backlog: g('outbox_backlog', 'Outbox events waiting to be delivered (PENDING).'),
    oldestAge: g('outbox_oldest_pending_age_seconds', 'Age of the oldest PENDING outbox event, 0 when none.'),
    retrying: g('outbox_retrying_events', 'PENDING outbox events that already failed at least one attempt.'),
    dead: g('outbox_dead_events', 'Outbox events given up on (DEAD) after failed attempts, awaiting the operator; events with no URL configured are not counted here.'),
    notConfigured: g('outbox_not_configured_events', 'Outbox events kept unsent because their merchant configured no URL (DEAD with "no URL configured"); a settings matter, not a delivery failure.'),
    attempts: g('outbox_delivery_attempts_total', 'Delivery attempts recorded since the database was created (high-water mark of their id sequence).'),
    payouts: new Gauge({ name: 'payouts', help: 'Payouts by status.', labelNames: ['status'], registers: [registry] }),
    // Alert on any increase: a provider contradicted a final status and money moved its way
    // (docs/adr/0021-provider-answer-after-final-state.md). Read from the conflict
    // items (never deleted), so a conflict any process found counts, as a counter would.
    conflicts: new Gauge({
      name: 'payments_provider_conflicts_total', labelNames: ['object_type'], registers: [registry],
      help: "Provider answers that contradicted a final status (conflict attention items ever recorded), by object type: alert on any increase.",
    }),
    conflictsOpen: new Gauge({
      name: 'payments_provider_conflicts_open', labelNames: ['object_type'], registers: [registry],
      help: 'Conflict attention items an operator has not settled yet, by object type.',
    }),
    // docs/adr/0104-connector-rehearsals.md: what the latest finished rehearsal of each connector failed.
    rehearsalFailed: new Gauge({
      name: 'payments_connector_rehearsal_failed', labelNames: ['connector'], registers: [registry],
      help: 'Failed steps of each connector\'s latest finished go-live rehearsal (0: it passed).',
    }),
    // Receipts a provider's cash register did not register (receipt_failed attention items, never
    // deleted, so any process's count): each needs a correction receipt (docs/adr/0088).
    receiptFailures: new Gauge({
      name: 'payments_receipt_failures_total', labelNames: ['object_type'], registers: [registry],
      help: 'Receipts the provider\'s cash register reported as not registered (receipt_failed attention items ever recorded), by payment or refund: alert on any increase.',
    }),
    poolTotal: g('db_pool_connections', 'Connections open in this process\'s database pool.'),
    poolIdle: g('db_pool_idle_connections', 'Idle connections in this process\'s database pool.'),
    poolWaiting: g('db_pool_waiting_requests', 'Queries queued waiting for a pool connection.'),
    poolMax: g('db_pool_max_connections', 'Size limit of this process\'s database pool.'),
    attentionOpen: new Gauge({
      name: 'payments_attention_open', labelNames: ['kind'], registers: [registry],
      help: 'Attention items an operator has not settled yet, by kind (unknown_outcome: reconciliation gave up; conflict: a provider contradicted a final status; receipt_failed: a receipt the cash register did not register).',
    }),
    attentionOldest: new Gauge({
      name: 'payments_attention_oldest_open_age_seconds', labelNames: ['kind'], registers: [registry],
      help: 'Age of the oldest attention item not settled yet, by kind; 0 when none.',
    }),
    payoutProcessOldest: g('payouts_process_oldest_age_seconds', 'Age of the oldest payout in PROCESS (sent to the provider, its outcome not known yet); 0 when none.'),
    reconcileOverdue: g('payments_reconcile_overdue_seconds', 'How far the payment reconciler is behind: the time since the earliest check due of a payment in PROCESS; 0 when none is overdue.'),
  };
}

/**
 * Refreshes the database-derived gauges at scrape time: one cheap query each, run in parallel,
 * each answered from an index (outbox by status, payouts by status) or a sequence. A query that
 * fails leaves its gauge at the last value and is logged; the scrape still answers.
 */
export async function collectDbGauges(app: FastifyInstance, g: DbGauges): Promise<void> {
  const pool = app.db.pool;
  g.poolTotal.set(pool.totalCount);
  g.poolIdle.set(pool.idleCount);
  g.poolWaiting.set(pool.waitingCount);
  g.poolMax.set(pool.options.max ?? 10);

  const jobs: Array<Promise<void>> = [
    pool.query<{ backlog: number; oldest: number; retrying: number }>(
      `SELECT count(*)::int AS backlog,
              COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest,
              count(*) FILTER (WHERE attempts > 0)::int AS retrying
         FROM outbox_events WHERE status = 'PENDING'`,
    ).then((r) => {
      const row = r.rows[0]!;
      g.backlog.set(row.backlog);
      g.oldestAge.set(Math.max(0, row.oldest));
      g.retrying.set(row.retrying);
    }),
    // Dead events apart from those that never had a URL: an alert on the first does
    // not fire for missing settings.
    pool.query<{ dead: number; unset: number }>(
      `SELECT count(*) FILTER (WHERE last_error IS DISTINCT FROM $1)::int AS dead, count(*) FILTER (WHERE last_error = $1)::int AS unset
         FROM outbox_events WHERE status = 'DEAD'`, [NO_URL],
    ).then((r) => { g.dead.set(r.rows[0]!.dead); g.notConfigured.set(r.rows[0]!.unset); }),
    pool.query<{ n: string }>(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END::text AS n FROM delivery_attempts_id_seq`)
      .then((r) => { g.attempts.set(Number(r.rows[0]!.n)); }),
    pool.query<{ status: string; n: number }>(`SELECT status::text AS status, count(*)::int AS n FROM payouts GROUP BY status`)
      .then((r) => {
        const by = new Map(r.rows.map((x) => [x.status, x.n]));
        for (const s of PAYOUT_STATUSES) g.payouts.set({ status: s }, by.get(s) ?? 0);
      }),
    pool.query<{ kind: string; object_type: string; n: number; open: number }>(
      `SELECT kind, object_type, count(*)::int AS n, count(*) FILTER (WHERE resolved_at IS NULL)::int AS open
         FROM attention_items WHERE kind IN ('conflict', 'receipt_failed') GROUP BY kind, object_type`,
    ).then((r) => {
      const by = new Map(r.rows.map((x) => [`${x.kind}:${x.object_type}`, x]));
      for (const t of CONFLICT_OBJECTS) {
        g.conflicts.set({ object_type: t }, by.get(`conflict:${t}`)?.n ?? 0);
        g.conflictsOpen.set({ object_type: t }, by.get(`conflict:${t}`)?.open ?? 0);
      }
      for (const t of ['payment', 'refund'] as const) g.receiptFailures.set({ object_type: t }, by.get(`receipt_failed:${t}`)?.n ?? 0);
    }),
    pool.query<{ kind: string; n: number; oldest: number }>(
      `SELECT kind, count(*)::int AS n, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest
         FROM attention_items WHERE resolved_at IS NULL GROUP BY kind`,
    ).then((r) => {
      const by = new Map(r.rows.map((x) => [x.kind, x]));
      for (const k of ATTENTION_KINDS) {
        g.attentionOpen.set({ kind: k }, by.get(k)?.n ?? 0);
        g.attentionOldest.set({ kind: k }, Math.max(0, by.get(k)?.oldest ?? 0));
      }
    }),
    // Both from partial or status indexes: few rows are in PROCESS at a time.
    pool.query<{ payout: number; reconcile: number }>(
      `SELECT COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(created_at)) FROM payouts WHERE status = 'PROCESS'), 0)::float8 AS payout,
              COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(next_check_at)) FROM payments WHERE status = 'PROCESS'), 0)::float8 AS reconcile`,
    ).then((r) => {
      g.payoutProcessOldest.set(Math.max(0, r.rows[0]!.payout));
      g.reconcileOverdue.set(Math.max(0, r.rows[0]!.reconcile));
    }),
    pool.query<{ connector: string; failed: number }>(
      `SELECT DISTINCT ON (connector) connector, failed_steps AS failed FROM connector_rehearsals
        WHERE status <> 'running' ORDER BY connector, started_at DESC`,
    ).then((r) => { for (const x of r.rows) g.rehearsalFailed.set({ connector: x.connector }, x.failed); }),
  ];
  const results = await Promise.allSettled(jobs);
  for (const r of results) {
    if (r.status === 'rejected') app.log.warn({ err: (r.reason as Error).message }, 'metrics: a database gauge could not be read');
  }
}
