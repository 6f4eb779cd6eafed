import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Decimal } from 'decimal.js';
import { formatDateTime } from '../lib/time.js';
import { escapeHtml } from '../lib/html.js';
import { csvAmount, formatMoney } from '../lib/money-format.js';
import { newFormSecret } from '../lib/web-session.js';
import { sha256Hex } from '../lib/crypto.js';
import { allows, type Permission } from '../backoffice/permissions.js';
import type { ConsoleSession, OperatorSessionStore } from './session.js';

declare module 'fastify' {
  interface FastifyRequest {
    console: { session: ConsoleSession | null };
  }
  interface FastifyContextConfig {
    /** Console routes reachable without a session (sign-in, assets). */
    consolePublic?: boolean;
    /** Console routes for a session that still owes the second factor (and only for it). */
    secondFactor?: boolean;
  }
  interface FastifyInstance {
    operatorView(page: string, data?: object): Promise<string>;
  }
}

export const BASE = '/operator';
export const SESSION_COOKIE = 'op_sid';
export const LOGIN_CSRF_COOKIE = 'op_pre';

export interface ConsoleRouteOptions {
  sessions: OperatorSessionStore;
  cookieOpts: { path: string; httpOnly: boolean; sameSite: 'lax'; secure: boolean };
  signInLimits: import('../lib/sign-in-guard.js').SignInLimits;
}

/**
 * Renders a console page. `it.form()` gives the hidden inputs of a form: the session's CSRF
 * token and the page's single-use form token (one per rendering, stored only when the page
 * has a form; the first POST carrying it deletes it, so a form is accepted once).
 */
const PERCENT = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });

/**
 * A JSON value as a key/value list people read (nested keys joined with dots, lists by index):
 * the console's audit and attention views show no raw JSON. Returns escaped HTML.
 */
function propsHtml(v: unknown): string {
  if (v === null || v === undefined) return '';
  const rows: [string, string][] = [];
  const walk = (x: unknown, key: string) => {
    if (x !== null && typeof x === 'object' && Object.keys(x).length > 0) {
      for (const [k, y] of Object.entries(x as Record<string, unknown>)) walk(y, key ? `${key}.${k}` : k);
    } else {
      rows.push([key, x === null ? '—' : typeof x === 'object' ? '—' : String(x)]);
    }
  };
  walk(v, '');
  if (rows.length === 1 && rows[0]![0] === '') return `<span class="kv-one">${escapeHtml(rows[0]![1])}</span>`;
  return `<dl class="kv">${rows.map(([k, x]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(x)}</dd>`).join('')}</dl>`;
}

export async function render(req: FastifyRequest, reply: FastifyReply, page: string, data: Record<string, unknown> = {}) {
  const session = req.console?.session ?? null;
  const tz = req.server.config.tz;
  const url = new URL(req.url, 'http://x');
  let formToken: string | null = null;
  const form = () => {
    formToken ??= newFormSecret();
    return `<input type="hidden" name="_csrf" value="${escapeHtml(String(data.csrf ?? session?.csrfToken ?? ''))}">` +
      `<input type="hidden" name="_form" value="${formToken}">`;
  };
  const h = {
    /** An instant (a Date or an ISO 8601 string) as Y-m-d H:i:s in the service time zone, as the cabinet shows it. */
    date: (d: Date | string | null | undefined) => (d ? formatDateTime(new Date(d), tz) : ''),
    /** A share (0..1) as a percentage: 0.0649... -> "6.5%". */
    percent: (x: number | null | undefined) => (x === null || x === undefined ? '' : PERCENT.format(x)),
    /** Money as the other faces write it in English (lib/money-format.ts): `RUB 1,234.50`, two decimals. */
    money: (d: Decimal.Value | null | undefined, currency: string | null = null) => (d === null || d === undefined || d === '' ? '' : formatMoney(d, 'en', currency)),
    /** An amount in a form field: a plain decimal with two places (`150000.00`), '' for none. */
    amountField: (d: Decimal.Value | null | undefined) => (d === null || d === undefined || d === '' ? '' : csvAmount(d, 'en')),
    json: (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v)),
    /** A JSON value as a key/value list (escaped HTML, for `<%~`). */
    props: propsHtml,
    qs: (params: Record<string, unknown>) => {
      const u = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
      const s = u.toString();
      return s ? `?${s}` : '';
    },
  };
  const ok = url.searchParams.get('ok');
  const ctx: Record<string, unknown> = {
    base: BASE, h, form, tz, path: url.pathname, profile: req.server.config.profile, flash: ok && /^[\w .,:'@*-]{1,200}$/.test(ok) ? ok : null,
    operator: session?.stage === 'FULL' ? session.operator : null, can: (p: string) => canOf(req, p),
    values: {}, errors: null, ...data,
  };
  const html = await req.server.operatorView(page, ctx);
  if (formToken && session) {
    await req.server.db.pool.query('INSERT INTO operator_form_tokens (id, session_id) VALUES ($1, $2)', [sha256Hex(formToken), session.id]);
  }
  return reply.type('text/html; charset=utf-8').send(html);
}


/** Whether the signed-in operator's role allows a permission (to show or hide a button; the server checks again). */
function canOf(req: FastifyRequest, p: string): boolean {
  const s = req.console?.session;
  return !!s && s.stage === 'FULL' && allows(s.operator.role, p as Permission);
}

/** The page with `ok` set: post/redirect/get to a page that says what was done. */
export function done(reply: FastifyReply, to: string, message: string) {
  const sep = to.includes('?') ? '&' : '?';
  return reply.redirect(`${to}${sep}ok=${encodeURIComponent(message)}`, 303);
}
