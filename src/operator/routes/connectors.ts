import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actorOf } from '../../audit/audit.js';
import { connectorAudit, rehearsalAudit, testConnection } from '../../domain/audit-steps.js';
import { connectorView } from '../../domain/operator-views.js';
import { rehearsalView } from '../../domain/rehearsal/rehearsal.view.js';
import { MASK } from '../../domain/providers/registry.js';
import { kindSummary, type ConnectorPlugin } from '../../domain/providers/plugin.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import { BASE, done, render } from '../context.js';

/**
 * A connector form's settings as the operator API's body: each of the kind's settings from its
 * `settings.<name>` field; a blank text field is absent (a plain setting takes its default, a
 * secret keeps its stored value: put's keepSecrets), a boolean is its checkbox.
 */
function settingsOf(plugin: ConnectorPlugin, b: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [f, spec] of Object.entries(plugin.settings)) {
    const raw = b[`settings.${f}`];
    if (spec.type === 'boolean') { out[f] = raw === 'true'; continue; }
    if (raw === undefined || raw.trim() === '') continue;
    // A secret is taken as typed (a key may end in a space); anything else trimmed.
    out[f] = spec.secret ? raw : raw.trim();
  }
  return out;
}

/** What the form shows of a stored setting: a secret only as set or not, never its value. */
function settingsShown(plugin: ConnectorPlugin | null, stored: Record<string, unknown>) {
  if (!plugin) {
    return Object.entries(stored).map(([name, v]) => ({
      name, type: 'string', required: false, default: null, description: '', secret: v === MASK, set: v !== undefined, value: v === MASK ? '' : String(v),
    }));
  }
  return Object.entries(plugin.settings).map(([name, s]) => {
    const v = stored[name];
    return {
      name, type: s.type, required: !!s.required, default: s.default ?? null, description: s.description, secret: !!s.secret,
      set: v !== undefined && v !== '', value: s.secret || v === undefined ? '' : String(v),
    };
  });
}

/**
 * The console's connectors, so an operator needs no API call to run a provider: create one of any kind with a form generated from
 * the kind's settings schema, change its settings (secrets write-only), test the connection with
 * the provider's harmless read, switch it on or off. The registry's put and setEnabled, as the
 * operator API and the CLI use them, each audited.
 */
