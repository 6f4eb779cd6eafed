import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actorOf, writeAudit, type Actor } from '../../audit/audit.js';
import { shopAudit } from '../../domain/audit-steps.js';
import { operatorActions } from '../../backoffice/actions.js';
import { merchantView } from '../../domain/operator-views.js';
import { fiscalSummary } from '../../domain/receipt/fiscal.js';
import { ROUTES, type Route } from '../../domain/providers/connector.js';
import { effectiveRouting } from '../../domain/providers/registry.js';
import { INVITE_DAYS } from '../../domain/merchant/team.service.js';
import { ValidationError } from '../../errors.js';
import { mailTexts } from '../../mail/templates.js';
import { teamInviteMail } from '../../mail/team-invite.js';
import { formBody } from '../../lib/form-body.js';
import { BASE, done, render } from '../context.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const CURRENCIES = ['RUB', 'USD', 'EUR'] as const;
type Currency = (typeof CURRENCIES)[number];
/** Choices per route on the routing form: more than the stored list, so one more can be added. */
const ROUTE_SLOTS = 4;
/** The cabinet page an invitation link opens (src/cabinet/routes/team.ts). */
const INVITE_PATH = '/cabinet/team/invite';

type Errors = Record<string, string[]>;
const add = (e: Errors, field: string, message: string) => { (e[field] ??= []).push(message); };
const errorsOf = (e: unknown): Errors => {
  if (e instanceof ValidationError) return e.errors;
  throw e;
};

function emailField(errors: Errors, field: string, raw: string | undefined): string {
  const v = (raw ?? '').trim().toLowerCase();
  if (!v) add(errors, field, 'Required.');
  else if (v.length > 255 || !EMAIL.test(v)) add(errors, field, 'Must be an email address.');
  return v;
}

function shopFields(errors: Errors, b: Record<string, string>, prefix: string): { name: string; currency: Currency } {
  const name = (b[`${prefix}name`] ?? '').trim();
  if (!name) add(errors, `${prefix}name`, 'Required.');
  else if (name.length > 255) add(errors, `${prefix}name`, 'At most 255 characters.');
  const currency = (b[`${prefix}currency`] ?? 'RUB') as Currency;
  if (!CURRENCIES.includes(currency)) add(errors, `${prefix}currency`, `One of ${CURRENCIES.join(', ')}.`);
  return { name, currency };
}

/**
 * Onboarding from the console: "New merchant" creates the merchant, invites its cabinet owner
 * by email (the team invitation: the owner sets a password through the mailed link; an owner
 * with the merchant's own contact address gets the merchant's own login instead) and creates its
 * first shop; the merchant's setup page adds owners and shops and edits
 * its routing. Every step goes through the services the operator API and the cabinet use, each
 * with its audit entry (docs/adr/0065-onboarding-from-the-console.md).
 */
