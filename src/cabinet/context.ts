import type { FastifyReply, FastifyRequest } from 'fastify';
import { Decimal } from 'decimal.js';
import { formatDateTime } from '../lib/time.js';
import { escapeHtml } from '../lib/html.js';
import { formatMoney } from '../lib/money-format.js';
import { refundState } from './lists.js';
import { paymentError } from '../domain/payment/payment-errors.js';
import { holdReadingOf } from '../domain/payment/hold-reading.js';

/** A payment's status in the cabinet's words (pages and CSV): a hold reads as what happened to it. */
export function paymentStatusText(t: T, p: Parameters<typeof holdReadingOf>[0]): string {
  const hold = holdReadingOf(p);
  return hold ? t(`hold.${hold}`) : t(`status.${p.status}`);
}
import { DomainError, UnauthorizedActionError, ValidationError } from '../errors.js';
import { UnsafeUrlError } from '../outbox/url-guard.js';
import { queryOf } from '../lib/form-body.js';
import { fieldMessage, translator } from './i18n.js';
import type { Lang, T } from '../lib/i18n.js';
import { mustEnrolTwoFactor, type CabinetSession } from './session.js';
import { FormTokens, Flashes } from './forms.js';
import type { Actor } from '../audit/audit.js';
import { teamAllows, type CabinetPermission } from './roles.js';

declare module 'fastify' {
  interface FastifyRequest {
    cabinet: CabinetRequest;
  }
  interface FastifyContextConfig {
    /** Cabinet routes reachable without a session (sign-in, assets). */
    cabinetPublic?: boolean;
    /** Cabinet routes for a session that still owes the TOTP code (and only for it). */
    cabinetSecondFactor?: boolean;
    /** Cabinet routes an account that must set up TOTP (its team requires it) may still reach. */
    cabinetEnrolment?: boolean;
    /**
     * Where a replayed submission of this form goes (a reload of its answer), when that is not
     * the page the form came from: a page under /cabinet and the `ok` message key it shows.
     */
    cabinetReplayTo?: { path: string; ok: string };
  }
  interface FastifyReply {
    cabinetView(page: string, data?: object): Promise<string>;
  }
}

export interface CabinetRequest {
  lang: Lang;
  t: T;
  session: CabinetSession | null;
  /** Test mode (the live/test switch): lists, balances and forms act on the test twin. */
  mode?: 'live' | 'test';
  /** The signed-in merchant's test twin, in test mode. */
  testMerchantId?: string | null;
  /** The form token this POST used (given back when the answer is an error). */
  formNonce?: string;
}

export const BASE = '/cabinet';
export const SESSION_COOKIE = 'cab_sid';
export const LOGIN_CSRF_COOKIE = 'cab_pre';
/** `test` while the cabinet shows test-mode data (no secret: both modes are the same merchant's). */
export const MODE_COOKIE = 'cab_mode';

export interface CabinetRouteOptions {
  sessions: import('./session.js').SessionStore;
  cookieOpts: { path: string; httpOnly: boolean; sameSite: 'lax'; secure: boolean };
  signInLimits: import('./sign-in-guard.js').SignInLimits;
}

/** Form errors: a message at the top and messages next to fields, in the user's language. */
export interface FormErrors {
  top?: string;
  fields: Record<string, string>;
}

/**
 * Turns what a service threw into form errors: DomainError keys become translated messages at
 * the top (or next to `fieldOf[code]`), ValidationError fields next to their inputs.
 * Anything else is rethrown (a real bug, answered by the cabinet's error page).
 */
export function formErrors(req: FastifyRequest, err: unknown, fieldOf: Record<string, string> = {}): FormErrors {
  const { t, lang } = req.cabinet;
  if (err instanceof ValidationError) {
    const fields: Record<string, string> = {};
    for (const [k, msgs] of Object.entries(err.errors)) fields[k] = msgs.map((m) => fieldMessage(lang, m)).join(' ');
    return { top: t('common.fix'), fields };
  }
  if (err instanceof DomainError) {
    const msg = t(`error.${err.code}`);
    const field = fieldOf[err.code];
    return field ? { top: t('common.fix'), fields: { [field]: msg } } : { top: msg, fields: {} };
  }
  if (err instanceof UnsafeUrlError) return { top: t('common.fix'), fields: { url: t('error.unsafe_url', { reason: err.message }) } };
  if (err instanceof UnauthorizedActionError) return { top: t('error.unauthorized'), fields: {} };
  throw err;
}

