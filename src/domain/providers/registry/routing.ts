import type { Config, PaymentsProfile } from '../../../config.js';
import type { Db } from '../../../db/client.js';
import { ValidationError } from '../../../errors.js';
import type { Refused, Unknown } from '../call.js';
import { ROUTES, supports, type CallContext, type Connector, type ConnectorOperation, type Route } from '../connector.js';
import type { ConnectorRuntime } from './runtime.js';
import type { ConnectorSettings, ConnectorSnapshot } from './settings.js';

export type Routing = Record<Route, string[]>;
/** Every route of a test twin, and of a live merchant's unset route in the `sandbox` profile. */
export const DEFAULT_ROUTING: Routing = { payment_card: ['sandbox'], payment_sbp: ['sandbox'], payout_card: ['sandbox'], payout_sbp: ['sandbox'] };
const NO_ROUTING: Routing = { payment_card: [], payment_sbp: [], payout_card: [], payout_sbp: [] };

/** A merchant's routes in a profile (ConnectorRouting.routingFor; the operator API shows these). */
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

/** The result of a routed creation: the outcome and the connector whose answer it is. */
export type Routed<T> = { connector: Connector; outcome: T | Refused | Unknown };

/**
 * Which connector serves a merchant's operation: its routes (stored, or the profile's defaults),
 * the connectors on a route that can take the method, the wall between live and test money, and
 * the walk down a route that moves on only after a refusal.
 */
export class ConnectorRouting {
  constructor(
    private readonly config: Config, private readonly db: Db, private readonly settings: ConnectorSettings, private readonly runtime: ConnectorRuntime,
  ) {}

  /**
   * Checks a routing patch: every name must exist, be of an implemented kind and be able to take
   * its route (as its connector's capabilities say: a kind without payouts, or one whose payouts
   * need credentials it lacks, cannot take a payout route); else 422 on the field.
   */
  async assertRoutable(routing: Partial<Routing>): Promise<void> {
    const rows = await this.settings.rows([...new Set(Object.values(routing).flat())]);
    const errors: Record<string, string[]> = {};
    for (const route of ROUTES) {
      for (const n of routing[route] ?? []) {
        const row = rows.get(n);
        const c = this.runtime.overridden(n) ?? (row ? this.runtime.build(row) : null);
        if (!row && !c) (errors[`routing.${route}`] ??= []).push(`Unknown connector ${n}.`);
        else if (row && !this.settings.plugin(row.kind)) (errors[`routing.${route}`] ??= []).push(`Connector ${n} is of kind ${row.kind}, not available in this version.`);
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
      const row = this.runtime.overridden(n) !== undefined || !rows ? undefined : rows.find((x) => x.name === n) ?? null;
      const c = row === null ? null : row ? (row.enabled ? this.runtime.build(row) : null) : await this.runtime.get(n);
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

  /** The merchant's routes (routingFor) and whether it is a live merchant (else a test twin). */
  async routingOf(merchantId: string): Promise<{ routing: Routing; live: boolean }> {
    const r = await this.db.pool.query<{ routing: Partial<Routing> | null; live: boolean }>(
      'SELECT routing, (live_merchant_id IS NULL) AS live FROM merchants WHERE id = $1', [merchantId]);
    const live = r.rows[0]?.live ?? true;
    return { routing: this.routingFor(r.rows[0]?.routing ?? null, live), live };
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
      const outcome = await this.runtime.call(c, op, (ctx) => fn(c, ctx));
      last = { connector: c, outcome };
      if (outcome.status !== 'refused') return last;
    }
    return last ?? { connector: null, outcome: { status: 'refused', code: 'no_connector', message: `No enabled connector can take ${route}.` } };
  }
}