export default async function onboardingPages(app: FastifyInstance): Promise<void> {
  const actions = operatorActions(app);
  const { team, shops, connectors, passwordResets } = app.services;
  const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;
  const inviteLink = (token: string) => `${app.config.publicBaseUrl}${INVITE_PATH}/${token}`;

  /** The team invitation as the cabinet sends it, by the operator: audited and mailed in one transaction. */
  const inviteOwner = (who: Actor, merchantId: string, email: string) => team.invite(merchantId, { email, role: 'owner' }, async (c, m) => {
    await writeAudit(c, who, {
      action: 'merchant_user.invite', objectType: 'merchant_user', objectId: m.id, before: null,
      after: { email: m.email, role: m.role, state: m.state, merchant_id: merchantId },
    });
    await app.services.mail.enqueue(c, { merchantId, kind: 'team_invite', to: m.email, ...(await teamInviteMail(c, merchantId, inviteLink(m.token), m.role, INVITE_DAYS)) });
  });

  /**
   * The owner who signs in with the merchant's contact address: the merchant's own login (no
   * team member), whose password is set through a mailed one-time link valid as long as an invitation.
   */
  const inviteOwnLogin = (who: Actor, merchant: { id: string; name: string }) => passwordResets.request({ merchantId: merchant.id, userId: null }, (c, x) => writeAudit(c, who, {
    action: 'merchant.password.invite', objectType: 'merchant', objectId: merchant.id, before: null,
    after: { link_sent_to: x.email, valid_days: INVITE_DAYS },
  }), { minutes: INVITE_DAYS * 24 * 60, mail: (link, minutes) => mailTexts.ownerLoginInvite(link, minutes, merchant.name) });

  const createShop = (who: Actor, merchantId: string, s: { name: string; currency: Currency }) =>
    shops.create(merchantId, { name: s.name, defaultCurrency: s.currency }, shopAudit(app.config, who, 'shop.create'));

  const newForm = (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) =>
    render(req, reply, 'merchant-new', { nav: 'merchants', currencies: CURRENCIES, values: { shop_currency: 'RUB' }, ...data });

  app.get('/merchants/new', { config: { permission: 'admin' }, schema: { hide: true } }, async (req, reply) => newForm(req, reply));

  app.post('/merchants/new', { config: { permission: 'admin' }, schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const who = actorOf(req);
    const errors: Errors = {};
    const name = (b.name ?? '').trim();
    if (!name) add(errors, 'name', 'Required.');
    else if (name.length > 255) add(errors, 'name', 'At most 255 characters.');
    const email = emailField(errors, 'email', b.email);
    const owner = emailField(errors, 'owner_email', b.owner_email);
    const shop = shopFields(errors, b, 'shop_');
    // A sole trader has one address: the owner then signs in with the merchant's own login.
    const ownLogin = !errors.email && !errors.owner_email && email === owner;
    // Checked before anything is created, so a refused form leaves no half-made merchant.
    if (!errors.email && !(await team.emailFree(email))) add(errors, 'email', 'This address is taken (a merchant or a cabinet user has it).');
    if (!errors.owner_email && !ownLogin && !(await team.emailFree(owner))) add(errors, 'owner_email', 'This address is taken (a merchant or a cabinet user has it).');
    if (Object.keys(errors).length > 0) {
      reply.status(422);
      return newForm(req, reply, { errors, values: b });
    }
    const { merchant, apiToken } = await actions.createMerchant(who, { name, email });
    // Each step is its own audited transaction; one refused after the merchant exists (a race
    // on an address) is said on the answer, and the setup page does it again.
    const failed: string[] = [];
    let invited: string | null = null;
    let shopId: string | null = null;
    try {
      invited = ownLogin ? (await inviteOwnLogin(who, merchant)).email : (await inviteOwner(who, merchant.id, owner)).member.email;
    } catch (e) {
      failed.push(`Owner invitation: ${Object.values(errorsOf(e)).flat().join(' ')}`);
    }
    try {
      shopId = (await createShop(who, merchant.id, shop)).id;
    } catch (e) {
      failed.push(`First shop: ${Object.values(errorsOf(e)).flat().join(' ')}`);
    }
    // The token is shown once, in the answer to this POST (reloading it sends nothing: the form token is spent).
    return render(req, reply, 'merchant-onboarded', {
      nav: 'merchants', m: merchantView(app.config, merchant), apiToken, invited, shopId, shopName: shop.name, failed, inviteDays: INVITE_DAYS,
    });
  });

  const setup = async (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const m = await actions.loadMerchant(idOf(req));
    const [people, shopList, all] = await Promise.all([team.list(m.id), shops.list(m.id), connectors.list()]);
    const view = merchantView(app.config, m);
    const routing = view.routing as Record<Route, string[]>;
    return render(req, reply, 'merchant-setup', {
      nav: 'merchants', m: view, people, shops: shopList.map((s) => ({ ...s, receipts: fiscalSummary(s.fiscalization) })), currencies: CURRENCIES, routes: ROUTES, slots: ROUTE_SLOTS,
      stored: (m.routing ?? {}) as Partial<Record<Route, string[]>>, routing,
      connectors: all.map((c) => ({ name: c.name, kind: c.kind, mode: c.mode, enabled: c.enabled })),
      values: { shop_currency: 'RUB', ...Object.fromEntries(ROUTES.flatMap((r) => routing[r].map((n, i) => [`routing.${r}.${i}`, n]))) },
      ...data,
    });
  };

  app.get('/merchants/:id/setup', { schema: { hide: true } }, async (req, reply) => setup(req, reply));

  app.post('/merchants/:id/owners', { schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    await actions.loadMerchant(id);
    const b = formBody(req);
    const errors: Errors = {};
    const email = emailField(errors, 'owner_email', b.owner_email);
    try {
      if (Object.keys(errors).length > 0) throw new ValidationError(errors);
      await inviteOwner(actorOf(req), id, email);
    } catch (e) {
      reply.status(422);
      // The service names the field `email`; on this page it is the owner's.
      const found = errorsOf(e);
      return setup(req, reply, { errors: { owner_email: found.owner_email ?? found.email ?? Object.values(found).flat() }, values: b });
    }
    return done(reply, `${BASE}/merchants/${id}/setup`, `An invitation was mailed to ${email}.`);
  });

  app.post('/merchants/:id/shops', { schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    await actions.loadMerchant(id);
    const b = formBody(req);
    const errors: Errors = {};
    const shop = shopFields(errors, b, 'shop_');
    try {
      if (Object.keys(errors).length > 0) throw new ValidationError(errors);
      await createShop(actorOf(req), id, shop);
    } catch (e) {
      reply.status(422);
      return setup(req, reply, { errors: errorsOf(e), values: b });
    }
    return done(reply, `${BASE}/merchants/${id}/setup`, `Shop ${shop.name} created.`);
  });

  // The routing editor: per route an ordered list of connectors, checked by the operator API's
  // PATCH rules (parseMerchantPatch, then ConnectorRegistry.assertRoutable); a 422 names the route.
  app.post('/merchants/:id/routing', { schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    const b = formBody(req);
    const m = await actions.loadMerchant(id);
    const stored = (m.routing ?? {}) as Partial<Record<Route, string[]>>;
    // The form shows a route never set with the profile's default filled in: sent back unchanged it
    // stays a default (it follows the profile), not an explicit route that a later default would not move.
    const defaults = effectiveRouting({}, m.liveMerchantId === null, app.config.profile);
    const routing: Partial<Record<Route, string[]>> = {};
    let chosen = 0;
    for (const r of ROUTES) {
      const names = Array.from({ length: ROUTE_SLOTS }, (_, i) => (b[`routing.${r}.${i}`] ?? '').trim()).filter(Boolean);
      if (names.length === 0) continue;
      chosen += 1;
      if (!stored[r] && names.join('\n') === defaults[r].join('\n')) continue;
      routing[r] = names;
    }
    try {
      if (chosen === 0) throw new ValidationError({ routing: ['Choose at least one connector for a route.'] });
      if (Object.keys(routing).length > 0) await actions.updateMerchant(actorOf(req), id, { routing });
    } catch (e) {
      reply.status(422);
      return setup(req, reply, { errors: errorsOf(e), values: b });
    }
    return done(reply, `${BASE}/merchants/${id}/setup`, 'Routing saved.');
  });
}
