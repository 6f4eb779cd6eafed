import type { Config, PaymentsProfile } from '../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { callConnector, type Refused, type Unknown, flushCallStats } from './call.js';
import {
  ROUTES, supports, type CallContext, type ConnectionCheck, type Connector, type ConnectorMode, type ConnectorOperation, type Route,
} from './connector.js';
import { CONNECTORS } from './connectors/index.js';
import { secretSettings, settingsErrors, type ConnectorPlugin } from './plugin.js';
import { providerUrlProblem } from './provider-http.js';

export const CONNECTOR_NAME = /^[a-z0-9-]{1,40}$/;

export const MASK = '********';

export type Routing = Record<Route, string[]>;
/** Every route of a test twin, and of a live merchant's unset route in the `sandbox` profile. */
export const DEFAULT_ROUTING: Routing = { payment_card: ['sandbox'], payment_sbp: ['sandbox'], payout_card: ['sandbox'], payout_sbp: ['sandbox'] };
const NO_ROUTING: Routing = { payment_card: [], payment_sbp: [], payout_card: [], payout_sbp: [] };

/** A merchant's routes in a profile (ConnectorRegistry.routingFor; the operator API shows these). */
export function effectiveRouting(stored: Partial<Routing> | null, live: boolean, profile: PaymentsProfile): Routing {
  if (!live) return DEFAULT_ROUTING;
  return { ...(profile === 'sandbox' ? DEFAULT_ROUTING : NO_ROUTING), ...(stored ?? {}) };
}

/**
 * Whether a connector may move an operation's money (PROVIDERS.md "Connectors"): a test
 * operation only through a test-mode connector (the sandbox), a live one in the `production`
 * profile only through a live-mode connector of a real provider. In the `sandbox` profile the
 * whole deployment is a test instrument and a live operation may use either. The database
 * refuses the same mismatches on its own (trigger operation_connector_mode).
 */
export function connectorServes(c: Pick<Connector, 'kind' | 'mode'>, operation: { live: boolean }, profile: PaymentsProfile): boolean {
  if (!operation.live) return c.mode === 'test';
  return profile === 'sandbox' || (c.mode === 'live' && c.kind !== 'sandbox');
}

/** `kind` is any text: a row may name a kind this build no longer has (docs/adr/0057-connectors-as-plugins.md). */
interface ConnectorRow {
  name: string; kind: string; mode: ConnectorMode; settings: Record<string, unknown>; secrets_enc: string | null;
  enabled: boolean; created_at: Date; updated_at: Date;
}
const COLUMNS = 'name, kind, mode, settings, secrets_enc, enabled, created_at, updated_at';

/** What building a connector needs of its row: read with another statement (the payment's bill read). */
export type ConnectorSnapshot = Pick<ConnectorRow, 'name' | 'kind' | 'mode' | 'settings' | 'secrets_enc' | 'enabled'>;

/**
 * SQL for the connector rows a merchant's routing can name (every name in `routing`, and the
 * sandbox, the routes' default), as one jsonb array of ConnectorSnapshot: the payment's bill read
 * carries them, so paying needs no statement of its own per connector. `routing` is an SQL
 * expression of the merchants.routing column.
 */
export const routedConnectorsSql = (routing: string) => `(
  SELECT coalesce(jsonb_agg(jsonb_build_object('name', c.name, 'kind', c.kind, 'mode', c.mode, 'settings', c.settings,
                                               'secrets_enc', c.secrets_enc, 'enabled', c.enabled)), '[]'::jsonb)
    FROM connectors c
   WHERE c.name = 'sandbox'
      OR c.name IN (SELECT jsonb_array_elements_text(r.v) FROM jsonb_each(CASE WHEN jsonb_typeof(${routing}) = 'object' THEN ${routing} ELSE '{}'::jsonb END) r(k, v)
                     WHERE jsonb_typeof(r.v) = 'array'))`;

export interface ConnectorRecord {
  name: string; kind: string; mode: ConnectorMode; enabled: boolean;
  /** Secrets replaced by MASK: never returned. */
  settings: Record<string, unknown>;
  createdAt: Date; updatedAt: Date;
}

