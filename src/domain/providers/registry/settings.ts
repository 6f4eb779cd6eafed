import type { Config } from '../../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../../db/client.js';
import { ValidationError, NotFoundError } from '../../../errors.js';
import { decrypt, encrypt } from '../../../lib/crypto.js';
import type { CardTokenProvider, ConnectorMode } from '../connector.js';
import { payoutTokenIssuers, secretSettings, settingsErrors, type ConnectorPlugin } from '../plugin.js';
import { providerUrlProblem } from '../provider-http.js';

export const CONNECTOR_NAME = /^[a-z0-9-]{1,40}$/;

export const MASK = '********';

/** `kind` is any text: a row may name a kind this build no longer has (docs/adr/0057-connectors-as-plugins.md). */
export interface ConnectorRow {
  name: string; kind: string; mode: ConnectorMode; settings: Record<string, unknown>; secrets_enc: string | null;
  enabled: boolean; created_at: Date; updated_at: Date;
}
const COLUMNS = 'name, kind, mode, settings, secrets_enc, enabled, created_at, updated_at';

/** What building a connector needs of its row: read with another statement (the payment's bill read). */
export type ConnectorSnapshot = Pick<ConnectorRow, 'name' | 'kind' | 'mode' | 'settings' | 'secrets_enc' | 'enabled'>;

export interface ConnectorRecord {
  name: string; kind: string; mode: ConnectorMode; enabled: boolean;
  /** Secrets replaced by MASK: never returned. */
  settings: Record<string, unknown>;
  createdAt: Date; updatedAt: Date;
}

/** What a connector looked like to the audit trail: no secret value, only which secrets are set. */
export interface ConnectorShape { kind: string; mode: string; enabled: boolean; settings: Record<string, unknown>; credentials: string[] }

/**
 * One change of a connector, for its audit step: its shape before (null: created) and after, and
 * the secret settings whose value changed, was set or was removed (names only, never values).
 */
export interface ConnectorChange { name: string; before: ConnectorShape | null; after: ConnectorShape; credentialsChanged: string[] }

/**
 * The `connectors` table as the operator keeps it: rows validated by their kind's settings
 * schema, secrets encrypted at rest and masked on the way out, each change recorded for the
 * audit trail. Secrets are decrypted here only for the runtime to build a connector for a call.
 */
export class ConnectorSettings {
  private readonly byKind: ReadonlyMap<string, ConnectorPlugin>;

  /** `plugins`: the kinds a row may be of (connectors/index.ts unless a test adds one). */
  constructor(private readonly config: Config, private readonly db: Db, readonly plugins: readonly ConnectorPlugin[]) {
    this.byKind = new Map(plugins.map((p) => [p.kind, p]));
  }

  /** The kinds a connector may be of, in the list's order. */
  get kinds(): string[] { return this.plugins.map((p) => p.kind); }

  /** A kind's plugin; null for a kind this build does not have. */
  plugin(kind: string): ConnectorPlugin | null { return this.byKind.get(kind) ?? null; }

  /** Whose payout card tokens an account may hold: the issuers the kinds declare (ConnectorPlugin.payoutTokens). */
  get payoutTokenIssuers(): CardTokenProvider[] { return payoutTokenIssuers(this.plugins); }

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

  /** One row as stored (secrets still encrypted), through `c`: a caller's transaction sees its own writes. */
  async row(c: Queryable, name: string): Promise<ConnectorRow | null> {
    const r = await c.query<ConnectorRow>({ name: 'connector_row', text: `SELECT ${COLUMNS} FROM connectors WHERE name = $1`, values: [name] });
    return r.rows[0] ?? null;
  }

  /** The rows of `names` that exist, by name. */
  async rows(names: readonly string[]): Promise<Map<string, ConnectorRow>> {
    const r = await this.db.pool.query<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE name = ANY($1)`, [names]);
    return new Map(r.rows.map((x) => [x.name, x]));
  }

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
