import type { PaymentsProfile } from '../../config.js';
import type { Queryable } from '../../db/client.js';
import type { Capabilities, CardTokenProvider, Connector, ConnectorMode } from './connector.js';
import { parseAllowList, type ProviderNet } from './provider-http.js';

/**
 * A connector kind as one value (docs/connectors/README.md "Adding a connector"): its folder
 * `connectors/<kind>/` exports one of these from its `index.ts`, and `connectors/index.ts` lists
 * it. The registry, the operator API, the console, the CLI and the docs read the list; nothing
 * else names a kind.
 */
export interface ConnectorPlugin<K extends string = string> {
  readonly kind: K;
  /** What the kind talks to, for people (console, docs, CLI help). */
  readonly title: string;
  readonly settings: SettingsSchema;
  /** The most a connector of this kind can do; one may do less (e.g. YooKassa payouts need payout credentials). */
  readonly capabilities: Capabilities;
  /**
   * The kind's provider collects payout cards in its own widget and answers a token for each
   * (docs/adr/0133): a payout account may then keep `issuer`'s token and no card number, and its
   * connectors offer the widget (Connector.payoutWidget). Absent: the kind issues no payout tokens.
   */
  readonly payoutTokens?: { readonly issuer: CardTokenProvider };
  /** How inbound notifications are believed; null: the kind sends none (anything claiming to be one is refused). */
  readonly notifications: { verifiedBy: string } | null;
  /** The connector object for a stored row (secrets decrypted for this call only). */
  build(row: StoredConnector, ctx: BuildContext): Connector;
}

/** A `connectors` row as a plugin sees it: plain settings and decrypted secrets apart. */
export interface StoredConnector {
  name: string;
  mode: ConnectorMode;
  settings: Record<string, unknown>;
  secrets: Record<string, unknown>;
}

/** What the service gives every connector it builds. */
export interface BuildContext {
  /** The pool (the sandbox keeps its provider memory in the database). */
  db: Queryable;
  /** Absolute base URL of this service (return and notification URLs). */
  publicBaseUrl: string;
  profile: PaymentsProfile;
  /** Where the connector may call (ALLOW_PRIVATE_PROVIDER_URLS). */
  net: ProviderNet;
}

/**
 * `string`: a non-empty string (when required) of at most 500 characters; `url`: an http(s) URL;
 * `ip-list`: addresses or CIDR networks, comma separated; `boolean`: true or false.
 */
export type SettingType = 'string' | 'url' | 'ip-list' | 'boolean';

export interface SettingSpec {
  type: SettingType;
  required?: boolean;
  /** Encrypted at rest, never returned (masked), named but never shown in the audit trail. */
  secret?: boolean;
  /** What an absent setting means (for people; the plugin's build applies it). */
  default?: string;
  description: string;
}

/** A kind's settings by name, in the order people read them (required first). */
export type SettingsSchema = Readonly<Record<string, SettingSpec>>;

/** The payout token issuers of a list of kinds, each once, in the list's order. */
export const payoutTokenIssuers = (plugins: readonly ConnectorPlugin[]): CardTokenProvider[] =>
  [...new Set(plugins.flatMap((p) => (p.payoutTokens ? [p.payoutTokens.issuer] : [])))];

export const secretSettings = (s: SettingsSchema): string[] => Object.keys(s).filter((f) => s[f]!.secret);

/** `{shop_id, secret_key, base_url?}`: a kind's settings in one line (CLI help, OpenAPI, docs). */
export function settingsLine(s: SettingsSchema): string {
  return `{${Object.entries(s).map(([f, x]) => `${f}${x.required ? '' : '?'}`).join(', ')}}`;
}

/**
 * Checks settings against a kind's schema; answers errors by field (`settings.<name>`), empty
 * when valid. Required ones must be non-blank strings; a setting the schema does not name is refused.
 */
export function settingsErrors(kind: string, schema: SettingsSchema, settings: Record<string, unknown>): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const [f, spec] of Object.entries(schema)) {
    if (!spec.required) continue;
    if (typeof settings[f] !== 'string' || (settings[f] as string).trim() === '') errors[`settings.${f}`] = [`The ${f} setting is required for ${kind}.`];
  }
  for (const [f, v] of Object.entries(settings)) {
    const spec = Object.hasOwn(schema, f) ? schema[f]! : null;
    if (!spec) { errors[`settings.${f}`] = [`Unknown setting for ${kind}.`]; continue; }
    if (spec.type === 'boolean') { if (typeof v !== 'boolean') errors[`settings.${f}`] = ['Must be a boolean.']; continue; }
    if (typeof v !== 'string' || v.length > 500) { errors[`settings.${f}`] = ['Must be a string of at most 500 characters.']; continue; }
    if (spec.type === 'url' && !/^https?:\/\/[^\s]+$/.test(v)) errors[`settings.${f}`] = ['Must be an http(s) URL.'];
    if (spec.type === 'ip-list') {
      try { parseAllowList(v); } catch (e) { errors[`settings.${f}`] = [`IP addresses or CIDR networks, comma separated: ${(e as Error).message}.`]; }
    }
  }
  return errors;
}

/** A setting as a non-empty string, or undefined. */
export const settingText = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A kind as people read it (the console's list of kinds; docs/connectors/README.md says the same). */
export function kindSummary(p: ConnectorPlugin) {
  const c = p.capabilities;
  const takes = [
    c.payment.card && 'card payments', c.payment.sbp && 'SBP payments', c.refunds && (c.partialRefunds ? 'refunds (partial too)' : 'refunds'),
    c.payout.card && 'card payouts', c.payout.sbp && 'SBP payouts',
  ].filter((x): x is string => typeof x === 'string');
  return {
    kind: p.kind, title: p.title, takes, hostsCardForm: c.hostsCardForm,
    settings: Object.entries(p.settings).map(([name, s]) => ({ name, required: !!s.required, secret: !!s.secret, default: s.default ?? null, description: s.description })),
    notifications: p.notifications?.verifiedBy ?? null,
  };
}
