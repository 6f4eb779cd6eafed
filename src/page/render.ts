import { fileURLToPath } from 'node:url';
import { Decimal } from 'decimal.js';
import type { PayableBill, PayOutcome, Quote } from '../domain/payment/payment.service.js';
import type { PayFieldCode, PayMethod } from '../domain/payment/pay-input.js';
import { PROVIDER_UNAVAILABLE } from '../domain/payment/payment-errors.js';
import { declineText, FIELD_MESSAGES, MESSAGES, type Messages } from './i18n.js';
import { fill, type Lang } from '../lib/i18n.js';
import { PAGE_CSS } from './styles.js';
import { currencyMark, formatAmount, formatMoney } from '../lib/money-format.js';
import { PAGE_JS } from './script.js';
import { templates } from '../lib/html.js';
import type { PaymentsProfile } from '../config.js';

/**
 * The payer's pages: what each shows is decided here, the markup is in ./views (Eta, values
 * escaped by lib/html.ts); the sandbox pages and the receipt are views here too.
 */
const eta = templates(fileURLToPath(new URL('./views', import.meta.url)));

export interface PageCtx {
  lang: Lang; nonce: string; sandbox: boolean;
  /** The deployment's profile (PAYMENTS_PROFILE): every page says it; the sandbox's is visible. */
  profile?: PaymentsProfile;
}

/** What every view gets: the language's words and formats, the document's parts. */
function common(ctx: PageCtx) {
  const other: Lang = ctx.lang === 'ru' ? 'en' : 'ru';
  return {
    lang: ctx.lang, nonce: ctx.nonce, sandbox: ctx.sandbox, profile: ctx.profile,
    t: MESSAGES[ctx.lang], fieldT: FIELD_MESSAGES[ctx.lang], css: PAGE_CSS,
    otherLang: other, otherLangName: MESSAGES[ctx.lang].language,
    /** Money on the payer's pages: the one format per language (lib/money-format.ts). */
    money: (d: Decimal.Value, currency: string) => formatMoney(d, ctx.lang, currency),
    amount: (d: Decimal.Value) => formatAmount(d, ctx.lang),
    mark: (currency: string) => currencyMark(currency, ctx.lang),
    fill,
    declineText: (code: string | null) => declineText(ctx.lang, code),
    providerDown,
    bankUrl: (url: string) => bankUrl(ctx, url),
  };
}

/** A view of ./views with what every view gets; `title` and `script` go to the layout. */
export const pageView = (name: string, ctx: PageCtx, data: Record<string, unknown>): string => eta.render(`./${name}`, { ...common(ctx), ...data });

/** What the form shows after a decline: the reason, the method tried, the way back to the shop's Fail URL. */
export interface Declined {
  code: string | null;
  method: PayMethod;
  /** The decline's POST to the shop's Fail URL (signed fields), when the shop has one. */
  back: { url: string; fields: Record<string, string> } | null;
}

export interface FormState {
  bill: PayableBill;
  quotes: Partial<Record<PayMethod, Quote>>;
  csrf: string;
  errors?: Partial<Record<string, PayFieldCode>>;
  method?: PayMethod;
  lastFailed?: boolean;
  /** What the payer typed before a 422 (payer_* fields are shown back). */
  payer?: Record<string, unknown>;
  /** The card goes to a provider that hosts its own card form: no card fields here. */
  hostedCard?: boolean;
  /** The payment this form comes back from was declined (PRG: `?declined=<payment id>`). */
  declined?: Declined;
}

/** The lines under the total: the fee when the payer pays it, the rate and roubles of a foreign-currency bill. */
function summaryRows(ctx: PageCtx, t: Messages, bill: PayableBill, q: Quote | undefined) {
  const money = (d: Decimal.Value, currency: string) => formatMoney(d, ctx.lang, currency);
  const rows: Array<{ label: string; value: string; strong?: boolean; testId?: string }> = [];
  if (q && bill.payerPaysCommission && q.commission.gt(0)) {
    rows.push({ label: t.amount, value: money(bill.amount, bill.currency) });
    rows.push({ label: t.commission, value: money(q.commission, bill.currency) });
  }
  if (q && bill.currency !== 'RUB') {
    rows.push({ label: t.rate, value: `${money(1, bill.currency)} = ${money(q.rate, 'RUB')}` });
    rows.push({ label: t.inRub, value: money(q.dueRub, 'RUB'), strong: true, testId: 'amount-rub' });
  }
  return rows;
}