/** The helpers and common data every cabinet template gets. */
export function render(req: FastifyRequest, reply: FastifyReply, page: string, data: Record<string, unknown> = {}) {
  const { t, lang, session } = req.cabinet;
  const tz = cabinetTz(req);
  const url = new URL(req.url, 'http://x');
  const langUrl = (l: Lang) => { const u = new URL(url); u.searchParams.set('lang', l); return u.pathname + u.search; };
  const okKey = url.searchParams.get('ok');
  const flash = okKey && /^[a-z]+\.[a-z_]+$/.test(okKey) && t(okKey) !== okKey ? t(okKey) : null;
  const h = {
    date: (d: Date | null | undefined) => (d ? formatDateTime(d, tz) : ''),
    // Money as people read it (lib/money-format.ts): one format per language, two decimals.
    money: (d: Decimal.Value | null | undefined, currency: string) => (d === null || d === undefined ? '' : formatMoney(d.toString(), lang, currency)),
    /** "Refunded" / "Partly refunded" for a payment with refunds, else ''. */
    refund: (p: Parameters<typeof refundState>[0]) => {
      const s = refundState(p);
      return s === 'full' ? t('payments.refunded_full') : s === 'partly' ? t('payments.refunded_part') : '';
    },
    status: (s: string) => t(`status.${s}`),
    /** A payment's status as people read it: a two-stage payment says what happened to the hold. */
    paymentStatus: (p: Parameters<typeof holdReadingOf>[0]) => paymentStatusText(t, p),
    /** Why a FAIL payment failed: its API `error_code` and `error_message` (both null otherwise; none for a hold the shop cancelled). */
    paymentError: (p: { status: string; failureReason: string | null; authorizedAmount?: unknown; cancelRequestedAt?: Date | null }) =>
      (holdReadingOf(p) === 'CANCELLED_BY_SHOP' ? { code: null, message: null } : paymentError(p.status, p.failureReason, lang)),
    qs: (params: Record<string, unknown>) => {
      const u = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
      const s = u.toString();
      return s ? `?${s}` : '';
    },
  };
  const ctx: Record<string, unknown> = {
    base: BASE, t, lang, h, langUrl, tz, flash, path: url.pathname, profile: req.server.config.profile,
    // A session that still owes its TOTP code shows no menu or merchant: only the code page.
    // Nor while the account must set up TOTP first (its team requires it): only the security page.
    csrf: session ? new FormTokens(req.server.db).issue(session) : '', merchant: session?.stage === 'FULL' && !mustEnrolTwoFactor(session) ? session.merchant : null,
    mode: req.cabinet.mode ?? 'live',
    teamRole: session ? (session.user?.role ?? 'owner') : null,
    // Who is signed in (the header) and what their role may submit: a form the role cannot
    // send is not shown (a note says why), so nobody fills one in to get a 403.
    signedInAs: session ? (session.user?.email ?? session.merchant.email) : null,
    can: (p: CabinetPermission) => (session ? teamAllows(session, p) : false),
    errors: { fields: {} }, values: {}, ...data,
  };
  const fe = (ctx.errors as FormErrors).fields ?? {};
  // Field errors next to their inputs, tied to them for screen readers.
  Object.assign(h, {
    /** The note shown instead of a form the signed-in role cannot submit. */
    roleNote: () => `<p class="flash info" data-testid="role-note">${escapeHtml(t('common.role_cannot', { role: t(`role.${ctx.teamRole as string}`) }))}</p>`,
    err: (name: string) => (fe[name] ? `<p class="field-error" id="err-${escapeHtml(name)}">${escapeHtml(fe[name]!)}</p>` : ''),
    aria: (name: string) => (fe[name] ? ` aria-invalid="true" aria-describedby="err-${escapeHtml(name)}"` : ''),
    val: (name: string, dflt = '') => {
      const v = (ctx.values as Record<string, unknown>)[name];
      return typeof v === 'string' ? v : dflt;
    },
  });
  reply.type('text/html; charset=utf-8');
  return reply.cabinetView(page, ctx);
}

/**
 * The time zone the cabinet writes and reads times in: the merchant's setting (Team page),
 * else the deployment's TZ. Pages, filters, the chart's days and the CSVs all use it.
 */
export function cabinetTz(req: FastifyRequest): string {
  return req.cabinet?.session?.merchant.timeZone ?? req.server.config.tz;
}

/**
 * The audit actor of a cabinet change: `merchant:<id>` (the merchant's own login) or
 * `merchant-user:<id>` (a team member), named by that account's email as it was then.
 */
export function cabinetActor(req: FastifyRequest): Actor {
  const s = req.cabinet.session;
  const user = s?.user;
  return { actor: user ? `merchant-user:${user.id}` : `merchant:${liveMerchantIdOf(req)}`, name: user ? user.email : s!.merchant.email, ip: req.ip ?? null };
}

/**
 * The merchant whose objects and balances the cabinet shows and creates (routes behind the
 * session hook only): the signed-in merchant, or its test twin in test mode.
 */
export function merchantIdOf(req: FastifyRequest): string {
  const live = liveMerchantIdOf(req);
  return req.cabinet.mode === 'test' && req.cabinet.testMerchantId ? req.cabinet.testMerchantId : live;
}

/**
 * The merchant a money form acts as: the signed-in merchant, or in test mode its test twin
 * (whose settings, grants and limits the database keeps equal to the live merchant's). A form
 * in test mode thus moves test money only: never a live payout or refund.
 */
export function actingMerchant(req: FastifyRequest): CabinetSession['merchant'] {
  const s = req.cabinet.session;
  if (!s) throw new Error('cabinet route without a session');
  return { ...s.merchant, id: merchantIdOf(req) };
}

/**
 * The signed-in (live) merchant, whatever the mode: for what both modes share (shops and their
 * settings, the tokens, the IP allow-list, the payout webhook URL, the audit actor).
 */
export function liveMerchantIdOf(req: FastifyRequest): string {
  const s = req.cabinet.session;
  if (!s) throw new Error('cabinet route without a session');
  return s.merchant.id;
}

/** Stores what the page a POST redirects to must show once (see Flashes); returns its id for the URL. */
export function putFlash(req: FastifyRequest, kind: string, payload: unknown): Promise<string> {
  return new Flashes(req.server.db, req.server.config.tokenEncryptionKey).put(req.cabinet.session!.id, kind, payload);
}

/** The flash named by `?flash=` once; null on a reload. */
export function takeFlash<T>(req: FastifyRequest, kind: string): Promise<T | null> {
  return new Flashes(req.server.db, req.server.config.tokenEncryptionKey).take<T>(req.cabinet.session!.id, kind, queryOf(req).flash);
}
