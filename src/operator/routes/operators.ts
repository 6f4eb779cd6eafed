import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actorOf } from '../../audit/audit.js';
import { MailNotConfiguredError, operatorActions } from '../../backoffice/actions.js';
import { ROLES, type Role } from '../../domain/operator/roles.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { formBody } from '../../lib/form-body.js';
import { BASE, done, render } from '../context.js';

const admin = { permission: 'admin' } as const;
const roleOf = (v: string | undefined): Role => {
  if (!ROLES.includes(v as Role)) throw ValidationError.field('role', 'Choose one of the roles.');
  return v as Role;
};

/**
 * The operators page: every operator with role, status, password and two-factor state (a read);
 * an admin invites by email, changes a role, disables or enables, mails a password reset link
 * and resets two-factor sign-in, each through the operator API's shared actions (audited there).
 * An admin changes no role or status of their own here: the console would lock its own user out.
 */
export default async function consoleOperatorRoutes(app: FastifyInstance): Promise<void> {
  const actions = operatorActions(app);
  const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;
  const page = async (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) =>
    render(req, reply, 'operators', { nav: 'operators', operators: await app.services.operators.list(), roles: ROLES, self: req.console.session!.operator.id, ...data });
  const notSelf = (req: FastifyRequest) => {
    if (idOf(req) === req.console.session!.operator.id) throw new ConflictError('You cannot change your own role or status: ask another admin.');
  };
  const mailRefused = (req: FastifyRequest, reply: FastifyReply, e: unknown) => {
    if (!(e instanceof MailNotConfiguredError)) throw e;
    reply.status(503);
    return render(req, reply, 'error', { status: 503, message: e.message });
  };

  app.get('/operators', { schema: { hide: true } }, async (req, reply) => page(req, reply));

  app.post('/operators', { config: admin, schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    try {
      const email = (b.email ?? '').trim();
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 255) throw ValidationError.field('email', 'Enter a valid email address.');
      const r = await actions.inviteOperator(actorOf(req), email, roleOf(b.role));
      return done(reply, `${BASE}/operators`, `${r.operator.email} is invited: a link to choose a password was sent to ${r.sentTo}.`);
    } catch (e) {
      if (!(e instanceof ValidationError)) return mailRefused(req, reply, e);
      reply.status(422);
      return page(req, reply, { errors: e.errors, values: b });
    }
  });

  app.post('/operators/:id/role', { config: admin, schema: { hide: true } }, async (req, reply) => {
    notSelf(req);
    const o = await actions.updateOperator(actorOf(req), idOf(req), { role: roleOf(formBody(req).role) });
    return done(reply, `${BASE}/operators`, `${o.email} is now ${o.role}.`);
  });

  app.post('/operators/:id/status', { config: admin, schema: { hide: true } }, async (req, reply) => {
    notSelf(req);
    const status = formBody(req).status;
    if (status !== 'active' && status !== 'disabled') throw ValidationError.field('status', 'Choose active or disabled.');
    const o = await actions.updateOperator(actorOf(req), idOf(req), { status });
    return done(reply, `${BASE}/operators`, status === 'disabled' ? `${o.email} is disabled: every token revoked, every session ended.` : `${o.email} is active again.`);
  });

  app.post('/operators/:id/password-reset', { config: admin, schema: { hide: true } }, async (req, reply) => {
    try {
      const r = await actions.sendOperatorPasswordReset(actorOf(req), idOf(req));
      return done(reply, `${BASE}/operators`, `A reset link was sent to ${r.sentTo}; their console sessions ended.`);
    } catch (e) { return mailRefused(req, reply, e); }
  });

  app.post('/operators/:id/totp-reset', { config: admin, schema: { hide: true } }, async (req, reply) => {
    if (!(await actions.resetOperatorTwoFactor(actorOf(req), idOf(req)))) throw new NotFoundError('Operator not found.');
    return done(reply, `${BASE}/operators`, 'Two-factor sign-in reset: their next sign-in enrols again.');
  });
}
