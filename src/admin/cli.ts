/**
 * `npm run admin -- <verb> ...`: the operator API on the command line, printing JSON.
 *
 * The app is built in-process and every verb is dispatched to an /admin/v1 route with
 * `app.inject` and the operator token, so the CLI runs exactly the code (validation, URL
 * guard, transactions) the HTTP operator API runs, including routes other areas add.
 * This file is the verbs (argv -> call); the process that boots and runs them is
 * src/entry/admin-cli.ts, above the app it builds.
 */
import { randomBytes } from 'node:crypto';
import { CONNECTORS } from '../domain/providers/connectors/index.js';
import { settingsLine } from '../domain/providers/plugin.js';
import { keepNumberText } from '../lib/json-number-text.js';

import { cliValue, flagsBody, need, parseArgs, requireFlags, UsageError, type Call, type Json, type Parsed } from './cli-args.js';

export { cliUser, cliValue, parseArgs, UsageError, type Call, type Parsed } from './cli-args.js';

interface Verb { usage: string; help: string; build(p: Parsed): Call }

export const VERBS: Record<string, Verb> = {
  request: {
    usage: "request METHOD PATH ['{\"json\":\"body\"}']",
    help: 'Any operator route, e.g. request GET /merchants or request POST /merchants \'{"name":"A","email":"a@b.c"}\'',
    build(p) {
      const [method, path, json] = p.positional;
      if (!method || !path) throw new UsageError(`usage: npm run admin -- ${this.usage}`);
      const m = method.toUpperCase();
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(m)) throw new UsageError(`unknown method ${method}`);
      let body: Record<string, Json> | undefined;
      if (json !== undefined) {
        // As the service reads a JSON body: a number keeps the digits typed (`1e3` stays "1e3" and is refused).
        try { body = JSON.parse(keepNumberText(json)) as Record<string, Json>; } catch { throw new UsageError('the body must be JSON'); }
      }
      const rel = path.replace(/^\/?(admin\/v1)?\/?/, '/');
      return { method: m as Call['method'], path: rel, ...(body ? { body } : {}) };
    },
  },
  'operators:create': {
    usage: 'operators:create --email EMAIL --role admin|finance|support|auditor [--password PASSWORD]',
    help: 'Create an operator; prints its id and, without --password, a generated password (once)',
    build(p) {
      requireFlags(p, ['email', 'role'], this.usage);
      const given = typeof p.flags.password === 'string' ? p.flags.password : null;
      const password = given ?? randomBytes(18).toString('base64url');
      const body: Record<string, Json> = { email: cliValue(p.flags.email!), role: cliValue(p.flags.role!), password };
      return { method: 'POST', path: '/operators', body, ...(given === null ? { extra: { password } } : {}) };
    },
  },
  'operators:list': {
    usage: 'operators:list',
    help: 'Every operator with role and status',
    build() { return { method: 'GET', path: '/operators' }; },
  },
  'operators:update': {
    usage: 'operators:update OPERATOR_ID [--role admin|finance|support|auditor] [--status active|disabled]',
    help: "Change an operator's role or status (disabled: every token revoked and console session ended; re-enabling restores none)",
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'PATCH', path: `/operators/${id}`, body: flagsBody(p.flags) }; },
  },
  'operators:token': {
    usage: 'operators:token OPERATOR_ID [--name NAME]',
    help: 'Issue a personal operator API token (printed once)',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/operators/${id}/tokens`, body: flagsBody(p.flags) }; },
  },
  'operators:totp-reset': {
    usage: 'operators:totp-reset OPERATOR_ID',
    help: "Turn an operator's TOTP off (a lost phone): the next console sign-in enrols again",
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/operators/${id}/totp-reset` }; },
  },
  'operators:password-reset': {
    usage: 'operators:password-reset OPERATOR_ID',
    help: 'Mail an operator a one-time link to set a new password (valid 1 hour); their console sessions end now',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/operators/${id}/password-reset` }; },
  },
  'audit:list': {
    usage: 'audit:list [--actor A] [--object-id ID] [--action X] [--start-date D] [--finish-date D] [--before-id N] [--limit N]',
    help: 'The audit trail, newest first',
    build(p) { return { method: 'GET', path: '/audit', query: flagsBody(p.flags) as Record<string, string> }; },
  },
  'merchants:create': {
    usage: 'merchants:create --name NAME --email EMAIL [--password PASSWORD]',
    help: 'Create a merchant; prints its id and API token',
    build(p) {
      requireFlags(p, ['name', 'email'], this.usage);
      return { method: 'POST', path: '/merchants', body: flagsBody(p.flags) };
    },
  },
  'merchants:list': {
    usage: 'merchants:list [--email EMAIL] [--limit N] [--offset N]',
    help: 'List merchants, newest first',
    build(p) { return { method: 'GET', path: '/merchants', query: flagsBody(p.flags) as Record<string, string> }; },
  },
  'merchants:get': {
    usage: 'merchants:get MERCHANT_ID',
    help: 'A merchant with its balances',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'GET', path: `/merchants/${id}` }; },
  },
  'merchants:update': {
    usage: 'merchants:update MERCHANT_ID [--status active|banned] [--verified true|false] [--subscription active|inactive|none] ' +
      '[--grant-refunds B] [--grant-regular-payouts B] [--payout-daily-limit X|null] [--payout-monthly-limit X|null] ' +
      '[--moderation-threshold X|null] [--payout-max-card X] [--payout-max-sbp X] [--fee-payment-card-percent X|null] [--fee-... ]',
    help: 'Change merchant settings (fees: --fee-<payment|payout>-<card|sbp>-<percent|fixed>)',
    build(p) {
      const [id] = need(p, 1, this.usage);
      return { method: 'PATCH', path: `/merchants/${id}`, body: flagsBody(p.flags, { grant: 'grants', fee: 'fees' }) };
    },
  },
  'merchants:token': {
    usage: 'merchants:token MERCHANT_ID',
    help: 'Refresh the API token (the old one stops working at once)',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/merchants/${id}/token` }; },
  },
  'merchants:test-token': {
    usage: 'merchants:test-token MERCHANT_ID',
    help: 'Refresh the test-mode API token (the old test token stops working at once; the live one is untouched)',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/merchants/${id}/test-token` }; },
  },
  'keys:create': {
    usage: 'keys:create MERCHANT_ID --name NAME --scopes bills:read,payouts:write,...',
    help: 'Create a restricted API key limited to scopes (bills:read bills:write payments:read refunds:write payouts:read payouts:write balance:read); prints its token once',
    build(p) {
      const [id] = need(p, 1, this.usage);
      requireFlags(p, ['name', 'scopes'], this.usage);
      const raw = p.flags.scopes;
      const scopes = typeof raw === 'string' ? raw.split(/[\s,]+/).filter(Boolean) : [];
      return { method: 'POST', path: `/merchants/${id}/keys`, body: { name: cliValue(p.flags.name!), scopes } };
    },
  },
  'keys:list': {
    usage: 'keys:list MERCHANT_ID',
    help: "A merchant's restricted API keys (never a token)",
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'GET', path: `/merchants/${id}/keys` }; },
  },
  'keys:revoke': {
    usage: 'keys:revoke MERCHANT_ID KEY_ID',
    help: 'Revoke a restricted API key (it fails from now on)',
    build(p) { const [id, key] = need(p, 2, this.usage); return { method: 'DELETE', path: `/merchants/${id}/keys/${key}` }; },
  },
  'merchants:password-reset': {
    usage: 'merchants:password-reset MERCHANT_ID [MEMBER_ID]',
    help: 'Mail the cabinet account (the owner, or the team member MEMBER_ID) a one-time link to set a new password (valid 1 hour) and end its open sessions at once; prints where it went (masked), never a password',
    build(p) {
      const [id] = need(p, 1, this.usage);
      const member = p.positional[1];
      return { method: 'POST', path: `/merchants/${id}/password-reset`, ...(member !== undefined ? { body: { member_id: member } } : {}) };
    },
  },
  'merchants:two-factor-reset': {
    usage: 'merchants:two-factor-reset MERCHANT_ID [MEMBER_ID] --reason TEXT',
    help: "Admin only: reset a cabinet account's two-factor sign-in (the owner, or the team member MEMBER_ID) saying how the person was identified: TOTP and recovery codes cleared, its sessions ended, the person mailed",
    build(p) {
      const [id] = need(p, 1, this.usage);
      requireFlags(p, ['reason'], this.usage);
      const member = p.positional[1];
      return { method: 'POST', path: `/merchants/${id}/two-factor-reset`, body: { ...(member !== undefined ? { member_id: member } : {}), reason: cliValue(p.flags.reason!) } };
    },
  },
  'shops:create': {
    usage: 'shops:create MERCHANT_ID --name NAME [--enabled B] [--default-currency RUB|USD|EUR] [--result-url U] [--success-url U] [--fail-url U]',
    help: 'Create a shop',
    build(p) {
      const [id] = need(p, 1, this.usage);
      requireFlags(p, ['name'], this.usage);
      return { method: 'POST', path: `/merchants/${id}/shops`, body: flagsBody(p.flags) };
    },
  },
  'shops:list': {
    usage: 'shops:list MERCHANT_ID',
    help: "A merchant's shops",
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'GET', path: `/merchants/${id}/shops` }; },
  },
  'shops:get': {
    usage: 'shops:get SHOP_ID',
    help: 'A shop',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'GET', path: `/shops/${id}` }; },
  },
  'shops:update': {
    usage: 'shops:update SHOP_ID [--name N] [--enabled B] [--default-currency C] [--result-url U|null] [--success-url U|null] [--fail-url U|null]',
    help: 'Change shop settings',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'PATCH', path: `/shops/${id}`, body: flagsBody(p.flags) }; },
  },
  payment: {
    usage: 'payment capture PAYMENT_ID [--amount RUB] | payment cancel PAYMENT_ID',
    help: 'Capture a held two-stage payment, all of it or --amount (at most what is held), or cancel it (the hold released); the same operation and audit as POST /payments/{id}/capture|cancel',
    build(p) {
      const [op, id] = p.positional;
      if ((op !== 'capture' && op !== 'cancel') || !id) throw new UsageError(`usage: npm run admin -- ${this.usage}`);
      if (op === 'cancel') {
        if (p.flags.amount !== undefined) throw new UsageError('payment cancel takes no --amount (a hold is released whole)');
        return { method: 'POST', path: `/payments/${encodeURIComponent(id)}/cancel`, body: {} };
      }
      const amount = p.flags.amount;
      if (amount === true) throw new UsageError(`--amount needs a value; usage: npm run admin -- ${this.usage}`);
      const body: Record<string, Json> = amount === undefined ? {} : { amount };
      return { method: 'POST', path: `/payments/${encodeURIComponent(id)}/capture`, body };
    },
  },
  'payout-webhook:set': {
    usage: 'payout-webhook:set MERCHANT_ID URL|null',
    help: 'Set or clear (null) the payout webhook URL',
    build(p) {
      const [id] = need(p, 1, this.usage);
      const url = p.positional[1] ?? p.flags.url;
      if (url === undefined) throw new UsageError(`usage: npm run admin -- ${this.usage}`);
      return { method: 'PUT', path: `/merchants/${id}/payout-webhook`, body: { url: cliValue(url) } };
    },
  },
  'payout-accounts:create': {
    usage: 'payout-accounts:create MERCHANT_ID --type card|sbp (--identifier CARD_OR_PHONE [--card-holder NAME] [--bank-member-id ID] | --payout-token TOKEN --first6 DIGITS --last4 DIGITS [--card-type TYPE] [--issuer-name BANK])',
    help: 'Add a payout account (a card by number or by YooKassa payout_token, or an SBP phone)',
    build(p) {
      const [id] = need(p, 1, this.usage);
      requireFlags(p, p.flags['payout-token'] === undefined ? ['type', 'identifier'] : ['type', 'first6', 'last4'], this.usage);
      return { method: 'POST', path: `/merchants/${id}/payout-accounts`, body: flagsBody(p.flags) };
    },
  },
  'payout-accounts:list': {
    usage: 'payout-accounts:list MERCHANT_ID',
    help: "A merchant's payout accounts (masked)",
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'GET', path: `/merchants/${id}/payout-accounts` }; },
  },
  'payout-accounts:ban': {
    usage: 'payout-accounts:ban ACCOUNT_ID',
    help: 'Ban a payout account',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'PATCH', path: `/payout-accounts/${id}`, body: { status: 'banned' } }; },
  },
  'payout-accounts:unban': {
    usage: 'payout-accounts:unban ACCOUNT_ID',
    help: 'Unban a payout account',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'PATCH', path: `/payout-accounts/${id}`, body: { status: 'active' } }; },
  },
  'balance:adjust': {
    usage: 'balance:adjust MERCHANT_ID --currency RUB|USD|EUR --amount [-]X --reason TEXT',
    help: 'Credit (positive) or debit (negative) available balance',
    build(p) {
      const [id] = need(p, 1, this.usage);
      requireFlags(p, ['currency', 'amount', 'reason'], this.usage);
      return { method: 'POST', path: `/merchants/${id}/balance-adjustments`, body: flagsBody(p.flags) };
    },
  },
  'deployment:show': {
    usage: 'deployment:show',
    help: "The profile (PAYMENTS_PROFILE), the database's, and the money the sandbox credited to live balances",
    build() { return { method: 'GET', path: '/deployment' }; },
  },
  'sandbox-money:clear': {
    usage: 'sandbox-money:clear [--merchant MERCHANT_ID] --reason TEXT',
    help: 'Debit the money the sandbox credited from live balances (audited), so the database may start as production',
    build(p) {
      requireFlags(p, ['reason'], this.usage);
      const body: Record<string, Json> = { reason: cliValue(p.flags.reason!) };
      if (p.flags.merchant !== undefined) body.merchant_id = cliValue(p.flags.merchant);
      return { method: 'POST', path: '/deployment/sandbox-money/clear', body };
    },
  },
  'chargebacks:create': {
    usage: 'chargebacks:create PAYMENT_ID --amount X --reason TEXT',
    help: "Record a chargeback against a payment (debits the merchant's available balance, posts to the shop)",
    build(p) {
      const [id] = need(p, 1, this.usage);
      requireFlags(p, ['amount', 'reason'], this.usage);
      return { method: 'POST', path: `/payments/${id}/chargebacks`, body: flagsBody(p.flags) };
    },
  },
  'chargebacks:list': {
    usage: 'chargebacks:list PAYMENT_ID',
    help: "A payment's chargebacks",
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'GET', path: `/payments/${id}/chargebacks` }; },
  },
  'rates:list': {
    usage: 'rates:list',
    help: 'Exchange rates',
    build() { return { method: 'GET', path: '/rates' }; },
  },
  'rates:set': {
    usage: 'rates:set USD|EUR RUB_PER_UNIT',
    help: 'Set a rate, e.g. rates:set USD 92.5',
    build(p) {
      const [cur] = need(p, 2, this.usage);
      return { method: 'PUT', path: `/rates/${cur}`, body: { rub_per_unit: p.positional[1]! } };
    },
  },
  'rates:delete': {
    usage: 'rates:delete USD|EUR',
    help: 'Remove a rate',
    build(p) { const [cur] = need(p, 1, this.usage); return { method: 'DELETE', path: `/rates/${cur}` }; },
  },
  'sbp-banks:list': {
    usage: 'sbp-banks:list',
    help: 'Every SBP bank with its active flag',
    build() { return { method: 'GET', path: '/sbp-banks' }; },
  },
  'sbp-banks:set': {
    usage: 'sbp-banks:set MEMBER_ID --active true|false',
    help: 'Activate or deactivate an SBP bank',
    build(p) {
      const [id] = need(p, 1, this.usage);
      requireFlags(p, ['active'], this.usage);
      return { method: 'PATCH', path: `/sbp-banks/${id}`, body: { active: cliValue(p.flags.active!) } };
    },
  },
  'connectors:set': {
    usage: `connectors:set NAME --kind ${CONNECTORS.map((c) => c.kind).join('|')} --mode live|test [--enabled B] [--setting-shop-id X --setting-secret-key Y ...]`,
    help: `Create or replace a connector (settings as --setting-<name>; secrets stored encrypted, shown masked): ${
      CONNECTORS.map((c) => `${c.kind} ${settingsLine(c.settings)}`).join('; ')}`,
    build(p) {
      const [name] = need(p, 1, this.usage);
      requireFlags(p, ['kind', 'mode'], this.usage);
      const body = flagsBody(p.flags, { setting: 'settings' });
      body.settings ??= {};
      return { method: 'PUT', path: `/connectors/${name}`, body };
    },
  },
  'connectors:enable': {
    usage: 'connectors:enable NAME',
    help: 'Switch a connector on',
    build(p) { const [name] = need(p, 1, this.usage); return { method: 'PATCH', path: `/connectors/${name}`, body: { enabled: true } }; },
  },
  'connectors:disable': {
    usage: 'connectors:disable NAME',
    help: 'Switch a connector off: it takes no new payment or payout (routing moves to the next one); operations in flight finish',
    build(p) { const [name] = need(p, 1, this.usage); return { method: 'PATCH', path: `/connectors/${name}`, body: { enabled: false } }; },
  },
  'connectors:list': {
    usage: 'connectors:list',
    help: 'Every connector with its health (settings masked)',
    build() { return { method: 'GET', path: '/connectors' }; },
  },
  'connectors:show': {
    usage: 'connectors:show NAME',
    help: 'A connector: settings (masked), health, operations waiting on an unknown outcome',
    build(p) { const [name] = need(p, 1, this.usage); return { method: 'GET', path: `/connectors/${name}` }; },
  },
  'attention:list': {
    usage: 'attention:list',
    help: 'Operations whose outcome stayed unknown after reconciliation gave up, with what was last heard',
    build() { return { method: 'GET', path: '/attention' }; },
  },
  'attention:resolve': {
    usage: 'attention:resolve ID --outcome SUCCESS|FAIL [--note TEXT]',
    help: "Record the operator's decision on an attention item (applied through the state tables and the ledger)",
    build(p) {
      const [id] = need(p, 1, this.usage);
      requireFlags(p, ['outcome'], this.usage);
      return { method: 'POST', path: `/attention/${id}/resolve`, body: flagsBody(p.flags) };
    },
  },
  'payouts:list': {
    usage: 'payouts:list [--status MODERATING] [--merchant-id ID] [--limit N]',
    help: 'Payouts, newest first',
    build(p) { return { method: 'GET', path: '/payouts', query: flagsBody(p.flags) as Record<string, string> }; },
  },
  'payouts:approve': {
    usage: 'payouts:approve PAYOUT_ID',
    help: 'Approve a payout waiting for moderation',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/payouts/${id}/approve` }; },
  },
  'payouts:decline': {
    usage: 'payouts:decline PAYOUT_ID [--reason TEXT]',
    help: 'Decline a payout waiting for moderation (the money returns to available)',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/payouts/${id}/decline`, body: flagsBody(p.flags) }; },
  },
  'events:list': {
    usage: 'events:list [--status pending|delivered|dead] [--merchant-id ID] [--kind KIND] [--before-id N] [--limit N]',
    help: 'Outbound events with their delivery attempts, newest first; the next page: --before-id <next_before_id>',
    build(p) { return { method: 'GET', path: '/events', query: flagsBody(p.flags) as Record<string, string> }; },
  },
  'events:redeliver': {
    usage: 'events:redeliver EVENT_ID',
    help: 'Send an event again',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/events/${id}/redeliver` }; },
  },
  'events:redeliver-dead': {
    usage: 'events:redeliver-dead MERCHANT_ID',
    help: 'Send every dead event of a merchant again',
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/merchants/${id}/events/redeliver-dead` }; },
  },
  'shops:test-postback': {
    usage: 'shops:test-postback SHOP_ID',
    help: "Send a signed test postback to the shop's Result URL and show the receiver's answer",
    build(p) { const [id] = need(p, 1, this.usage); return { method: 'POST', path: `/shops/${id}/test-postback` }; },
  },
  rehearse: {
    usage: 'rehearse CONNECTOR [--shop ID] [--public-url URL] [--json]',
    help: 'Rehearse a connector against its provider\'s test terminal or shop, wait for the end and print each step (exit 1 when a step failed)',
    build(p) {
      const [name] = need(p, 1, this.usage);
      const body: Record<string, Json> = {};
      for (const [flag, field] of [['shop', 'shop_id'], ['public-url', 'public_url']] as const) {
        const v = p.flags[flag];
        if (v === true) throw new UsageError(`--${flag} needs a value; usage: npm run admin -- ${this.usage}`);
        if (v !== undefined) body[field] = v;
      }
      return {
        method: 'POST', path: `/connectors/${encodeURIComponent(name!)}/rehearsals`, body,
        follow: (b) => `/connectors/${encodeURIComponent(name!)}/rehearsals/${String(b.id)}`,
        failed: (b) => b.status !== 'passed',
        ...(p.flags.json ? {} : { text: rehearsalText }),
      };
    },
  },
  'ledger:verify': {
    usage: 'ledger:verify',
    help: 'Trial balance per currency, every balance against its ledger entries (exit 1 when anything is wrong)',
    build() { return { method: 'GET', path: '/ledger/verify', failed: (b) => b.ok !== true }; },
  },
  'ledger:accounts': {
    usage: 'ledger:accounts [--currency RUB|USD|EUR] [--merchant_id ID]',
    help: 'Every ledger account with its debits, credits and balance',
    build(p) { return { method: 'GET', path: '/ledger/accounts', query: flagsBody(p.flags) as Record<string, string> }; },
  },
};

/** A rehearsal's report as lines: each step's status, name and why. */
function rehearsalText(b: Record<string, unknown>): string {
  const steps = (b.steps ?? []) as Array<{ name: string; status: string; detail: string }>;
  const lines = [`rehearsal ${String(b.id)} of ${String(b.connector)} (${String(b.kind)}): ${String(b.status)}`];
  for (const s of steps) lines.push(`  ${s.status.padEnd(7)} ${s.name.padEnd(12)} ${s.detail}`);
  for (const [q, a] of Object.entries((b.findings ?? {}) as Record<string, unknown>)) lines.push(`  finding ${q}: ${String(a)}`);
  return `${lines.join('\n')}\n`;
}

export function helpText(): string {
  const lines = ['Operator CLI: npm run admin -- <verb> [args] (prints JSON; exit 1 on an error answer)', '', 'Verbs:'];
  for (const v of Object.values(VERBS)) lines.push(`  ${v.usage}`, `      ${v.help}`);
  return `${lines.join('\n')}\n`;
}

/** Parses argv into one operator API call (or throws UsageError). */
export function buildCall(argv: string[]): Call | 'help' {
  const [verb, ...rest] = argv;
  if (!verb || verb === '--help' || verb === '-h' || verb === 'help') return 'help';
  const v = VERBS[verb];
  if (!v) throw new UsageError(`unknown verb "${verb}" (npm run admin -- --help lists them)`);
  const p = parseArgs(rest);
  if (p.flags.help) return 'help';
  return v.build(p);
}