export interface ConnectorHealth {
  lastSuccessAt: Date | null;
  /** Errors / calls over the last 15 minutes; null without calls. */
  recentErrorRate: number | null;
  recentCalls: number;
  lastError: string | null;
  /** Operations whose outcome is unknown and wait on this connector (reconciliation). */
  unknownOutcomes: number;
}

/** The result of a routed creation: the outcome and the connector whose answer it is. */
export type Routed<T> = { connector: Connector; outcome: T | Refused | Unknown };

/** What a connector looked like to the audit trail: no secret value, only which secrets are set. */
export interface ConnectorShape { kind: string; mode: string; enabled: boolean; settings: Record<string, unknown>; credentials: string[] }

/**
 * One change of a connector, for its audit step: its shape before (null: created) and after, and
 * the secret settings whose value changed, was set or was removed (names only, never values).
 */
export interface ConnectorChange { name: string; before: ConnectorShape | null; after: ConnectorShape; credentialsChanged: string[] }

/**
 * Connector registry: the `connectors` table, the connector objects built from it, and routing.
 * Secrets are decrypted only to build a connector for a call.
 */
export class ConnectorRegistry {
  /** Connectors put in place of the table's (tests inject misbehaving ones by name). */
  private readonly overrides = new Map<string, Connector>();
  private readonly byKind: ReadonlyMap<string, ConnectorPlugin>;

  /** `plugins`: the kinds this registry knows, CONNECTORS (connectors/index.ts) unless a test adds one. */
  constructor(private readonly config: Config, private readonly db: Db, readonly plugins: readonly ConnectorPlugin[] = CONNECTORS) {
    this.byKind = new Map(plugins.map((p) => [p.kind, p]));
  }

  /** The kinds a connector may be of, in the list's order. */
  get kinds(): string[] { return this.plugins.map((p) => p.kind); }

  /** A kind's plugin; null for a kind this build does not have. */
  plugin(kind: string): ConnectorPlugin | null { return this.byKind.get(kind) ?? null; }

  /** Tests: answer `connector` for its name instead of building it from the table. */
  override(connector: Connector): void { this.overrides.set(connector.name, connector); }