/** The cart lines sent at bill/create: name, quantity x price, line total. */
const itemLines = (bill: PayableBill) => bill.items.map((it) => {
  const qty = new Decimal(it.quantity);
  return { name: it.name, quantity: qty.toFixed(), price: it.price, total: new Decimal(it.price).mul(qty) };
});

const PAYER_INPUTS = {
  email: { type: 'email', autocomplete: 'email', inputmode: 'email', max: 255 },
  phone: { type: 'tel', autocomplete: 'tel', inputmode: 'tel', max: 32 },
  name: { type: 'text', autocomplete: 'name', inputmode: 'text', max: 255 },
  comment: { type: 'text', autocomplete: 'off', inputmode: 'text', max: 1000 },
} as const;

/** The payer fields the bill asked for (required), and the e-mail it prefills; what the payer typed comes back. */
function payerFields(t: Messages, s: FormState) {
  const { bill } = s;
  const label = { email: t.payerEmail, phone: t.payerPhone, name: t.payerName, comment: t.payerComment };
  return (['email', 'phone', 'name', 'comment'] as const)
    .filter((f) => bill.requestFields.includes(f) || (f === 'email' && bill.payerEmail !== null))
    .map((f) => {
      const name = `payer_${f}`;
      const typed = s.payer?.[name];
      return {
        ...PAYER_INPUTS[f], name, label: label[f], textarea: f === 'comment',
        value: typeof typed === 'string' ? typed : f === 'email' ? bill.payerEmail ?? '' : '',
        required: bill.requestFields.includes(f),
      };
    });
}

/** The payment form: method choice (CSS tabs, no JavaScript needed), card fields, SBP QR. */
export function paymentPage(ctx: PageCtx, s: FormState): string {
  const t = MESSAGES[ctx.lang];
  const { bill } = s;
  // Only the methods some connector may take now (the caller leaves the others out of quotes).
  const allowed: PayMethod[] = bill.paymentMethod ? [bill.paymentMethod] : ['BANK_CARD', 'SBP'];
  const offered = allowed.filter((m) => s.quotes[m]);
  const methods: PayMethod[] = offered.length > 0 ? offered : allowed;
  const selected: PayMethod = s.method && methods.includes(s.method) ? s.method : methods[0]!;
  const q = s.quotes[selected];
  const d = s.declined;
  const payLabel = (m: PayMethod) => {
    const qq = s.quotes[m];
    return qq ? formatMoney(qq.dueRub, ctx.lang, 'RUB') : '';
  };
  return pageView('payment', ctx, {
    title: `${t.title} — ${bill.shopName}`, script: PAGE_JS,
    bill, csrf: s.csrf, quotes: s.quotes, errors: s.errors, declined: d, lastFailed: s.lastFailed, hostedCard: s.hostedCard,
    methods, selected, due: q ? q.dueInBillCurrency : bill.amount,
    rows: summaryRows(ctx, t, bill, q), items: itemLines(bill), payerFields: payerFields(t, s),
    // A provider that was down says nothing about the card: the field is not marked wrong.
    cardDeclined: d?.method === 'BANK_CARD' && !providerDown(d.code),
    payLabel: { BANK_CARD: payLabel('BANK_CARD'), SBP: payLabel('SBP') },
  });
}

/** A page that only says something: unknown, inactive or paid bill, limits, expired form. */
export function infoPage(ctx: PageCtx, o: { title: string; text: string; icon: 'ok' | 'bad' | 'info' | 'wait'; shopName?: string; link?: { href: string; label: string }; testId: string }): string {
  return pageView('info', ctx, { ...o });
}

