import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestInput } from '../lib/input.js';
import { DomainError } from '../errors.js';
import { payRefusal } from '../domain/bill/bill.states.js';
import { parsePayInput, PayValidationError, type PayFieldCode, type PayMethod } from '../domain/payment/pay-input.js';
import { PROVIDER_UNAVAILABLE } from '../domain/payment/payment-errors.js';
import { FormAlreadyUsedError, type PayableBill, type PayOutcome, type Quote } from '../domain/payment/payment.service.js';
import type { Counter } from '../lib/limit-store.js';
import { PayCsrf } from './csrf.js';
import { MESSAGES } from './i18n.js';
import { negotiateLang, type Lang } from '../lib/i18n.js';
import { qrSvg } from './qr.js';
import { cancelledPage, infoPage, paymentPage, qrPage, resultPage, waitingPage, type Declined, type PageCtx } from './render.js';
import { receiptPage } from './receipt.js';

declare module 'fastify' {
  interface FastifyReply {
    /** CSP nonce of this response's inline style and script. */
    cspNonce: string;
    /** Extra origin the page's form may post to (the shop's Success/Fail URL). */
    formActionOrigin: string | null;
  }
}

const ATTEMPT_WINDOW_MS = 10 * 60 * 1000;
const BILL_ID = { type: 'object', properties: { billId: { type: 'string', maxLength: 64 } }, required: ['billId'] } as const;
const PAYMENT_ID = {
  type: 'object', properties: { billId: { type: 'string', maxLength: 64 }, paymentId: { type: 'string', maxLength: 64 } }, required: ['billId', 'paymentId'],
} as const;
/** A payment page being polled asks the provider at most this often per payment, whichever process serves it. */
const ASK_EVERY_MS = 1500;
/**
 * A payer declined this many times on one bill (from one address, within DECLINE_WINDOW_MS)
 * is handed back to the shop's Fail URL instead of the form again (docs/adr/0015-declined-card-stays-on-the-form.md).
 */
const DECLINES_BEFORE_FAIL_URL = 3;
const DECLINE_WINDOW_MS = 30 * 60 * 1000;

