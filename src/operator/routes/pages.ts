import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../audit/audit.js';
import { MailNotConfiguredError, operatorActions } from '../../backoffice/actions.js';
import { queryAudit, auditCsv } from '../../backoffice/audit-query.js';
import { memberIdOf, resetReasonOf } from '../../backoffice/merchant-input.js';
import { balanceView, connectorView, merchantView, rateView, sbpBankView } from '../../domain/operator-views.js';
import { kindSummary } from '../../domain/providers/plugin.js';
import { ValidationError } from '../../errors.js';
import { isIdLike } from '../../lib/input-fields.js';
import { peopleAmountText } from '../../lib/amount-text.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import { BASE, done, render } from '../context.js';
import { modeOf } from '../test-objects.js';
import { pageSize } from '../../lib/page-size.js';
import { NO_URL } from '../../outbox/events.js';

const EVENTS_PAGE = 100;
const EVENT_STATUSES = ['dead', 'not_configured', 'pending', 'delivered'] as const;

const PAYOUT_STATUSES = ['MODERATING', 'NEW', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED'];
/** What the console says for a payout's status (the API's words stay in the API). */
const PAYOUT_STATUS_WORDS: Record<string, string> = {
  MODERATING: 'Waiting for moderation', NEW: 'New', PROCESS: 'Being sent', SUCCESS: 'Paid out', FAIL: 'Failed', ERROR: 'Provider error', DECLINED: 'Declined at moderation',
};
const FEE_KEYS = ['payment_card', 'payment_sbp', 'payout_card', 'payout_sbp'].flatMap((k) => [`${k}_percent`, `${k}_fixed`]);

/**
 * The console form of a merchant change, turned into the operator API's PATCH body (then
 * parsed by the same parseMerchantPatch): only the fields of the submitted form are present.
 */
export function merchantPatchBody(b: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const k of ['status', 'verified', 'subscription']) {
    if (k in b) body[k] = b[k]!.trim();
  }
  // Money as an operator types it ("150,000.00", a pasted space), then the API's one format.
  const amount = (x: string) => peopleAmountText(x, 'en')!;
  for (const k of ['payout_daily_limit', 'payout_monthly_limit', 'moderation_threshold', 'payout_max_card', 'payout_max_sbp']) {
    if (k in b) body[k] = amount(b[k]!);
  }
  if ('grants' in b) body.grants = { refunds: b['grants.refunds'] === 'true', regular_payouts: b['grants.regular_payouts'] === 'true' };
  const fees = Object.fromEntries(FEE_KEYS.filter((k) => `fees.${k}` in b).map((k) => [k, amount(b[`fees.${k}`]!)]));
  if (Object.keys(fees).length > 0) body.fees = fees;
  if ('api_ip_allowlist' in b) body.api_ip_allowlist = b.api_ip_allowlist!.split(/[\s,]+/).filter(Boolean);
  return body;
}

