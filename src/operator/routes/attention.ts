import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../audit/audit.js';
import { operatorActions } from '../../backoffice/actions.js';
import { formBody } from '../../lib/form-body.js';
import { BASE, done, render } from '../context.js';
import { holdsMoney } from '../../domain/providers/conflict.js';

/** How long an item has been waiting, as an operator reads it: "2 d 3 h", "3 h 12 min", "5 min". */
export function ageOf(since: Date, now = new Date()): string {
  const min = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 60_000));
  const d = Math.floor(min / 1440);
  const h = Math.floor((min % 1440) / 60);
  const m = min % 60;
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min`;
}

/**
 * The attention list in the console: operations reconciliation gave up on,
 * with what was last heard, and the operator's decision through the operator API's action
 * (src/backoffice/actions.ts): same rules, same audit entry. Resolving needs `attention.resolve`
 * (admin, finance), checked by the console's hook before the handler runs.
 */
export default async function consoleAttention(app: FastifyInstance): Promise<void> {
  const actions = operatorActions(app);
  const { attention, operatorLists } = app.services;

  app.get('/attention', { schema: { hide: true } }, async (req, reply) => {
    const items = await attention.listOpen(200);
    const twins = await operatorLists.testTwinsOf(items.map((i) => i.merchantId));
    const now = new Date();
    return render(req, reply, 'attention', {
      nav: 'attention',
      items: items.map((i) => ({
        ...i, age: ageOf(i.createdAt, now), liveOf: twins.get(i.merchantId) ?? null, heard: JSON.stringify(i.lastHeard),
        // A conflict holding money no read confirmed is decided SUCCESS or FAIL, not settled.
        holds: i.kind === 'conflict' && holdsMoney(i.lastHeard),
      })),
    });
  });

  app.post('/attention/:id/resolve', { config: { permission: 'attention.resolve' }, schema: { hide: true } }, async (req: FastifyRequest, reply) => {
    const id = (req.params as { id: string }).id;
    const b = formBody(req);
    const note = (b.note ?? '').trim();
    const item = await actions.resolveAttention(actorOf(req), id, { outcome: b.outcome ?? '', note: note === '' ? null : note });
    // The provider's answer wins when it could say (asked before the decision): the message says so.
    const by = item.resolvedBy === 'provider' ? ` by the provider's answer (asked now), not the outcome chosen` : '';
    return done(reply, `${BASE}/attention`, `${item.objectType} ${item.objectId} resolved ${item.resolution}${by}.`);
  });
}
