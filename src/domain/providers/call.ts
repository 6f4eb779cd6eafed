import { Counter, Histogram } from 'prom-client';
import type { Db } from '../../db/client.js';
import { ConnectorRefusedError, type CallContext, type Connector, type ConnectorOperation } from './connector.js';

/**
 * Provider call metrics, one set per process (created unregistered; the /metrics plugin of each
 * app adds them to its registry). Labelled by connector, its mode, operation and outcome.
 */
export const connectorMetrics = {
  calls: new Counter({
    name: 'connector_calls_total',
    help: 'Calls to providers, by connector, mode, operation and outcome (ok, declined, refused, unknown, error).',
    labelNames: ['connector', 'mode', 'operation', 'outcome'] as const,
    registers: [],
  }),
  latency: new Histogram({
    name: 'connector_call_duration_seconds',
    help: 'Time a provider call took (a timed-out call counts its timeout), by connector, mode and operation.',
    labelNames: ['connector', 'mode', 'operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [],
  }),
};

/** Answers the wrapper adds to any outcome union: refused before money moved, or no answer. */
export type Refused = { status: 'refused'; code: string; message: string };
export type Unknown = { status: 'unknown'; ref: string | null; reason: string };

/** Outcomes that count as a provider error for health (business answers like a decline do not). */
const isError = (status: string) => status === 'refused' || status === 'unknown';

/**
 * Every provider call goes through here, outside any database transaction: the call gets an
 * AbortSignal and `timeoutMs`; a timeout is `unknown` (the money may have moved, nothing is
 * guessed); a ConnectorRefusedError is `refused`; any other throw is `unknown` too. Latency and
 * the outcome go to /metrics, and calls, errors and the last success to connector_call_stats
 * (health in the operator API, shared by every process; counted in memory, written each second).
 */
export async function callConnector<T extends { status: string }>(
  db: Db, connector: Connector, operation: ConnectorOperation, timeoutMs: number,
  fn: (ctx: CallContext) => Promise<T>,
): Promise<T | Refused | Unknown> {
  const ac = new AbortController();
  const started = process.hrtime.bigint();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Unknown>((resolve) => {
    timer = setTimeout(() => {
      ac.abort();
      resolve({ status: 'unknown', ref: null, reason: `timeout after ${timeoutMs} ms` });
    }, timeoutMs);
  });
  let out: T | Refused | Unknown;
  let errorText: string | null = null;
  try {
    out = await Promise.race([fn({ signal: ac.signal }), timeout]);
  } catch (e) {
    out = e instanceof ConnectorRefusedError
      ? { status: 'refused', code: e.code, message: e.message }
      : { status: 'unknown', ref: null, reason: 'provider call failed' };
    // Only the class name and message: a provider error may echo what was sent.
    errorText = e instanceof Error ? `${e.name}: ${e.message}`.slice(0, 500) : 'error';
  } finally {
    clearTimeout(timer);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const labels = { connector: connector.name, mode: connector.mode, operation };
  connectorMetrics.latency.observe(labels, seconds);
  const error = isError(out.status);
  connectorMetrics.calls.inc({ ...labels, outcome: error ? out.status : okLabel(out.status) });
  if (error && errorText === null) errorText = 'reason' in out ? String(out.reason) : 'message' in out ? String(out.message) : out.status;
  recordCall(db, connector.name, error, errorText);
  return declaredOnly(connector, out);
}

/**
 * A decline waits for its reason only when the connector's capabilities declare that its
 * provider sends one later (`declineReasonFollows`): a `reasonFollows` from any other connector
 * is dropped, so the decline is final as answered.
 */
function declaredOnly<T extends { status: string }>(connector: Connector, out: T): T {
  const o = out as { status: string; reasonFollows?: boolean };
  if (o.status !== 'declined' || o.reasonFollows === undefined || connector.capabilities.declineReasonFollows === true) return out;
  const { reasonFollows: _, ...rest } = o;
  return rest as unknown as T;
}

const okLabel = (status: string) => (status === 'declined' || status === 'failed' ? 'declined' : 'ok');

interface PendingStats { connector: string; minute: Date; calls: number; errors: number; lastSuccessAt: Date | null; lastError: string | null }

// Per process: calls counted in memory and written once a second (or when health is read), so a
// payment does not pay a statement for its statistics, and the statistics row of a connector's
// minute is not a row every payment of every process locks in turn.
const pendingStats = new Map<Db, Map<string, PendingStats>>();
let flushTimer: NodeJS.Timeout | null = null;
const FLUSH_EVERY_MS = 1000;

function recordCall(db: Db, connector: string, error: boolean, errorText: string | null): void {
  const now = new Date();
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  let byKey = pendingStats.get(db);
  if (!byKey) pendingStats.set(db, (byKey = new Map()));
  const key = `${connector}|${minute.getTime()}`;
  const p = byKey.get(key) ?? { connector, minute, calls: 0, errors: 0, lastSuccessAt: null, lastError: null };
  p.calls += 1;
  if (error) { p.errors += 1; if (errorText !== null) p.lastError = errorText; } else p.lastSuccessAt = now;
  byKey.set(key, p);
  if (!flushTimer) {
    flushTimer = setTimeout(() => { flushTimer = null; void flushCallStats().catch(() => undefined); }, FLUSH_EVERY_MS);
    flushTimer.unref();
  }
}

/** Writes of counted calls still on their way, so a health read waits for the timer's write too. */
const writing = new Set<{ db: Db; done: Promise<void> }>();

async function writeStats(db: Db, byKey: Map<string, PendingStats>): Promise<void> {
  for (const p of byKey.values()) {
    await db.pool.query({ name: 'connector_record_calls', text:
      `INSERT INTO connector_call_stats AS s (connector, minute, calls, errors, last_success_at, last_error)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (connector, minute) DO UPDATE
         SET calls = s.calls + EXCLUDED.calls, errors = s.errors + EXCLUDED.errors,
             last_success_at = greatest(EXCLUDED.last_success_at, s.last_success_at),
             last_error = coalesce(EXCLUDED.last_error, s.last_error)`,
    values: [p.connector, p.minute, p.calls, p.errors, p.lastSuccessAt, p.lastError] }).catch(() => undefined);
  }
}

/**
 * Writes the calls counted in this process (all pools, or one) to connector_call_stats: one
 * autocommit statement per connector and minute, never inside the money's transactions. Returns
 * once every write of those pools is done, the timer's included.
 */
export async function flushCallStats(only?: Db): Promise<void> {
  for (const [db, byKey] of [...pendingStats]) {
    if (only && db !== only) continue;
    pendingStats.delete(db);
    const w = { db, done: writeStats(db, byKey) };
    writing.add(w);
    void w.done.finally(() => writing.delete(w));
  }
  await Promise.all([...writing].filter((w) => !only || w.db === only).map((w) => w.done));
}