/** The console pages: every read and change goes through the operator API's services and actions. */
export default async function consolePages(app: FastifyInstance): Promise<void> {
  const actions = operatorActions(app);
  const { outbox, payouts, connectors, rates, operatorLists, ledger, sbpBanks } = app.services;
  const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const [waiting, events] = await Promise.all([
      operatorLists.waiting(),
      // Events with no URL to send to are "Not configured", as the cabinet says, not dead: nothing failed.
      outbox.givenUpCounts(),
    ]);
    return render(req, reply, 'home', { nav: 'home', ...waiting, dead: events.dead, notConfigured: events.notConfigured });
  });

  // Merchants: search by email, name or id.
  app.get('/merchants', { schema: { hide: true } }, async (req, reply) => {
    const q = (queryOf(req).q ?? '').trim().slice(0, 255);
    const rows = await operatorLists.searchMerchants(q);
    return render(req, reply, 'merchants', { nav: 'merchants', q, merchants: rows.map((m) => merchantView(app.config, m)) });
  });

  app.get('/merchants/:id', { schema: { hide: true } }, async (req, reply) => {
    const m = await actions.loadMerchant(idOf(req));
    const [balances, held, twin, heldPayments] = await Promise.all([
      app.services.merchants.balances(m.id), app.services.merchants.held(m.id), app.services.merchants.testTwinOf(m.id),
      // Each payment the total holds, to capture or cancel here.
      actions.heldPayments(m.id),
    ]);
    // The cabinet's people (the merchant's own login, the owner, then the team) with their 2FA state, for the reset buttons.
    const people = [
      { id: null, email: m.email, role: 'owner (merchant login)', state: m.passwordHash ? 'active' : 'no password', two_factor: m.totpEnabledAt !== null },
      ...await app.services.team.list(m.id),
    ];
    return render(req, reply, 'merchant', {
      nav: 'merchants', m: merchantView(app.config, m), balances: balances.map(balanceView), held: new Map(held.map((x) => [x.currency, x.amount.toFixed(2)])), twinId: twin?.id ?? null, people, heldPayments });
  });

  app.post('/merchants/:id/patch', { config: { permission: 'admin' }, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    await actions.updateMerchant(actorOf(req), id, merchantPatchBody(formBody(req)));
    return done(reply, `${BASE}/merchants/${id}`, 'Saved.');
  });

  app.post('/merchants/:id/token', { config: { permission: 'admin' }, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    const token = await actions.refreshMerchantToken(actorOf(req), id);
    return render(req, reply, 'secret-once', { nav: 'merchants', title: 'API token refreshed', what: 'New API token (the old one no longer works)', secret: token, back: `${BASE}/merchants/${id}` });
  });

  app.post('/merchants/:id/password-reset', { config: { permission: 'merchants.password-reset' }, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    const member = formBody(req).member_id;
    try {
      // The form sends no member_id for the owner (the API's "absent"). No password is shown: a link goes to the account's email.
      const r = await actions.sendPasswordResetLink(actorOf(req), id, member ? memberIdOf({ member_id: member }) : null);
      return done(reply, `${BASE}/merchants/${id}`, `A reset link was sent to ${r.sentTo}.`);
    } catch (e) {
      if (!(e instanceof MailNotConfiguredError)) throw e;
      reply.status(503);
      return render(req, reply, 'error', { status: 503, message: e.message });
    }
  });

  app.post('/merchants/:id/two-factor-reset', { config: { permission: 'merchants.two-factor-reset' }, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    const b = formBody(req);
    await actions.resetMerchantTwoFactor(actorOf(req), id, b.member_id ? memberIdOf({ member_id: b.member_id }) : null, resetReasonOf(b));
    return done(reply, `${BASE}/merchants/${id}`, 'Two-factor sign-in reset: the next sign-in asks only for the password.');
  });

  // Outgoing mail: the sandbox's dev mailbox (with the texts) or, in production, what was sent,
  // waits or failed (never a text). Admins only: the texts hold one-time links.
  app.get('/mailbox', { config: { permission: 'admin' }, schema: { hide: true } }, async (req, reply) => {
    const mails = await app.services.mail.list(100);
    return render(req, reply, 'mailbox', { nav: 'mailbox', mails, profile: app.config.profile, smtp: app.config.smtpUrl !== undefined });
  });

  app.post('/merchants/:id/redeliver-dead', { config: { permission: 'events.redeliver' }, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    await actions.loadMerchant(id);
    const r = await actions.redeliverDead(actorOf(req), id);
    return done(reply, `${BASE}/events?merchant_id=${encodeURIComponent(id)}`, `${r.redelivered} dead events sent again.`);
  });

  // Payout moderation queue.
  app.get('/payouts', { schema: { hide: true } }, async (req, reply) => {
    const q = queryOf(req);
    const status = PAYOUT_STATUSES.includes(q.status ?? '') ? q.status! : 'MODERATING';
    const merchantId = q.merchant_id && isIdLike(q.merchant_id) ? q.merchant_id : undefined;
    const mode = modeOf(q.mode);
    const rows = await payouts.list({ status, merchantId, limit: 200, ...(mode !== 'all' ? { merchantKind: mode } : {}) });
    const twins = await operatorLists.testTwinsOf(rows.map((p) => p.merchant_id));
    const names = await operatorLists.merchantNames([...rows.map((p) => p.merchant_id), ...(merchantId ? [merchantId] : [])]);
    return render(req, reply, 'payouts', {
      nav: 'payouts', status, statuses: PAYOUT_STATUSES, statusWords: PAYOUT_STATUS_WORDS, merchantId: merchantId ?? '', mode,
      merchantName: merchantId ? names.get(merchantId) ?? null : null,
      payouts: rows.map((p) => ({ ...p, liveOf: twins.get(p.merchant_id) ?? null, merchantName: names.get(p.merchant_id) ?? null })),
    });
  });

  app.post('/payouts/:id/approve', { config: { permission: 'payouts.moderate' }, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    await actions.approvePayout(actorOf(req), id);
    return done(reply, `${BASE}/payouts`, `Payout ${id} approved.`);
  });

  app.post('/payouts/:id/decline', { config: { permission: 'payouts.moderate' }, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    const reason = (formBody(req).reason ?? '').trim();
    if (!reason) throw new ValidationError({ reason: ['Say why the payout is declined.'] });
    if (reason.length > 500) throw new ValidationError({ reason: ['The reason may not be greater than 500 characters.'] });
    await actions.declinePayout(actorOf(req), id, reason);
    return done(reply, `${BASE}/payouts`, `Payout ${id} declined.`);
  });

  // Events: dead letters by default.
  app.get('/events', { schema: { hide: true } }, async (req, reply) => {
    const q = queryOf(req);
    const status = EVENT_STATUSES.find((s) => s === q.status) ?? 'dead';
    const merchantId = q.merchant_id && isIdLike(q.merchant_id) ? q.merchant_id : undefined;
    const before = q.before && /^\d{1,18}$/.test(q.before) ? q.before : undefined;
    const perPage = pageSize(q.per_page, EVENTS_PAGE);
    // Dead and not configured apart, as in the cabinet's webhook log.
    const filter = status === 'not_configured' ? { status: 'dead' as const, notConfigured: true } : status === 'dead' ? { status, notConfigured: false } : { status };
    const page = await outbox.page({ ...filter, merchantId, beforeId: before, limit: perPage });
    const next = page.nextBeforeId === null ? null : new URLSearchParams({
      status, ...(merchantId ? { merchant_id: merchantId } : {}), ...(perPage === EVENTS_PAGE ? {} : { per_page: String(perPage) }), before: page.nextBeforeId,
    });
    return render(req, reply, 'events', {
      nav: 'events', status, statuses: EVENT_STATUSES, merchantId: merchantId ?? '', events: page.data, nextUrl: next && `${BASE}/events?${next}`, noUrl: NO_URL,
    });
  });

  app.post('/events/:id/redeliver', { config: { permission: 'events.redeliver' }, schema: { hide: true } }, async (req, reply) => {
    const id = idOf(req);
    await actions.redeliverEvent(actorOf(req), id);
    return done(reply, `${BASE}/events`, `Event ${id} sent again.`);
  });

  // Ledger: the books check, the trial balance, and a merchant's accounts (its statement).
  app.get('/ledger', { schema: { hide: true } }, async (req, reply) => {
    const q = queryOf(req);
    const merchantId = q.merchant_id && isIdLike(q.merchant_id) ? q.merchant_id : '';
    const check = await ledger.verify();
    const accounts = merchantId ? await ledger.accounts({ merchantId }) : null;
    return render(req, reply, 'ledger', { nav: 'ledger', check, merchantId, accounts });
  });

  app.get('/connectors', { schema: { hide: true } }, async (req, reply) => {
    const rows = [];
    for (const c of await connectors.list()) rows.push(connectorView(app.config, c, await connectors.health(c.name)));
    return render(req, reply, 'connectors', { nav: 'connectors', connectors: rows, kinds: connectors.plugins.map(kindSummary) });
  });

  app.get('/rates', { schema: { hide: true } }, async (req, reply) => {
    const banks = await sbpBanks.listAll();
    return render(req, reply, 'rates', { nav: 'rates', rates: (await rates.list()).map((r) => rateView(app.config, r)), banks: banks.map(sbpBankView) });
  });

  // The audit trail, with the operator API's filters and its CSV.
  const auditFilters = (req: FastifyRequest) => {
    const q = queryOf(req);
    return Object.fromEntries(['actor', 'object_id', 'action', 'start_date', 'finish_date', 'before_id'].filter((k) => q[k]).map((k) => [k, q[k]!.trim()]));
  };
  app.get('/audit', { schema: { hide: true } }, async (req, reply) => {
    const filters = auditFilters(req);
    let rows: Awaited<ReturnType<typeof queryAudit>>['rows'] = [];
    let limit = 100;
    let errors: Record<string, string[]> | null = null;
    try {
      ({ rows, limit } = await queryAudit(app, filters, 100, 100));
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      errors = e.errors;
      reply.status(422);
    }
    const next = rows.length === limit ? rows.at(-1)!.id : null;
    return render(req, reply, 'audit', { nav: 'audit', filters, rows, next, errors });
  });

  app.get('/audit.csv', { schema: { hide: true } }, async (req, reply) => {
    const { rows } = await queryAudit(app, auditFilters(req), 100_000, 100_000);
    return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="audit.csv"').send(auditCsv(rows));
  });
}