export default async function connectorPages(app: FastifyInstance): Promise<void> {
  const { connectors, rehearsals } = app.services;
  const nameOf = (req: FastifyRequest) => (req.params as { name: string }).name;
  const kinds = () => connectors.plugins.map(kindSummary);

  const newForm = (req: FastifyRequest, reply: FastifyReply, kind: string | undefined, data: Record<string, unknown> = {}) => {
    const plugin = kind ? connectors.plugin(kind) : null;
    return render(req, reply, 'connector-new', {
      nav: 'connectors', kinds: kinds(), kind: plugin ? kindSummary(plugin) : null,
      settings: plugin ? settingsShown(plugin, {}) : [], values: { mode: 'test', enabled: 'true' }, ...data,
    });
  };

  app.get('/connectors/new', { config: { permission: 'admin' }, schema: { hide: true } }, async (req, reply) => newForm(req, reply, queryOf(req).kind));

  app.post('/connectors/new', { config: { permission: 'admin' }, schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const plugin = connectors.plugin(b.kind ?? '');
    const name = (b.name ?? '').trim();
    try {
      if (!plugin) throw new ValidationError({ kind: [`One of ${connectors.kinds.join(', ')}.`] });
      // The console's own address for the form (/connectors/new) cannot be a connector's page.
      if (name === 'new') throw new ValidationError({ name: ['This name is reserved; choose another.'] });
      await connectors.put(name, { kind: plugin.kind, mode: b.mode, enabled: b.enabled === 'true', settings: settingsOf(plugin, b) }, connectorAudit(actorOf(req)), { createOnly: true });
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      reply.status(422);
      // Secrets typed are not sent back into the page: the operator types them again.
      const values = Object.fromEntries(Object.entries(b).filter(([k]) => !plugin || !k.startsWith('settings.') || !plugin.settings[k.slice(9)]?.secret));
      return newForm(req, reply, b.kind, { errors: e.errors, values });
    }
    return done(reply, `${BASE}/connectors/${name}`, `Connector ${name} created. Test the connection before routing payments to it.`);
  });

  const page = async (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const name = nameOf(req);
    const c = /^[a-z0-9-]{1,40}$/.test(name) ? await connectors.find(name) : null;
    if (!c) throw new NotFoundError('Connector not found.');
    const plugin = connectors.plugin(c.kind);
    const latest = (await rehearsals.list(c.name, 1))[0];
    return render(req, reply, 'connector', {
      nav: 'connectors', c: connectorView(app.config, c, await connectors.health(c.name)), kind: plugin ? kindSummary(plugin) : null,
      settings: settingsShown(plugin, c.settings), values: { mode: c.mode }, check: null,
      rehearsal: latest ? rehearsalView(latest, true) : null, rehearsable: plugin !== null && c.kind !== 'sandbox',
      // docs/adr/0106: a live connector of a kind no rehearsal ever passed is enabled with a warning.
      unrehearsed: c.mode === 'live' && !await rehearsals.kindPassed(c.kind), publicUrl: app.config.publicBaseUrl, ...data,
    });
  };

  app.get('/connectors/:name', { schema: { hide: true } }, async (req, reply) => page(req, reply));

  app.post('/connectors/:name', { schema: { hide: true } }, async (req, reply) => {
    const name = nameOf(req);
    const c = await connectors.find(name);
    if (!c) throw new NotFoundError('Connector not found.');
    const plugin = connectors.plugin(c.kind);
    if (!plugin) throw new ValidationError({ kind: [`Connectors of kind ${c.kind} are not available in this version.`] });
    const b = formBody(req);
    try {
      await connectors.put(name, { kind: c.kind, mode: b.mode, settings: settingsOf(plugin, b) }, connectorAudit(actorOf(req)), { keepSecrets: true });
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      reply.status(422);
      return page(req, reply, { errors: e.errors, values: { mode: b.mode } });
    }
    return done(reply, `${BASE}/connectors/${name}`, 'Settings saved.');
  });

  app.post('/connectors/:name/enabled', { schema: { hide: true } }, async (req, reply) => {
    const name = nameOf(req);
    const on = formBody(req).enabled === 'true';
    const c = await connectors.setEnabled(name, on, connectorAudit(actorOf(req)));
    // Warned, not refused (docs/adr/0106): the operator may know better than the report.
    const unrehearsed = await rehearsals.unrehearsedWarning(c);
    if (unrehearsed) req.log.warn({ connector: name, kind: c.kind }, 'live connector enabled: no rehearsal of its kind ever passed');
    const warning = unrehearsed ? ` Warning: ${unrehearsed}` : '';
    return done(reply, `${BASE}/connectors/${name}`, on ? `Connector ${name} enabled.${warning}` : `Connector ${name} disabled: routing moves to the next connector.`);
  });

  // A go-live rehearsal (docs/adr/0104): started here, its report read on this page as it fills.
  app.post('/connectors/:name/rehearse', { schema: { hide: true } }, async (req, reply) => {
    const name = nameOf(req);
    const b = formBody(req);
    const body: Record<string, unknown> = {};
    if (b.shop_id?.trim()) body.shop_id = b.shop_id.trim();
    if (b.public_url?.trim()) body.public_url = b.public_url.trim();
    try {
      const r = await rehearsals.start(name, body, rehearsalAudit(actorOf(req)));
      return done(reply, `${BASE}/connectors/${name}`, `Rehearsal ${r.id} started: reload this page to follow its steps.`);
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      reply.status(422);
      return page(req, reply, { rehearseErrors: e.errors });
    }
  });

  // The answer is shown on the page answering this POST (a reload sends nothing: the form token is spent).
  app.post('/connectors/:name/test', { schema: { hide: true } }, async (req, reply) => {
    const check = await testConnection(app.services, actorOf(req), nameOf(req));
    return page(req, reply, { check });
  });
}