/** JSON mode: the caller asks for JSON (and not for HTML first) or posts JSON. */
function wantsJson(req: FastifyRequest): boolean {
  const accept = String(req.headers.accept ?? '').toLowerCase();
  const json = accept.indexOf('application/json');
  const html = accept.indexOf('text/html');
  if (json >= 0 && (html < 0 || json < html)) return true;
  return String(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json');
}

function originOf(url: string): string | null {
  try { return new URL(url).origin; } catch { return null; }
}

/** Hosted payment page /pay/{bill_id} and QR page /pay/{bill_id}/qr. */
/**
 * The security headers of every payer-facing page (the payment page and the sandbox bank pages):
 * a per-response CSP nonce for the inline style and script, no framing, no caching.
 */
export function installPageHeaders(app: FastifyInstance): void {
  app.decorateReply('cspNonce', '');
  app.decorateReply('formActionOrigin', null);
  app.addHook('onRequest', async (_req, reply) => {
    reply.cspNonce = randomBytes(16).toString('hex');
  });
  app.addHook('onSend', async (_req, reply, payload) => {
    const n = reply.cspNonce;
    const formAction = ["'self'", reply.formActionOrigin].filter(Boolean).join(' ');
    reply.header('Content-Security-Policy',
      `default-src 'none'; style-src 'nonce-${n}'; script-src 'nonce-${n}'; img-src 'self' data:; connect-src 'self'; ` +
      `form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`);
    reply.header('X-Frame-Options', 'DENY');
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('Cache-Control', 'no-store');
    reply.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
    return payload;
  });
}

/** Hosted payment page /pay/{bill_id}, its payments' pages /pay/{bill_id}/payments/{id} and QR page /pay/{bill_id}/qr. */
export default async function pageRoutes(app: FastifyInstance): Promise<void> {
  const { config, services } = app;
  const csrf = new PayCsrf(config.tokenEncryptionKey);
  // Failed attempts per client address and per bill, counted once for all processes (docs/adr/0014).
  const limits = services.limits;
  const attemptCounters = (ip: string, billId: string): Counter[] => [
    { name: 'pay:ip', key: ip, windowMs: ATTEMPT_WINDOW_MS, limit: config.payAttemptsPerIp },
    { name: 'pay:bill', key: billId, windowMs: ATTEMPT_WINDOW_MS, limit: config.payAttemptsPerBill },
  ];
  // What the page of a payment being checked promises: reconciliation asks the provider at least
  // this often (RECONCILE_MAX_DELAY_MS), so an answer the provider has is learned within it.
  const checkMinutes = Math.max(1, Math.ceil(config.reconcileMaxDelayMs / 60_000));

  installPageHeaders(app);

  // The language: ?lang= (or the form's lang), else the bill's locale, else Accept-Language.
  const ctxOf = (req: FastifyRequest, reply: FastifyReply, langField?: unknown, bill?: PayableBill | null, sandbox = true): PageCtx => ({
    lang: negotiateLang(req.headers['accept-language'], langField ?? (req.query as Record<string, unknown> | undefined)?.lang ?? bill?.locale),
    nonce: reply.cspNonce,
    sandbox,
    profile: config.profile,
  });
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.status(status).type('text/html; charset=utf-8').send(body);
  const pageUrl = (billId: string) => `${config.publicBaseUrl}/pay/${billId}`;

  /** What the payer owes by each method some connector may take now (the only methods offered). */
  const quotesOf = async (bill: PayableBill): Promise<Partial<Record<PayMethod, Quote>>> => {
    const out: Partial<Record<PayMethod, Quote>> = {};
    for (const m of await services.paymentPage.availableMethods(bill)) {
      const q = services.paymentPage.quote(bill, m);
      if (q) out[m] = q;
    }
    return out;
  };

  /** No method of the bill can be paid now (production: no enabled live connector on its routes). */
  const unavailablePage = (ctx: PageCtx, bill: PayableBill) => {
    const t = MESSAGES[ctx.lang];
    const back = bill.returnUrl ? { href: bill.returnUrl, label: t.backToShop } : undefined;
    return infoPage(ctx, { title: t.rateTitle, text: t.unavailableText, icon: 'info', shopName: bill.shopName, testId: 'unavailable', link: back });
  };

  /** The page for a bill that cannot be paid now, or null when it can. */
  function refusal(ctx: PageCtx, bill: PayableBill | null, code?: string): { status: number; body: string } | null {
    const t = MESSAGES[ctx.lang];
    const shopName = bill?.shopName;
    if (!bill || code === 'bill_not_found') return { status: 404, body: infoPage(ctx, { title: t.notFoundTitle, text: t.notFoundText, icon: 'info', testId: 'not-found' }) };
    const why = payRefusal(bill);
    if (why === 'bill_is_finished' || code === 'bill_is_finished') return { status: 200, body: infoPage(ctx, { title: t.paidTitle, text: t.paidText, icon: 'ok', shopName, testId: 'paid' }) };
    const back = bill.returnUrl ? { href: bill.returnUrl, label: t.backToShop } : undefined;
    if (why === 'bill_inactive' || code === 'bill_inactive') return { status: 403, body: infoPage(ctx, { title: t.inactiveTitle, text: t.inactiveText, icon: 'bad', shopName, testId: 'inactive', link: back }) };
    if (why === 'bill_expired' || code === 'bill_expired') return { status: 403, body: infoPage(ctx, { title: t.expiredTitle, text: t.expiredText, icon: 'wait', shopName, testId: 'expired', link: back }) };
    if (why === 'payment_in_progress' || code === 'payment_in_progress') {
      return { status: code ? 409 : 200, body: infoPage(ctx, { title: t.progressTitle, text: t.progressText, icon: 'wait', shopName, testId: 'in-progress', link: { href: `/pay/${bill.id}`, label: t.backToForm } }) };
    }
    if (!bill.rate || code === 'rate-not-found') return { status: 503, body: infoPage(ctx, { title: t.rateTitle, text: t.rateText, icon: 'info', shopName, testId: 'no-rate' }) };
    return null;
  }

  async function renderForm(req: FastifyRequest, reply: FastifyReply, ctx: PageCtx, bill: PayableBill, status: number, extra: { errors?: Partial<Record<string, PayFieldCode>>; method?: PayMethod; payer?: Record<string, unknown>; declined?: Declined } = {}) {
    const q = (req.query ?? {}) as Record<string, unknown>;
    const asked = typeof q.method === 'string' ? q.method.toUpperCase() : undefined;
    const method = extra.method ?? extra.declined?.method ?? (asked === 'SBP' || asked === 'BANK_CARD' ? asked : undefined);
    // The "back to the shop" button after a decline posts to the Fail URL: the CSP must allow it.
    if (extra.declined?.back) reply.formActionOrigin = originOf(extra.declined.back.url);
    const quotes = await quotesOf(bill);
    if (Object.keys(quotes).length === 0 && bill.rate) return html(reply, 503, unavailablePage(ctx, bill));
    const card = await services.paymentPage.cardRoute(bill);
    const body = paymentPage({ ...ctx, sandbox: card.sandbox }, {
      hostedCard: card.hosted,
      bill,
      quotes,
      csrf: csrf.issue(bill.id),
      errors: extra.errors,
      method,
      lastFailed: bill.type === 'NORMAL' && bill.status === 'FAIL',
      payer: extra.payer,
      declined: extra.declined,
    });
    return html(reply, status, body);
  }

  app.get<{ Params: { billId: string } }>('/:billId', { schema: { hide: true, params: BILL_ID } }, async (req, reply) => {
    const bill = await services.paymentPage.findPayableBill(req.params.billId);
    const ctx = ctxOf(req, reply, undefined, bill);
    if (bill?.type === 'NORMAL' && bill.status === 'PROCESS') {
      // The payer opened the bill's link again while its payment waits: show that payment.
      const running = await services.paymentPage.runningPayment(bill.id);
      if (running) return reply.redirect(`/pay/${bill.id}/payments/${running}${ctx.lang === 'ru' ? '?lang=ru' : ''}`, 303);
    }
    const r = refusal(ctx, bill);
    if (r) return html(reply, r.status, r.body);
    const back = await declinedOf(bill!.id, (req.query as Record<string, unknown>).declined, req.ip);
    return renderForm(req, reply, ctx, bill!, 200, back ? { declined: back.declined, payer: back.payer } : {});
  });

  /**
   * The declined payment a form comes back from (`?declined=<payment id>`): only a FAIL payment
   * of this bill counts. The payer's fields (e-mail, phone, name, comment; never the card) are
   * filled in again from it, only for the address that paid: a shared or leaked link shows the
   * reason but not the payer's data (docs/adr/0015-declined-card-stays-on-the-form.md).
   */
  async function declinedOf(billId: string, paymentId: unknown, ip: string): Promise<{ declined: Declined; payer: Record<string, string> } | undefined> {
    if (typeof paymentId !== 'string') return undefined;
    const st = await services.paymentPage.paymentState(billId, paymentId);
    if (!st || st.outcome.status !== 'FAIL' || st.outcome.hold === 'CANCELLED_BY_SHOP') return undefined;
    const r = st.outcome.redirect;
    const declined: Declined = { code: st.outcome.failureReason ?? null, method: st.outcome.method ?? 'BANK_CARD', back: r?.url ? { url: r.url, fields: { ...r.fields } } : null };
    const typed = st.outcome.payerIp === ip ? st.outcome.payer : undefined;
    const payer = Object.fromEntries(Object.entries(typed ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string').map(([k, v]) => [`payer_${k}`, v]));
    return { declined, payer };
  }

  /**
   * Where a declined payer goes: back to the form with the reason while the
   * bill can still be paid, until DECLINES_BEFORE_FAIL_URL declines; null: the payment's own
   * page (the Fail URL POST, or the "try again" page when the shop has none).
   */
  async function formAfterDecline(req: FastifyRequest, billId: string, paymentId: string, lang: Lang): Promise<string | null> {
    const bill = await services.paymentPage.findPayableBill(billId);
    if (!bill || payRefusal(bill) || !bill.rate) return null;
    if (await services.paymentPage.recentDeclines(billId, req.ip, DECLINE_WINDOW_MS) >= DECLINES_BEFORE_FAIL_URL) return null;
    return `/pay/${billId}?declined=${paymentId}&lang=${lang}`;
  }

  app.get<{ Params: { billId: string } }>('/:billId/qr', { schema: { hide: true, params: BILL_ID } }, async (req, reply) => {
    const bill = await services.paymentPage.findPayableBill(req.params.billId);
    const ctx = ctxOf(req, reply, undefined, bill);
    const r = refusal(ctx, bill);
    if (r) return html(reply, r.status, r.body);
    const url = pageUrl(bill!.id);
    const qs = await quotesOf(bill!);
    if (Object.keys(qs).length === 0) return html(reply, 503, unavailablePage(ctx, bill!));
    return html(reply, 200, qrPage(ctx, bill!, url, await qrSvg(url), qs[bill!.paymentMethod ?? 'BANK_CARD']));
  });

  app.post<{ Params: { billId: string } }>('/:billId', {
    schema: { hide: true, params: BILL_ID },
    config: { errorStatus: { bill_not_found: 404 } },
  }, async (req, reply) => {
    const json = wantsJson(req);
    const raw = requestInput(req);
    const ctx = ctxOf(req, reply, raw.lang);
    const billId = req.params.billId;
    const attempts = attemptCounters(req.ip, billId);
    const t = MESSAGES[ctx.lang];

    const tried = await limits.peek(attempts);
    if (attempts.some((c, i) => tried[i]! >= c.limit)) {
      reply.header('Retry-After', String(ATTEMPT_WINDOW_MS / 1000));
      if (json) throw new DomainError('too_many_attempts');
      return html(reply, 429, infoPage(ctx, { title: t.limitTitle, text: t.limitText, icon: 'wait', testId: 'too-many' }));
    }

    const formNonce = json ? null : csrf.check(billId, raw._csrf);
    const paymentPageOf = (paymentId: string) => `/pay/${billId}/payments/${paymentId}${ctx.lang === 'ru' ? '?lang=ru' : ''}`;
    if (formNonce) {
      // Single-use form: a reloaded or repeated POST goes to the payment this form opened.
      const used = await services.paymentPage.paymentOfForm(formNonce);
      if (used) return reply.redirect(paymentPageOf(used.id), 303);
    }
    if (!json && !formNonce) {
      // Rare path: say what is wrong with the bill first, if anything.
      const bill = await services.paymentPage.findPayableBill(billId);
      const r = refusal(ctx, bill);
      if (r && r.status !== 200 && r.status !== 503) return html(reply, r.status, r.body);
      return html(reply, 403, infoPage(ctx, { title: t.csrfTitle, text: t.csrfText, icon: 'info', shopName: bill!.shopName, testId: 'csrf', link: { href: `/pay/${billId}`, label: t.backToForm } }));
    }

    let outcome;
    try {
      // The service checks the bill under its lock (unknown, finished, inactive, in progress),
      // then parses the form against it (its fixed method), then pays.
      outcome = await services.payments.pay(billId, (bill, o) => parsePayInput(raw, bill.paymentMethod, new Date(), bill, o), { ip: req.ip, formNonce: formNonce ?? undefined });
    } catch (e) {
      // The same form raced itself (the other POST opened the payment, or holds the bill): go to that payment.
      if (formNonce && (e instanceof FormAlreadyUsedError || (e instanceof DomainError && e.code === 'payment_in_progress'))) {
        const used = await services.paymentPage.paymentOfForm(formNonce);
        if (used) return reply.redirect(paymentPageOf(used.id), 303);
      }
      if (e instanceof PayValidationError) {
        // Card testing shows as wrong card numbers and declines; typos in expiry/CVC do not count.
        if (e.codes.card_number === 'card_number_invalid') await limits.add(attempts);
        if (json) throw e;
        const bill = await services.paymentPage.findPayableBill(billId);
        if (!bill) return html(reply, 404, refusal(ctx, null)!.body);
        const m = String(raw.method ?? '').toUpperCase();
        return renderForm(req, reply, ctx, bill, 422, { errors: e.codes, method: m === 'SBP' || m === 'BANK_CARD' ? m : undefined, payer: raw });
      }
      if (e instanceof DomainError && e.code === 'method_unavailable' && !json) {
        const bill = await services.paymentPage.findPayableBill(billId);
        if (!bill) return html(reply, 404, refusal(ctx, null)!.body);
        const m = String(raw.method ?? '').toUpperCase();
        return renderForm(req, reply, ctx, bill, 422, { errors: { method: 'method_unavailable' }, method: m === 'SBP' || m === 'BANK_CARD' ? m : undefined, payer: raw });
      }
      if (e instanceof DomainError && !json) {
        const r = refusal(ctx, await services.paymentPage.findPayableBill(billId), e.code);
        if (r) return html(reply, r.status === 200 ? 403 : r.status, r.body);
      }
      throw e;
    }
    // A provider that was down is no sign of card testing: it does not count against the payer.
    if (outcome.status === 'FAIL' && outcome.failureReason !== PROVIDER_UNAVAILABLE) await limits.add(attempts);

    if (json) return reply.status(200).send(paymentJson(outcome));
    if (outcome.status === 'FAIL') {
      // Declined: the payer stays on the form with the reason (a GET: reloading it charges nothing).
      const back = await formAfterDecline(req, billId, outcome.paymentId, ctx.lang);
      if (back) return reply.redirect(back, 303);
    }
    // Post/redirect/get: the payment's own page shows what comes next; reloading it charges nothing.
    return reply.redirect(paymentPageOf(outcome.paymentId), 303);
  });

  /** JSON mode (PROVIDERS.md): `{payment_id, status, action?}` while PROCESS, `{payment_id, status, redirect}` once final. */
  function paymentJson(o: PayOutcome): Record<string, unknown> {
    // `hold`: the page's own word that the payment is authorised and held (its status stays PROCESS).
    if (o.status === 'PROCESS') return { payment_id: o.paymentId, status: o.status, ...(o.action ? { action: o.action } : {}), ...(o.hold ? { hold: o.hold } : {}) };
    return { payment_id: o.paymentId, status: o.status, redirect: o.redirect };
  }

  /**
   * The page of a final payment: the POST back to the shop's Success/Fail URL. One function, so
   * the receipt ("last page", src/page/receipt.ts) can take its place.
   */
  async function renderFinal(reply: FastifyReply, ctx: PageCtx, o: PayOutcome) {
    if (!o.redirect) throw new Error(`payment ${o.paymentId} is ${o.status} without its redirect`);
    if (o.redirect.url) reply.formActionOrigin = originOf(o.redirect.url);
    // Money received and no Success URL to go to: the customer's receipt (src/page/receipt.ts); a hold has none yet.
    else if (o.status !== 'FAIL' && o.hold !== 'HELD') return html(reply, 200, receiptPage(ctx, o, { tz: (await app.services.merchants.timeZoneOf(o.bill.merchantId)) ?? config.tz, at: o.finishedAt ?? new Date() }));
    return html(reply, 200, resultPage(ctx, o.bill, { ...o, redirect: o.redirect }));
  }

  app.get<{ Params: { billId: string; paymentId: string } }>('/:billId/payments/:paymentId', {
    schema: { hide: true, params: PAYMENT_ID },
    config: { errorStatus: { payment_not_found: 404 } },
  }, async (req, reply) => {
    const json = wantsJson(req);
    const { billId, paymentId } = req.params;
    let st = await services.paymentPage.paymentState(billId, paymentId);
    // A payment still waiting: ask its provider (the payer may just have come back from the bank), at most every ASK_EVERY_MS.
    if (st && st.outcome.status === 'PROCESS' && st.connector && await services.paymentPage.mayAskProvider(paymentId, ASK_EVERY_MS)) {
      await services.payments.askProvider({ id: paymentId, connector: st.connector, ref: st.ref, data: st.data });
      st = await services.paymentPage.paymentState(billId, paymentId);
    }
    if (!st) {
      if (json) throw new DomainError('payment_not_found');
      const ctx = ctxOf(req, reply);
      return html(reply, 404, refusal(ctx, null)!.body);
    }
    if (json) return reply.send(paymentJson(st.outcome));
    const ctx = ctxOf(req, reply, undefined, st.bill);
    if (st.outcome.hold === 'HELD') return renderFinal(reply, ctx, st.outcome);
    if (st.outcome.hold === 'CANCELLED_BY_SHOP') {
      // Not a decline: no form with decline wording, no trip to the Fail URL; a new payment only if the bill takes one.
      return html(reply, 200, cancelledPage(ctx, st.bill, st.outcome, refusal(ctx, st.bill) === null));
    }
    if (st.outcome.status === 'FAIL') {
      // A decline after the payer's action (3-D Secure, SBP, a reposted form) also goes back to the form.
      const back = await formAfterDecline(req, billId, paymentId, ctx.lang);
      if (back) return reply.redirect(back, 303);
    }
    if (st.outcome.status !== 'PROCESS') return renderFinal(reply, ctx, st.outcome);
    const a = st.outcome.action;
    return html(reply, 200, waitingPage(ctx, st.bill, st.outcome, a?.type === 'sbp_qr' ? await qrSvg(a.payload) : null, checkMinutes));
  });
}
