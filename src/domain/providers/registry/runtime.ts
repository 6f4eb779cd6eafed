import type { Config } from '../../../config.js';
import type { Db, Queryable } from '../../../db/client.js';
import { NotFoundError } from '../../../errors.js';
import { callConnector, flushCallStats } from '../call.js';
import type { CallContext, ConnectionCheck, Connector, ConnectorOperation } from '../connector.js';
import { secretSettings } from '../plugin.js';
import type { ProviderNet } from '../provider-http.js';
import { CONNECTOR_NAME, type ConnectorSettings, type ConnectorSnapshot } from './settings.js';

export interface ConnectorHealth {
  lastSuccessAt: Date | null;
  /** Errors / calls over the last 15 minutes; null without calls. */
  recentErrorRate: number | null;
  recentCalls: number;
  lastError: string | null;
  /** Operations whose outcome is unknown and wait on this connector (reconciliation). */
  unknownOutcomes: number;
}

/**
 * The connector objects of this process: built by their kind's plugin from their row, kept while
 * the row says the same, looked up by name, called through the one timed wrapper, and their
 * health as those calls left it.
 */
export class ConnectorRuntime {
  /** Connectors put in place of the table's (tests inject misbehaving ones by name). */
  private readonly overrides = new Map<string, Connector>();
  private readonly built = new Map<string, { key: string; connector: Connector }>();

  constructor(private readonly config: Config, private readonly db: Db, private readonly settings: ConnectorSettings) {}

  /** Tests: answer `connector` for its name instead of building it from the table. */
  override(connector: Connector): void { this.overrides.set(connector.name, connector); }

  /** The connector a test put in place of `name`'s row, if any. */
  overridden(name: string): Connector | undefined { return this.overrides.get(name); }

  /** The connector object for `name`; null when there is none, it is disabled, or its kind is not built yet. */
  async get(name: string, c: Queryable = this.db.pool): Promise<Connector | null> {
    const o = this.overrides.get(name);
    if (o) return o;
    const row = await this.settings.row(c, name);
    return row && row.enabled ? this.build(row) : null;
  }

  /**
   * The connector object of a row, built by its kind's plugin; null for a kind this build does
   * not have. Built objects hold only what their row says (connector classes keep no state of
   * their own), so one is kept per row content and built again when any of it changes: the row
   * itself is still read fresh for every operation.
   */
  build(row: ConnectorSnapshot): Connector | null {
    const key = `${row.kind}\u0000${row.mode}\u0000${row.secrets_enc ?? ''}\u0000${JSON.stringify(row.settings)}`;
    const seen = this.built.get(row.name);
    if (seen && seen.key === key) return seen.connector;
    const plugin = this.settings.plugin(row.kind);
    if (!plugin) return null;
    const secrets = secretSettings(plugin.settings).length > 0 ? this.settings.secretsOf(row) : {};
    const connector = plugin.build(
      { name: row.name, mode: row.mode, settings: row.settings, secrets },
      { db: this.db.pool, publicBaseUrl: this.config.publicBaseUrl, profile: this.config.profile, net: { allowPrivate: this.config.allowPrivateProviderUrls } },
    );
    this.built.set(row.name, { key, connector });
    return connector;
  }

  /**
   * A connector object built afresh from its row (enabled or not) with another public base URL
   * (where its provider is told to send notifications), and its row's plain settings and secrets:
   * the go-live rehearsal runs the connector's own code against what it is configured with.
   * Null for an unknown name or a kind this build does not have.
   */
  async buildFor(name: string, publicBaseUrl: string): Promise<{ connector: Connector; settings: Record<string, unknown>; secrets: Record<string, unknown>; net: ProviderNet } | null> {
    const row = CONNECTOR_NAME.test(name) ? await this.settings.row(this.db.pool, name) : null;
    const plugin = row ? this.settings.plugin(row.kind) : null;
    if (!row || !plugin) return null;
    const secrets = this.settings.secretsOf(row);
    const net = { allowPrivate: this.config.allowPrivateProviderUrls };
    const connector = this.overrides.get(name)
      ?? plugin.build({ name: row.name, mode: row.mode, settings: row.settings, secrets }, { db: this.db.pool, publicBaseUrl, profile: this.config.profile, net });
    return { connector, settings: row.settings, secrets, net };
  }

  /**
   * The operator's "test connection": the connector's harmless read (Connector.checkConnection),
   * outside any transaction and cut off after the connector timeout; a disabled connector is
   * tested too (before it is switched on). Never throws for the provider's failure: it is the answer.
   */
  async testConnection(name: string): Promise<ConnectionCheck> {
    const row = CONNECTOR_NAME.test(name) ? await this.settings.row(this.db.pool, name) : null;
    if (!row) throw new NotFoundError('Connector not found.');
    const c = this.overrides.get(name) ?? this.build(row);
    if (!c) return { ok: false, message: `Connectors of kind ${row.kind} are not available in this version.` };
    if (!c.checkConnection) return { ok: false, message: `Connectors of kind ${c.kind} have no connection test.` };
    const signal = AbortSignal.timeout(this.config.connectorTimeoutMs);
    try {
      return await c.checkConnection({ signal });
    } catch (e) {
      return { ok: false, message: signal.aborted ? `No answer within ${Math.round(this.config.connectorTimeoutMs / 1000)} s.` : (e as Error).message };
    }
  }

  /** One timed call (src/domain/providers/call.ts). */
  call<T extends { status: string }>(connector: Connector, op: ConnectorOperation, fn: (ctx: CallContext) => Promise<T>) {
    return callConnector(this.db, connector, op, this.config.connectorTimeoutMs, fn);
  }

  /** Health from what the call wrapper recorded, and the operations waiting on an unknown outcome. */
  async health(name: string): Promise<ConnectorHealth> {
    // This process's calls of the last second too (other processes' arrive within a second).
    await flushCallStats(this.db);
    const r = await this.db.pool.query<{ last_success_at: Date | null; calls: number; errors: number; last_error: string | null; unknown: number }>(
      `SELECT (SELECT max(last_success_at) FROM connector_call_stats WHERE connector = $1) AS last_success_at,
              coalesce(sum(calls), 0)::int AS calls, coalesce(sum(errors), 0)::int AS errors,
              (SELECT last_error FROM connector_call_stats WHERE connector = $1 AND last_error IS NOT NULL ORDER BY minute DESC LIMIT 1) AS last_error,
              (${UNKNOWN_OUTCOMES_SQL}) AS unknown
         FROM connector_call_stats WHERE connector = $1 AND minute >= date_trunc('minute', now()) - interval '15 minutes'`,
      [name],
    );
    const h = r.rows[0]!;
    return {
      lastSuccessAt: h.last_success_at, recentCalls: h.calls, recentErrorRate: h.calls > 0 ? h.errors / h.calls : null,
      lastError: h.last_error, unknownOutcomes: h.unknown,
    };
  }
}

/**
 * Operations waiting on a connector with an unknown outcome ($1 = connector name). Payments left
 * in PROCESS with a provider reference are the first; payouts and refunds handed to the connector
 * and still PROCESS (their outcome unknown until reconciliation hears it) count too.
 */
const UNKNOWN_OUTCOMES_SQL = `SELECT ((SELECT count(*) FROM payments WHERE connector = $1 AND status = 'PROCESS')
  + (SELECT count(*) FROM payouts WHERE connector = $1 AND status = 'PROCESS' AND sent_at IS NOT NULL)
  + (SELECT count(*) FROM refunds WHERE connector = $1 AND status = 'PROCESS' AND sent_at IS NOT NULL))::int`;