  /**
   * Validates and stores a connector; `created` tells 201 from 200. Nothing is stored on a 422.
   * `enabled` absent keeps the current flag (true on create). `audit` runs in the same
   * transaction with what changed (secret names only).
   */
  async put(
    name: string, body: Record<string, unknown>, audit?: InTx<ConnectorChange>, opts: { keepSecrets?: boolean; createOnly?: boolean } = {},
  ): Promise<{ created: boolean; record: ConnectorRecord }> {
    if (!CONNECTOR_NAME.test(name)) throw ValidationError.field('name', 'The name must be 1 to 40 of a-z, 0-9 and -.');
    if (opts.createOnly && await this.find(name)) throw ValidationError.field('name', 'A connector of this name exists already.');
    if (opts.keepSecrets) body = { ...body, settings: await this.withKeptSecrets(name, body.kind, body.settings) };
    const errors: Record<string, string[]> = {};
    const kind = body.kind;
    const mode = body.mode;
    const plugin = typeof kind === 'string' ? this.plugin(kind) : null;
    if (!plugin) errors.kind = [`The kind must be one of ${this.kinds.join(', ')}.`];
    if (mode !== 'live' && mode !== 'test') errors.mode = ['The mode must be live or test.'];
    if (body.enabled !== undefined && typeof body.enabled !== 'boolean') errors.enabled = ['Must be a boolean.'];
    const raw = body.settings ?? {};
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) errors.settings = ['The settings must be an object.'];
    if (name === 'sandbox' && kind !== 'sandbox' && !errors.kind) errors.kind = ['The built-in sandbox connector stays of kind sandbox.'];
    if (kind === 'sandbox' && mode === 'live') errors.mode = ['A sandbox connector is a test instrument: its mode is test.'];
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const k = plugin!.kind;
    const settings = raw as Record<string, unknown>;
    Object.assign(errors, settingsErrors(k, plugin!.settings, settings));
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    // Provider addresses are the deployment's: a form may not aim a connector into its network.
    for (const [f, spec] of Object.entries(plugin!.settings)) {
      if (spec.type !== 'url' || typeof settings[f] !== 'string') continue;
      const problem = await providerUrlProblem(settings[f] as string, { allowPrivate: this.config.allowPrivateProviderUrls });
      if (problem) errors[`settings.${f}`] = [problem];
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const plain: Record<string, unknown> = {};
    const secret: Record<string, unknown> = {};
    const secretNames = secretSettings(plugin!.settings);
    for (const [f, v] of Object.entries(settings)) (secretNames.includes(f) ? secret : plain)[f] = v;
    const secretsEnc = Object.keys(secret).length > 0 ? encrypt(this.config.tokenEncryptionKey, JSON.stringify(secret)) : null;
    const enabled = typeof body.enabled === 'boolean' ? body.enabled : null;
    return withPgTx(this.db.pool, async (c) => {
      // Locked, so the change the audit entry names is the one this statement makes.
      const prev = (await c.query<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE name = $1 FOR UPDATE`, [name])).rows[0] ?? null;
      const r = await c.query<ConnectorRow & { inserted: boolean }>(
        `INSERT INTO connectors (name, kind, mode, settings, secrets_enc, enabled) VALUES ($1, $2, $3, $4::jsonb, $5, COALESCE($6::boolean, true))
         ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind, mode = EXCLUDED.mode, settings = EXCLUDED.settings,
                secrets_enc = EXCLUDED.secrets_enc, enabled = COALESCE($6::boolean, connectors.enabled), updated_at = now()
         RETURNING ${COLUMNS}, (xmax = 0) AS inserted`,
        [name, k, mode, JSON.stringify(plain), secretsEnc, enabled],
      ).catch((e: { constraint?: string }) => {
        if (e.constraint === 'connectors_mode_fixed_once_used') {
          throw ValidationError.field('mode', 'Money has moved through this connector: its mode stays as it is. Add a new connector for the other account.');
        }
        throw e;
      });
      const row = r.rows[0]!;
      if (audit) {
        const before = prev ? this.secretsOf(prev) : {};
        const credentialsChanged = [...new Set([...Object.keys(before), ...Object.keys(secret)])]
          .filter((f) => JSON.stringify(before[f]) !== JSON.stringify(secret[f])).sort();
        await audit(c, { name, before: prev ? this.shapeOf(prev) : null, after: this.shapeOf(row), credentialsChanged });
      }
      return { created: row.inserted, record: this.toRecord(row) };
    });
  }

  /**
   * A form's settings with each secret it left out taken from the stored connector of the same
   * kind (the console never shows a secret back, so "left blank" means "keep").
   */
  private async withKeptSecrets(name: string, kind: unknown, raw: unknown): Promise<unknown> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
    const row = await this.row(this.db.pool, name);
    const plugin = typeof kind === 'string' ? this.plugin(kind) : null;
    if (!row || !plugin || row.kind !== kind) return raw;
    const kept = this.secretsOf(row);
    const out = { ...(raw as Record<string, unknown>) };
    for (const f of secretSettings(plugin.settings)) if (!(f in out) && f in kept) out[f] = kept[f];
    return out;
  }

  /**
   * The operator's "test connection": the connector's harmless read (Connector.checkConnection),
   * outside any transaction and cut off after the connector timeout; a disabled connector is
   * tested too (before it is switched on). Never throws for the provider's failure: it is the answer.
   */
  async testConnection(name: string): Promise<ConnectionCheck> {
    const row = CONNECTOR_NAME.test(name) ? await this.row(this.db.pool, name) : null;
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

  /** Switches a connector on or off (a disabled one takes no new operation); 404 for an unknown name. */
  async setEnabled(name: string, enabled: boolean, audit?: InTx<ConnectorChange>): Promise<ConnectorRecord> {
    if (!CONNECTOR_NAME.test(name)) throw new NotFoundError('Connector not found.');
    return withPgTx(this.db.pool, async (c) => {
      const prev = (await c.query<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE name = $1 FOR UPDATE`, [name])).rows[0];
      if (!prev) throw new NotFoundError('Connector not found.');
      const row = (await c.query<ConnectorRow>(
        `UPDATE connectors SET enabled = $2, updated_at = now() WHERE name = $1 RETURNING ${COLUMNS}`, [name, enabled],
      )).rows[0]!;
      if (audit) await audit(c, { name, before: this.shapeOf(prev), after: this.shapeOf(row), credentialsChanged: [] });
      return this.toRecord(row);
    });
  }

  /** A row as the audit trail may see it: plain settings, and the names of the secrets set. */
  private shapeOf(row: ConnectorRow): ConnectorShape {
    return { kind: row.kind, mode: row.mode, enabled: row.enabled, settings: { ...row.settings }, credentials: Object.keys(this.secretsOf(row)).sort() };
  }

  async list(): Promise<ConnectorRecord[]> {
    const r = await this.db.pool.query<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors ORDER BY name`);
    return r.rows.map((x) => this.toRecord(x));
  }

  async find(name: string): Promise<ConnectorRecord | null> {
    const row = await this.row(this.db.pool, name);
    return row ? this.toRecord(row) : null;
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

  /** The connector object for `name`; null when there is none, it is disabled, or its kind is not built yet. */
  async get(name: string, c: Queryable = this.db.pool): Promise<Connector | null> {
    const o = this.overrides.get(name);
    if (o) return o;
    const row = await this.row(c, name);
    return row && row.enabled ? this.build(row) : null;
  }

  /**
   * Checks a routing patch: every name must exist, be of an implemented kind and be able to take
   * its route (a tbank connector makes no payouts, a yookassa one only with payout credentials);
   * else 422 on the field.
   */
  async assertRoutable(routing: Partial<Routing>): Promise<void> {
    const names = [...new Set(Object.values(routing).flat())];
    const r = await this.db.pool.query<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE name = ANY($1)`, [names]);
    const rows = new Map(r.rows.map((x) => [x.name, x]));
    const errors: Record<string, string[]> = {};
    for (const route of ROUTES) {
      for (const n of routing[route] ?? []) {
        const row = rows.get(n);
        const c = this.overrides.get(n) ?? (row ? this.build(row) : null);
        if (!row && !c) (errors[`routing.${route}`] ??= []).push(`Unknown connector ${n}.`);
        else if (row && !this.plugin(row.kind)) (errors[`routing.${route}`] ??= []).push(`Connector ${n} is of kind ${row.kind}, not available in this version.`);
        else if (c && !supports(c.capabilities, route)) (errors[`routing.${route}`] ??= []).push(`Connector ${n} (${c.kind}) cannot take ${route}.`);
        else if (c && !connectorServes(c, { live: true }, this.config.profile)) {
          (errors[`routing.${route}`] ??= []).push(
            `Connector ${n} is ${c.kind === 'sandbox' ? 'the sandbox' : 'a test-mode connector'}: in the production profile a live route takes live-mode connectors only (test mode always uses the sandbox).`);
        }
      }
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  }

  /**
   * The enabled connectors of `names`, in order, that can take `route` for an operation of a
   * live merchant or of a test twin (connectorServes: never the sandbox for live money in
   * production, never a live connector for a test operation).
   */
  async candidates(names: string[], route: Route, operation: { live: boolean }, rows?: readonly ConnectorSnapshot[]): Promise<Connector[]> {
    const out: Connector[] = [];
    for (const n of names) {
      // Rows read with the caller's own statement (fresh, so a disabled connector is never taken);
      // a name not among them does not exist (no statement of its own: the caller may hold a
      // transaction's connection, and a second one per request can exhaust the pool under load).
      // A test's override is taken as it is.
      const row = this.overrides.has(n) || !rows ? undefined : rows.find((x) => x.name === n) ?? null;
      const c = row === null ? null : row ? (row.enabled ? this.build(row) : null) : await this.get(n);
      if (c && supports(c.capabilities, route) && connectorServes(c, operation, this.config.profile)) out.push(c);
    }
    return out;
  }

  /**
   * A merchant's routes from its stored routing: a test twin's are the sandbox's; a live
   * merchant's unset route is the sandbox in the `sandbox` profile and nothing in `production`
   * (live routes have no default there: the operator sets them).
   */
  routingFor(stored: Partial<Routing> | null, live: boolean): Routing {
    return effectiveRouting(stored, live, this.config.profile);
  }

  /** One timed call (src/domain/providers/call.ts). */
  call<T extends { status: string }>(connector: Connector, op: ConnectorOperation, fn: (ctx: CallContext) => Promise<T>) {
    return callConnector(this.db, connector, op, this.config.connectorTimeoutMs, fn);
  }

  /**
   * Creates through the first connector of `names` that can take `route`, moving to the next
   * ONLY when the provider refused before any money could move (`refused`). A timeout
   * (`unknown`) or any answer stops here: the money may have moved at that provider. With no
   * candidate at all, or every one refusing, the last refusal is answered. `before` runs before
   * each connector is called (outside the call's timing): a caller records there which
   * connector may hold the money, so a process killed during the call leaves that on record.
   */
  async route<T extends { status: string }>(
    names: string[], route: Route, operation: { live: boolean }, op: ConnectorOperation, fn: (c: Connector, ctx: CallContext) => Promise<T>,
    before?: (c: Connector) => Promise<void>,
  ): Promise<Routed<T> | { connector: null; outcome: Refused }> {
    const list = await this.candidates(names, route, operation);
    let last: Routed<T> | null = null;
    for (const c of list) {
      await before?.(c);
      const outcome = await this.call(c, op, (ctx) => fn(c, ctx));
      last = { connector: c, outcome };
      if (outcome.status !== 'refused') return last;
    }
    return last ?? { connector: null, outcome: { status: 'refused', code: 'no_connector', message: `No enabled connector can take ${route}.` } };
  }

  /** The merchant's routes (routingFor) and whether it is a live merchant (else a test twin). */
  async routingOf(merchantId: string): Promise<{ routing: Routing; live: boolean }> {
    const r = await this.db.pool.query<{ routing: Partial<Routing> | null; live: boolean }>(
      'SELECT routing, (live_merchant_id IS NULL) AS live FROM merchants WHERE id = $1', [merchantId]);
    const live = r.rows[0]?.live ?? true;
    return { routing: this.routingFor(r.rows[0]?.routing ?? null, live), live };
  }

  private async row(c: Queryable, name: string): Promise<ConnectorRow | null> {
    const r = await c.query<ConnectorRow>({ name: 'connector_row', text: `SELECT ${COLUMNS} FROM connectors WHERE name = $1`, values: [name] });
    return r.rows[0] ?? null;
  }

  /**
   * The connector object of a row, built by its kind's plugin; null for a kind this build does
   * not have. Built objects hold only what their row says (connector classes keep no state of
   * their own), so one is kept per row content and built again when any of it changes: the row
   * itself is still read fresh for every operation.
   */
  private build(row: ConnectorSnapshot): Connector | null {
    const key = `${row.kind}\u0000${row.mode}\u0000${row.secrets_enc ?? ''}\u0000${JSON.stringify(row.settings)}`;
    const seen = this.built.get(row.name);
    if (seen && seen.key === key) return seen.connector;
    const plugin = this.plugin(row.kind);
    if (!plugin) return null;
    const secrets = secretSettings(plugin.settings).length > 0 ? this.secretsOf(row) : {};
    const connector = plugin.build(
      { name: row.name, mode: row.mode, settings: row.settings, secrets },
      { db: this.db.pool, publicBaseUrl: this.config.publicBaseUrl, profile: this.config.profile, net: { allowPrivate: this.config.allowPrivateProviderUrls } },
    );
    this.built.set(row.name, { key, connector });
    return connector;
  }

  private readonly built = new Map<string, { key: string; connector: Connector }>();

  /** Secrets decrypted, for a connector class that needs them. */
  secretsOf(row: Pick<ConnectorRow, 'secrets_enc'>): Record<string, unknown> {
    return row.secrets_enc ? JSON.parse(decrypt(this.config.tokenEncryptionKey, row.secrets_enc)) as Record<string, unknown> : {};
  }

  private toRecord(row: ConnectorRow): ConnectorRecord {
    const settings: Record<string, unknown> = { ...row.settings };
    // Masked: the operator sees which secrets are set, never their value (every stored one for a kind this build does not have).
    if (row.secrets_enc) {
      const present = Object.keys(this.secretsOf(row));
      const plugin = this.plugin(row.kind);
      for (const f of plugin ? secretSettings(plugin.settings) : present) if (present.includes(f)) settings[f] = MASK;
    }
    return { name: row.name, kind: row.kind, mode: row.mode, enabled: row.enabled, settings, createdAt: row.created_at, updatedAt: row.updated_at };
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