/** The payment FAILed because no connector of its route would take it: not the payer's decline. */
const providerDown = (code: string | null | undefined): boolean => code === PROVIDER_UNAVAILABLE;

function resultTitle(t: Messages, status: PayOutcome['status'], failureReason?: string | null, hold?: PayOutcome['hold']): string {
  if (hold === 'HELD') return t.heldTitle;
  if (status === 'FAIL' && providerDown(failureReason)) return t.methodDownTitle;
  return status === 'SUCCESS' ? t.successTitle : status === 'UNDERPAID' ? t.underpaidTitle : status === 'OVERPAID' ? t.overpaidTitle : t.failTitle;
}

/**
 * After a payment: an auto-submitting POST to the shop's Success/Fail URL with a visible button
 * (works without JavaScript), or a status page when the shop has no such URL.
 */
export function resultPage(ctx: PageCtx, bill: PayableBill, out: PayOutcome & { redirect: NonNullable<PayOutcome['redirect']> }): string {
  const t = MESSAGES[ctx.lang];
  return pageView('result', ctx, {
    title: resultTitle(t, out.status, out.failureReason, out.hold),
    script: out.redirect.url ? "document.getElementById('back').submit();" : undefined,
    bill, out, failed: out.status === 'FAIL', held: out.hold === 'HELD', down: providerDown(out.failureReason),
  });
}

/**
 * A hold the shop cancelled: what happened to the payer's money, in the payer's words; no decline
 * wording and no page that sends them off to the Fail URL by itself. A new payment is offered
 * only when the bill takes one (`payAgain`).
 */
export function cancelledPage(ctx: PageCtx, bill: PayableBill, out: PayOutcome, payAgain: boolean): string {
  return pageView('cancelled', ctx, { title: MESSAGES[ctx.lang].cancelledTitle, bill, out, payAgain });
}

/** The QR page (`link_url`): a QR code of the payment page. */
export function qrPage(ctx: PageCtx, bill: PayableBill, pageUrl: string, qrSvg: string, q: Quote | undefined): string {
  const t = MESSAGES[ctx.lang];
  return pageView('qr', ctx, { title: `${t.qrTitle} — ${bill.shopName}`, bill, pageUrl, qrSvg, due: q ? q.dueInBillCurrency : bill.amount });
}

/** Polls the payment's JSON state and reloads the page once it is final (the page works without it: it refreshes itself). */
const POLL_JS = `(function(){var u=location.pathname+location.search;function tick(){fetch(u,{headers:{accept:'application/json'},cache:'no-store',credentials:'same-origin'})
.then(function(r){return r.json()}).then(function(j){if(j.status&&(j.status!=='PROCESS'||j.hold)){location.reload();return}setTimeout(tick,2000)})
.catch(function(){setTimeout(tick,4000)})}setTimeout(tick,1500)})();`;

/** The sandbox bank's own pages (relative links) speak the payer's language: the page's, carried along. */
function bankUrl(ctx: PageCtx, url: string): string {
  return url.startsWith('/sandbox/') && !url.includes('?') ? `${url}?lang=${ctx.lang}` : url;
}

/**
 * The waiting page of a payment in PROCESS: what the payer must do (the bank's 3-D Secure page,
 * the provider's page, an SBP QR code with bank-app links), polling until the payment is final.
 * With nothing for the payer to do, the outcome is unknown to us (the provider did not answer in
 * time, or has not said yet): the page says it is being checked, how long that may take
 * (`checkMinutes`: the longest wait between two questions to the provider) and what happens next.
 */
export function waitingPage(ctx: PageCtx, bill: PayableBill, out: PayOutcome, qrSvg: string | null, checkMinutes: number): string {
  const t = MESSAGES[ctx.lang];
  const a = out.action;
  const title = a?.type === '3ds' ? t.act3dsTitle : a?.type === 'redirect' ? t.actRedirectTitle : a?.type === 'sbp_qr' ? t.actSbpTitle : t.checkTitle;
  return pageView('waiting', ctx, { title, script: POLL_JS, bill, out, action: a, qrSvg, checkMinutes });
}
