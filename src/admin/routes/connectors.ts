import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../errors.js';
import { CONNECTOR_NAME } from '../../domain/providers/registry.js';
import { settingsLine, type ConnectorPlugin } from '../../domain/providers/plugin.js';
import { bodyObject } from '../../lib/input-fields.js';
import { connectorView } from '../../domain/operator-views.js';
import { actorOf } from '../../audit/audit.js';
import { connectorAudit } from '../../domain/audit-steps.js';
import { both, ConnectorSchema, list, ok } from './schemas.js';

const NameParams = Type.Object({ name: Type.String({ examples: ['yk-live'] }) });
/** The body's kinds and settings come from the registry's connector list (connectors/index.ts). */
const putBody = (plugins: readonly ConnectorPlugin[]) => Type.Object({
  kind: Type.String({ enum: plugins.map((p) => p.kind) }),
  mode: Type.String({ enum: ['live', 'test'] }),
  enabled: Type.Optional(Type.Boolean({ description: 'Absent: unchanged (true on create)' })),
  settings: Type.Optional(Type.Record(Type.String(), Type.Unknown(), {
    description: plugins.map((p) => `${p.kind} ${settingsLine(p.settings)}`).join('; '),
  })),
});

const PatchBody = Type.Object({ enabled: Type.Boolean() });

const tags = ['admin'];
const One = ok(ConnectorSchema.properties, 'The connector, settings masked, with its health');
/** Switching one on or off answers the connector and what the operator should know (docs/adr/0106). */
const Switched = ok({
  ...ConnectorSchema.properties,
  warnings: Type.Array(Type.String(), {
    description: 'Why enabling it deserves a second look (a live connector of a kind no rehearsal ever passed, docs/adr/0106); empty otherwise. Enabled all the same.',
    examples: [['no rehearsal of a tbank connector has ever passed; rehearse one against the provider\'s test terminal before real money.']],
  }),
}, 'The connector, settings masked, with its health and warnings');

/** Operator API: the connector registry (PROVIDERS.md "Connectors"). Secrets are never returned. */
export default async function connectorAdminRoutes(app: FastifyInstance): Promise<void> {
  const { connectors } = app.services;
  /** Warned, not refused (docs/adr/0106): the same words and log line as the console's, whether a live connector is enabled by PUT or PATCH. */
  const warningsOf = async (req: FastifyRequest, record: { name: string; kind: string; mode: string; enabled: boolean }): Promise<string[]> => {
    const unrehearsed = await app.services.rehearsals.unrehearsedWarning(record);
    if (unrehearsed) req.log.warn({ connector: record.name, kind: record.kind }, 'live connector enabled: no rehearsal of its kind ever passed');
    return unrehearsed ? [unrehearsed] : [];
  };

  app.put<{ Params: { name: string } }>('/connectors/:name', {
    schema: { tags, summary: 'Create (201) or replace (200) a connector; secrets encrypted at rest, answered masked; `warnings` says what to check', params: NameParams, body: putBody(connectors.plugins), response: both([200, 201], Switched) },
  }, async (req, reply) => {
    const { created, record } = await connectors.put(req.params.name, bodyObject(req), connectorAudit(actorOf(req)));
    const warnings = await warningsOf(req, record);
    return reply.status(created ? 201 : 200).send({ success: true, ...connectorView(app.config, record, await connectors.health(record.name)), warnings });
  });

  app.patch<{ Params: { name: string } }>('/connectors/:name', {
    schema: { tags, summary: 'Switch a connector on or off (a disabled one takes no new payment or payout; routing moves to the next); `warnings` says what to check', params: NameParams, body: PatchBody, response: { 200: Switched } },
  }, async (req) => {
    const record = await connectors.setEnabled(req.params.name, (req.body as { enabled: boolean }).enabled, connectorAudit(actorOf(req)));
    return { success: true, ...connectorView(app.config, record, await connectors.health(record.name)), warnings: await warningsOf(req, record) };
  });

  app.get('/connectors', { schema: { tags, summary: 'Every connector with its health (settings masked)', response: { 200: list(ConnectorSchema, 'Every connector') } } }, async () => {
    const rows = await connectors.list();
    const data = [];
    for (const c of rows) data.push(connectorView(app.config, c, await connectors.health(c.name)));
    return { success: true, data };
  });

  app.get<{ Params: { name: string } }>('/connectors/:name', {
    schema: { tags, summary: 'A connector: settings (masked), health, operations waiting on an unknown outcome', params: NameParams, response: { 200: One } },
  }, async (req) => {
    const c = CONNECTOR_NAME.test(req.params.name) ? await connectors.find(req.params.name) : null;
    if (!c) throw new NotFoundError('Connector not found.');
    return { success: true, ...connectorView(app.config, c, await connectors.health(c.name)) };
  });
}
