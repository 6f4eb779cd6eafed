import type { Config } from '../../config.js';
import type { Db, InTx, Queryable } from '../../db/client.js';
import type { CallContext, CardTokenProvider, ConnectionCheck, Connector, ConnectorOperation, Route } from './connector.js';
import { CONNECTORS } from './connectors/index.js';
import type { ConnectorPlugin } from './plugin.js';
import type { ProviderNet } from './provider-http.js';
import { ConnectorRouting, type Routing } from './registry/routing.js';
import { ConnectorRuntime, type ConnectorHealth } from './registry/runtime.js';
import { ConnectorSettings, type ConnectorChange, type ConnectorRecord, type ConnectorRow, type ConnectorSnapshot } from './registry/settings.js';

export {
  CONNECTOR_NAME, MASK, ConnectorSettings, type ConnectorChange, type ConnectorRecord, type ConnectorShape, type ConnectorSnapshot,
} from './registry/settings.js';
export {
  DEFAULT_ROUTING, ConnectorRouting, connectorServes, effectiveRouting, routedConnectorsSql, type Routed, type Routing,
} from './registry/routing.js';
export { ConnectorRuntime, type ConnectorHealth } from './registry/runtime.js';

/**
 * The connector registry as one value (docs/adr/0132-connector-registry-in-three-parts.md): its settings (the
 * `connectors` table, secrets, validation, change records), its runtime (connector objects built
 * by their plugins, the timed call, health) and its routing (which connector serves an
 * operation). Each part is reachable on its own; the methods below are the parts' own, kept here
 * so a caller needs one object.
 */
export class ConnectorRegistry {
  readonly settings: ConnectorSettings;
  readonly runtime: ConnectorRuntime;
  readonly routing: ConnectorRouting;

  /** `plugins`: the kinds this registry knows, CONNECTORS (connectors/index.ts) unless a test adds one. */
  constructor(config: Config, db: Db, readonly plugins: readonly ConnectorPlugin[] = CONNECTORS) {
    this.settings = new ConnectorSettings(config, db, plugins);
    this.runtime = new ConnectorRuntime(config, db, this.settings);
    this.routing = new ConnectorRouting(config, db, this.settings, this.runtime);
  }

  // Settings (registry/settings.ts).
  get kinds(): string[] { return this.settings.kinds; }
  plugin(kind: string): ConnectorPlugin | null { return this.settings.plugin(kind); }
  get payoutTokenIssuers(): CardTokenProvider[] { return this.settings.payoutTokenIssuers; }
  put(name: string, body: Record<string, unknown>, audit?: InTx<ConnectorChange>, opts?: { keepSecrets?: boolean; createOnly?: boolean }) {
    return this.settings.put(name, body, audit, opts);
  }
  setEnabled(name: string, enabled: boolean, audit?: InTx<ConnectorChange>): Promise<ConnectorRecord> { return this.settings.setEnabled(name, enabled, audit); }
  list(): Promise<ConnectorRecord[]> { return this.settings.list(); }
  find(name: string): Promise<ConnectorRecord | null> { return this.settings.find(name); }
  secretsOf(row: Pick<ConnectorRow, 'secrets_enc'>): Record<string, unknown> { return this.settings.secretsOf(row); }

  // Runtime (registry/runtime.ts).
  override(connector: Connector): void { this.runtime.override(connector); }
  get(name: string, c?: Queryable): Promise<Connector | null> { return this.runtime.get(name, c); }
  buildFor(name: string, publicBaseUrl: string): Promise<{ connector: Connector; settings: Record<string, unknown>; secrets: Record<string, unknown>; net: ProviderNet } | null> {
    return this.runtime.buildFor(name, publicBaseUrl);
  }
  testConnection(name: string): Promise<ConnectionCheck> { return this.runtime.testConnection(name); }
  call<T extends { status: string }>(connector: Connector, op: ConnectorOperation, fn: (ctx: CallContext) => Promise<T>) { return this.runtime.call(connector, op, fn); }
  health(name: string): Promise<ConnectorHealth> { return this.runtime.health(name); }

  // Routing (registry/routing.ts).
  assertRoutable(routing: Partial<Routing>): Promise<void> { return this.routing.assertRoutable(routing); }
  candidates(names: string[], route: Route, operation: { live: boolean }, rows?: readonly ConnectorSnapshot[]): Promise<Connector[]> {
    return this.routing.candidates(names, route, operation, rows);
  }
  routingFor(stored: Partial<Routing> | null, live: boolean): Routing { return this.routing.routingFor(stored, live); }
  routingOf(merchantId: string): Promise<{ routing: Routing; live: boolean }> { return this.routing.routingOf(merchantId); }
  route<T extends { status: string }>(
    names: string[], route: Route, operation: { live: boolean }, op: ConnectorOperation, fn: (c: Connector, ctx: CallContext) => Promise<T>,
    before?: (c: Connector) => Promise<void>,
  ) {
    return this.routing.route(names, route, operation, op, fn, before);
  }
}
