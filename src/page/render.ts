import { Decimal } from 'decimal.js';
import type { PayableBill, PayOutcome, Quote } from '../domain/payment/payment.service.js';
import type { PayFieldCode, PayMethod } from '../domain/payment/pay-input.js';
import { PROVIDER_UNAVAILABLE } from '../domain/payment/payment-errors.js';
import { declineText, FIELD_MESSAGES, MESSAGES, type Messages } from './i18n.js';
import type { Lang } from '../lib/i18n.js';
import { PAGE_CSS } from './styles.js';
import { currencyMark, formatAmount, formatMoney } from '../lib/money-format.js';
import { PAGE_JS } from './script.js';
import { escapeHtml } from '../lib/html.js';
import type { PaymentsProfile } from '../config.js';


/** Money on the payer's pages: the one format per language (lib/money-format.ts). */
const money = (lang: Lang, d: Decimal.Value, currency: string): string => formatMoney(d, lang, currency);
/** The big total: the amount and its currency set apart, in the language's order. */
function sumHtml(lang: Lang, d: Decimal.Value, currency: string): string {
  const num = `<span class="num">${escapeHtml(formatAmount(d, lang))}</span>`;
  return lang === 'ru' ? `${num}\u00a0<span class="cur">${escapeHtml(currencyMark(currency, lang))}</span>` : `<span class="cur">${escapeHtml(currency)}</span>\u00a0${num}`;
}

export interface PageCtx {
  lang: Lang; nonce: string; sandbox: boolean;
  /** The deployment's profile (PAYMENTS_PROFILE): every page says it; the sandbox's is visible. */
  profile?: PaymentsProfile;
}

/** The page document around a body (shared by the payment page and the sandbox bank pages). */
export function layout(ctx: PageCtx, title: string, body: string, opts: { script?: string } = {}): string {
  return `<!doctype html>
<html lang="${ctx.lang}">
<head>
<meta charset="utf-8">
<meta name="payments-profile" content="${ctx.profile ?? 'sandbox'}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="/favicon.ico">
<title>${escapeHtml(title)}</title>
<style nonce="${escapeHtml(ctx.nonce)}">${PAGE_CSS}</style>
</head>
<body>
<main class="wrap">
${body}
</main>
${opts.script ? `<script nonce="${escapeHtml(ctx.nonce)}">${opts.script}</script>` : ''}
</body>
</html>`;
}

function merchantHeader(t: Messages, shopName: string, langSwitch: string): string {
  const initial = (shopName.trim()[0] ?? '•').toUpperCase();
  return `<header class="merchant">
  <div class="logo" aria-hidden="true">${escapeHtml(initial)}</div>
  <div class="who"><div class="muted small">${escapeHtml(t.payTo)}</div><div class="shop">${escapeHtml(shopName)}</div></div>
  ${langSwitch}
</header>`;
}

const langLink = (ctx: PageCtx, path: string): string => {
  const other = ctx.lang === 'ru' ? 'en' : 'ru';
  return `<a class="lang" href="${escapeHtml(path)}?lang=${other}" hreflang="${other}">${escapeHtml(MESSAGES[ctx.lang].language)}</a>`;
};

const LOCK = '<svg class="ico" viewBox="0 0 24 24" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5zm-3 8V7a3 3 0 1 1 6 0v3H9z"/></svg>';

/**
 * The mark of a test bill (the merchant's test token): on every page the payer sees, so
 * nobody mistakes a test payment for a real one (PROVIDERS.md "Test mode").
 */
export function testBanner(ctx: Pick<PageCtx, 'lang'>, bill: { test: boolean }, long = false): string {
  if (!bill.test) return '';
  const t = MESSAGES[ctx.lang];
  return `<p class="test-banner" role="note" data-testid="test-banner">${escapeHtml(long ? t.testBanner : t.testBannerShort)}</p>`;
}

/** What the form shows after a decline: the reason, the method tried, the way back to the shop's Fail URL. */
export interface Declined {
  code: string | null;
  method: PayMethod;
  /** The decline's POST to the shop's Fail URL (signed fields), when the shop has one. */
  back: { url: string; fields: Record<string, string> } | null;
}

function footer(ctx: PageCtx): string {
  const t = MESSAGES[ctx.lang];
  // A sandbox deployment is a test instrument: its pages say so, whatever the bill.
  const profile = ctx.profile === 'production' ? '' : ` <span class="profile" data-testid="profile">${escapeHtml(t.sandboxProfile)}</span>`;
  return `<footer class="foot"><span>${LOCK} ${escapeHtml(t.secure)}</span>${profile}</footer>`;
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

function summary(lang: Lang, t: Messages, bill: PayableBill, q: Quote | undefined): string {
  const rows: string[] = [];
  if (q && bill.payerPaysCommission && q.commission.gt(0)) {
    rows.push(`<div class="row"><dt>${escapeHtml(t.amount)}</dt><dd>${money(lang, bill.amount, bill.currency)}</dd></div>`);
    rows.push(`<div class="row"><dt>${escapeHtml(t.commission)}</dt><dd>${money(lang, q.commission, bill.currency)}</dd></div>`);
  }
  if (q && bill.currency !== 'RUB') {
    rows.push(`<div class="row"><dt>${escapeHtml(t.rate)}</dt><dd>${money(lang, 1, bill.currency)} = ${money(lang, q.rate, 'RUB')}</dd></div>`);
    rows.push(`<div class="row strong"><dt>${escapeHtml(t.inRub)}</dt><dd data-testid="amount-rub">${money(lang, q.dueRub, 'RUB')}</dd></div>`);
  }
  const due = q ? q.dueInBillCurrency : bill.amount;
  return `<section class="summary" aria-labelledby="bill-title">
  <h1 id="bill-title">${escapeHtml(bill.name || t.title)}</h1>
  ${bill.description ? `<p class="desc">${escapeHtml(bill.description)}</p>` : ''}
  ${itemList(lang, t, bill)}
  <div class="total"><span class="muted small">${escapeHtml(t.toPay)}</span>
    <div class="sum" data-testid="amount">${sumHtml(lang, due, bill.currency)}</div>
  </div>
  ${rows.length ? `<dl class="rows">${rows.join('')}</dl>` : ''}
</section>`;
}

/** The cart lines sent at bill/create: name, quantity x price, line total. */
function itemList(lang: Lang, t: Messages, bill: PayableBill): string {
  if (bill.items.length === 0) return '';
  const lines = bill.items.map((it) => {
    const qty = new Decimal(it.quantity);
    const total = new Decimal(it.price).mul(qty);
    return `<li class="item"><span class="item-name">${escapeHtml(it.name)}<span class="muted small"> ${escapeHtml(qty.toFixed())} × ${escapeHtml(money(lang, it.price, bill.currency))}</span></span>` +
      `<span class="item-sum">${money(lang, total, bill.currency)}</span></li>`;
  }).join('');
  return `<ul class="items" aria-label="${escapeHtml(t.items)}" data-testid="items">${lines}</ul>`;
}

const PAYER_INPUTS = {
  email: { type: 'email', autocomplete: 'email', inputmode: 'email', max: 255 },
  phone: { type: 'tel', autocomplete: 'tel', inputmode: 'tel', max: 32 },
  name: { type: 'text', autocomplete: 'name', inputmode: 'text', max: 255 },
  comment: { type: 'text', autocomplete: 'off', inputmode: 'text', max: 1000 },
} as const;

/** The payer fields the bill asked for (required), and the e-mail it prefills. */
function payerBlock(ctx: PageCtx, s: FormState): string {
  const t = MESSAGES[ctx.lang];
  const { bill } = s;
  const fields = (['email', 'phone', 'name', 'comment'] as const)
    .filter((f) => bill.requestFields.includes(f) || (f === 'email' && bill.payerEmail !== null));
  if (fields.length === 0) return '';
  const label = { email: t.payerEmail, phone: t.payerPhone, name: t.payerName, comment: t.payerComment };
  const inputs = fields.map((f) => {
    const name = `payer_${f}`;
    const o = PAYER_INPUTS[f];
    const typed = s.payer?.[name];
    const value = typeof typed === 'string' ? typed : f === 'email' ? bill.payerEmail ?? '' : '';
    const required = bill.requestFields.includes(f) ? ' required' : '';
    const control = f === 'comment'
      ? `<textarea id="${name}" name="${name}" maxlength="${o.max}" rows="2"${required}${invalid(s.errors, name)}>${escapeHtml(value)}</textarea>`
      : `<input id="${name}" name="${name}" type="${o.type}" inputmode="${o.inputmode}" autocomplete="${o.autocomplete}" maxlength="${o.max}" value="${escapeHtml(value)}"${required}${invalid(s.errors, name)}>`;
    return `<div class="field"><label for="${name}">${escapeHtml(label[f])}</label>${control}${fieldError(ctx, s.errors, name)}</div>`;
  }).join('\n  ');
  return `<fieldset class="payer" data-testid="payer-fields"><legend class="muted small">${escapeHtml(t.payerDetails)}</legend>
  ${inputs}
</fieldset>`;
}

/** The bill's "back to shop" link (bill/create return_url). */
function backLink(t: Messages, bill: PayableBill): string {
  return bill.returnUrl ? `<a class="back" href="${escapeHtml(bill.returnUrl)}" rel="noopener" data-testid="return-url">← ${escapeHtml(t.backToShop)}</a>` : '';
}

function fieldError(ctx: PageCtx, errors: FormState['errors'], field: string): string {
  const code = errors?.[field];
  return code ? `<p class="err" id="${field}-err" role="alert">${escapeHtml(FIELD_MESSAGES[ctx.lang][code])}</p>` : '';
}

/** The decline's reason where the payer will act on it: under the card number, or atop the SBP panel. */
function declineReason(ctx: PageCtx, d: Declined | undefined, method: PayMethod, id: string): string {
  if (!d || d.method !== method) return '';
  return `<p class="err decline" id="${id}" role="alert" data-testid="decline-reason" data-code="${escapeHtml(d.code ?? '')}">${escapeHtml(declineText(ctx.lang, d.code))}</p>`;
}

/** The shop's way out after a decline: the Fail URL POST with the decline's signed fields, else the bill's return_url. */
function failBack(t: Messages, s: FormState): string {
  const back = s.declined?.back;
  if (!back) return backLink(t, s.bill);
  const inputs = Object.entries(back.fields).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('');
  return `<form class="fail-back" method="post" action="${escapeHtml(back.url)}">${inputs}<button class="btn secondary" type="submit" data-testid="fail-back">${escapeHtml(t.backToShopAfterFail)}</button></form>`;
}

const invalid = (errors: FormState['errors'], field: string): string =>
  errors?.[field] ? ` aria-invalid="true" aria-describedby="${field}-err"` : '';

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
  const e = s.errors;
  const d = s.declined;
  // A provider that was down says nothing about the card: the field is not marked wrong.
  const cardInvalid = invalid(e, 'card_number') || (d?.method === 'BANK_CARD' && !providerDown(d.code) ? ' aria-invalid="true" aria-describedby="card_number-decline"' : '');
  const payLabel = (m: PayMethod) => {
    const qq = s.quotes[m];
    return qq ? money(ctx.lang, qq.dueRub, 'RUB') : '';
  };

  // Saving the card needs the payer's own tick: unchecked by default (docs/adr/0074-saved-cards-and-recurring-charges.md).
  const saveConsent = s.bill.savePaymentMethod ? `<div class="field"><label class="check"><input type="checkbox" name="save_payment_method" value="1" data-testid="save-card">
    ${escapeHtml(t.saveCard.replace('{merchant}', s.bill.shopName))}</label></div>` : '';

  const cardPanel = s.hostedCard ? `<div class="panel" id="panel-card">
  ${declineReason(ctx, d, 'BANK_CARD', 'card-decline')}
  <p class="hint" data-testid="card-hosted">${escapeHtml(t.cardHosted)}</p>
  ${saveConsent}
  <button class="btn" type="submit" name="method" value="BANK_CARD" data-testid="pay-card">${escapeHtml(t.payCard)} ${payLabel('BANK_CARD')}</button>
</div>` : `<div class="panel" id="panel-card">
  <div class="field">
    <label for="card_number">${escapeHtml(t.cardNumber)}</label>
    <input id="card_number" name="card_number" type="text" inputmode="numeric" autocomplete="cc-number"
      placeholder="0000 0000 0000 0000" maxlength="23" pattern="[0-9 \\-]{12,23}" required${cardInvalid}>
    ${fieldError(ctx, e, 'card_number') || declineReason(ctx, d, 'BANK_CARD', 'card_number-decline')}
  </div>
  <div class="two">
    <div class="field">
      <label for="card_expiry">${escapeHtml(t.cardExpiry)}</label>
      <input id="card_expiry" name="card_expiry" type="text" inputmode="numeric" autocomplete="cc-exp"
        placeholder="MM/YY" maxlength="7" pattern="(0?[1-9]|1[0-2]) ?/ ?([0-9]{2}|[0-9]{4})" required${invalid(e, 'card_expiry')}>
      ${fieldError(ctx, e, 'card_expiry')}
    </div>
    <div class="field">
      <label for="card_cvc">${escapeHtml(t.cardCvc)}</label>
      <input id="card_cvc" name="card_cvc" type="password" inputmode="numeric" autocomplete="cc-csc"
        placeholder="•••" maxlength="3" pattern="[0-9]{3}" required${invalid(e, 'card_cvc')}>
      ${fieldError(ctx, e, 'card_cvc')}
    </div>
  </div>
  ${saveConsent}
  <button class="btn" type="submit" name="method" value="BANK_CARD" data-testid="pay-card">${escapeHtml(t.payCard)} ${payLabel('BANK_CARD')}</button>
  ${ctx.sandbox ? `<p class="hint small">${escapeHtml(t.sandboxCards)} ${escapeHtml(t.sandboxCardsMore)}</p>` : ''}
</div>`;

  const sbpPanel = `<div class="panel" id="panel-sbp">
  ${declineReason(ctx, d, 'SBP', 'sbp-decline')}
  ${s.quotes.SBP ? `<p class="sbp-due"><span class="muted">${escapeHtml(t.toPay)}:</span> <strong data-testid="sbp-due">${money(ctx.lang, s.quotes.SBP.dueRub, 'RUB')}</strong></p>` : ''}
  <p class="hint">${escapeHtml(t.sbpHint)}</p>
  <button class="btn" type="submit" name="method" value="SBP" formnovalidate data-testid="pay-sbp">${escapeHtml(t.sbpConfirm)}</button>
</div>`;

  let methodBlock: string;
  if (methods.length === 2) {
    methodBlock = `<fieldset class="methods">
  <legend class="muted small">${escapeHtml(t.method)}</legend>
  <input class="tab-input" type="radio" name="tab" id="tab-card" value="BANK_CARD"${selected === 'BANK_CARD' ? ' checked' : ''}>
  <input class="tab-input" type="radio" name="tab" id="tab-sbp" value="SBP"${selected === 'SBP' ? ' checked' : ''}>
  <div class="tabs"><label for="tab-card">${escapeHtml(t.card)}</label><label for="tab-sbp">${escapeHtml(t.sbp)}</label></div>
  ${cardPanel}
  ${sbpPanel}
</fieldset>`;
  } else {
    methodBlock = `<div class="methods single"><p class="muted small">${escapeHtml(t.method)}: <strong>${escapeHtml(methods[0] === 'SBP' ? t.sbp : t.card)}</strong></p>
  ${methods[0] === 'SBP' ? sbpPanel : cardPanel}</div>`;
  }

  const body = `${testBanner(ctx, bill, true)}
${merchantHeader(t, bill.shopName, langLink(ctx, `/pay/${bill.id}`))}
${summary(ctx.lang, t, bill, q)}
<form class="card" method="post" action="/pay/${escapeHtml(bill.id)}" autocomplete="on">
  <input type="hidden" name="_csrf" value="${escapeHtml(s.csrf)}">
  <input type="hidden" name="lang" value="${ctx.lang}">
  ${d && providerDown(d.code) ? `<p class="notice" role="status" data-testid="method-down">${escapeHtml(t.methodDownTitle)}</p>`
    : d ? `<p class="notice bad" data-testid="declined">${escapeHtml(d.method === 'SBP' ? t.declinedSbpTitle : t.declinedTitle)}</p>`
    : s.lastFailed ? `<p class="notice" role="status">${escapeHtml(t.lastFailed)}</p>` : ''}
  ${e && Object.keys(e).length ? `<p class="notice bad" role="alert">${escapeHtml(t.formErrors)}</p>` : ''}
  ${e?.method ? `<p class="err" role="alert">${escapeHtml(FIELD_MESSAGES[ctx.lang][e.method])}</p>` : ''}
  ${payerBlock(ctx, s)}
  ${methodBlock}
</form>
${failBack(t, s)}
${footer(ctx)}`;
  return layout(ctx, `${t.title} — ${bill.shopName}`, body, { script: PAGE_JS });
}

const ICONS = {
  ok: '<svg viewBox="0 0 48 48" width="56" height="56" aria-hidden="true"><circle cx="24" cy="24" r="22" fill="#e7f6ee"/><path d="M14 25l7 7 13-15" fill="none" stroke="#1a8d55" stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/></svg>',
  bad: '<svg viewBox="0 0 48 48" width="56" height="56" aria-hidden="true"><circle cx="24" cy="24" r="22" fill="#fdecec"/><path d="M17 17l14 14M31 17L17 31" fill="none" stroke="#c73636" stroke-width="4" stroke-linecap="round"/></svg>',
  info: '<svg viewBox="0 0 48 48" width="56" height="56" aria-hidden="true"><circle cx="24" cy="24" r="22" fill="#eef1fb"/><path d="M24 22v12M24 14v1" fill="none" stroke="#3b55c9" stroke-width="4" stroke-linecap="round"/></svg>',
  wait: '<svg viewBox="0 0 48 48" width="56" height="56" aria-hidden="true"><circle cx="24" cy="24" r="22" fill="#fff5e5"/><path d="M24 13v11l7 5" fill="none" stroke="#c07a00" stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/></svg>',
} as const;

/** A page that only says something: unknown, inactive or paid bill, limits, expired form. */
export function infoPage(ctx: PageCtx, o: { title: string; text: string; icon: keyof typeof ICONS; shopName?: string; link?: { href: string; label: string }; testId: string }): string {
  const t = MESSAGES[ctx.lang];
  const body = `${o.shopName ? merchantHeader(t, o.shopName, '') : ''}
<section class="card status" data-testid="${escapeHtml(o.testId)}">
  ${ICONS[o.icon]}
  <h1>${escapeHtml(o.title)}</h1>
  <p class="muted">${escapeHtml(o.text)}</p>
  ${o.link ? `<a class="btn secondary" href="${escapeHtml(o.link.href)}">${escapeHtml(o.link.label)}</a>` : ''}
</section>`;
  return layout(ctx, o.title, body);
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
  const failed = out.status === 'FAIL';
  const held = out.hold === 'HELD';
  const details = `<dl class="rows">
    <div class="row"><dt>${escapeHtml(t.paymentId)}</dt><dd class="mono">${escapeHtml(out.paymentId)}</dd></div>
    ${failed || held ? '' : `<div class="row"><dt>${escapeHtml(t.paidAmount)}</dt><dd>${money(ctx.lang, out.amountReceivedRub, 'RUB')}</dd></div>`}
  </dl>`;
  const head = `${testBanner(ctx, bill)}
${merchantHeader(t, bill.shopName, '')}
<section class="card status" data-testid="result" data-status="${escapeHtml(out.status)}"${out.hold ? ` data-hold="${escapeHtml(out.hold)}"` : ''}>
  ${failed ? (providerDown(out.failureReason) ? ICONS.info : ICONS.bad) : ICONS.ok}
  <h1>${escapeHtml(resultTitle(t, out.status, out.failureReason, out.hold))}</h1>
  ${failed ? `<p class="muted">${escapeHtml(providerDown(out.failureReason) ? t.methodDownText : t.failText)}</p>` : ''}
  ${held ? `<p class="muted">${escapeHtml(t.heldText)}</p>` : ''}
  ${details}`;
  if (out.redirect.url) {
    const inputs = Object.entries(out.redirect.fields)
      .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('\n    ');
    const body = `${head}
  <form id="back" method="post" action="${escapeHtml(out.redirect.url)}">
    ${inputs}
    <p class="muted small">${escapeHtml(t.redirecting)}</p>
    <button class="btn" type="submit">${escapeHtml(t.returnToShop)}</button>
  </form>
</section>`;
    return layout(ctx, resultTitle(t, out.status, out.failureReason, out.hold), body, { script: "document.getElementById('back').submit();" });
  }
  const body = `${head}
  ${failed ? `<a class="btn" href="/pay/${escapeHtml(bill.id)}">${escapeHtml(t.tryAgain)}</a>` : ''}
</section>
${backLink(t, bill)}`;
  return layout(ctx, resultTitle(t, out.status, out.failureReason, out.hold), body);
}

/**
 * A hold the shop cancelled: what happened to the payer's money, in the payer's words; no decline
 * wording and no page that sends them off to the Fail URL by itself. A new payment is offered
 * only when the bill takes one (`payAgain`).
 */
export function cancelledPage(ctx: PageCtx, bill: PayableBill, out: PayOutcome, payAgain: boolean): string {
  const t = MESSAGES[ctx.lang];
  const body = `${testBanner(ctx, bill)}
${merchantHeader(t, bill.shopName, '')}
<section class="card status" data-testid="result" data-status="${escapeHtml(out.status)}" data-hold="CANCELLED_BY_SHOP">
  ${ICONS.info}
  <h1>${escapeHtml(t.cancelledTitle)}</h1>
  <p class="muted">${escapeHtml(t.cancelledText)}</p>
  <dl class="rows"><div class="row"><dt>${escapeHtml(t.paymentId)}</dt><dd class="mono">${escapeHtml(out.paymentId)}</dd></div></dl>
  ${payAgain ? `<a class="btn secondary" href="/pay/${escapeHtml(bill.id)}" data-testid="pay-again">${escapeHtml(t.payAgain)}</a>` : ''}
</section>
${backLink(t, bill)}`;
  return layout(ctx, t.cancelledTitle, body);
}

/** The QR page (`link_url`): a QR code of the payment page. */
export function qrPage(ctx: PageCtx, bill: PayableBill, pageUrl: string, qrSvg: string, q: Quote | undefined): string {
  const t = MESSAGES[ctx.lang];
  const due = q ? q.dueInBillCurrency : bill.amount;
  const body = `${testBanner(ctx, bill)}
${merchantHeader(t, bill.shopName, langLink(ctx, `/pay/${bill.id}/qr`))}
<section class="card qr-page">
  <h1>${escapeHtml(bill.name || t.qrTitle)}</h1>
  ${bill.description ? `<p class="desc">${escapeHtml(bill.description)}</p>` : ''}
  <div class="sum">${sumHtml(ctx.lang, due, bill.currency)}</div>
  <figure class="qr-box big" data-testid="qr">${qrSvg}<figcaption class="muted small">${escapeHtml(t.scanToPay)}</figcaption></figure>
  <a class="btn" href="${escapeHtml(pageUrl)}">${escapeHtml(t.openPage)}</a>
</section>
${footer(ctx)}`;
  return layout(ctx, `${t.qrTitle} — ${bill.shopName}`, body);
}

/** Polls the payment's JSON state and reloads the page once it is final (the page works without it: it refreshes itself). */
const POLL_JS = `(function(){var u=location.pathname+location.search;function tick(){fetch(u,{headers:{accept:'application/json'},cache:'no-store',credentials:'same-origin'})
.then(function(r){return r.json()}).then(function(j){if(j.status&&(j.status!=='PROCESS'||j.hold)){location.reload();return}setTimeout(tick,2000)})
.catch(function(){setTimeout(tick,4000)})}setTimeout(tick,1500)})();`;

/**
 * The waiting page of a payment in PROCESS: what the payer must do (the bank's 3-D Secure page,
 * the provider's page, an SBP QR code with bank-app links), polling until the payment is final.
 * With nothing for the payer to do, the outcome is unknown to us (the provider did not answer in
 * time, or has not said yet): the page says it is being checked, how long that may take
 * (`checkMinutes`: the longest wait between two questions to the provider) and what happens next.
 */
/** The sandbox bank's own pages (relative links) speak the payer's language: the page's, carried along. */
function bankUrl(ctx: PageCtx, url: string): string {
  return url.startsWith('/sandbox/') && !url.includes('?') ? `${url}?lang=${ctx.lang}` : url;
}

export function waitingPage(ctx: PageCtx, bill: PayableBill, out: PayOutcome, qrSvg: string | null, checkMinutes: number): string {
  const t = MESSAGES[ctx.lang];
  const a = out.action;
  const title = a?.type === '3ds' ? t.act3dsTitle : a?.type === 'redirect' ? t.actRedirectTitle : a?.type === 'sbp_qr' ? t.actSbpTitle : t.checkTitle;
  let act = a ? '' : `<p class="muted" data-testid="checking">${escapeHtml(t.checkText)}</p>
  <p class="muted small">${escapeHtml(t.checkTime.replace('{n}', String(checkMinutes)))}</p>`;
  if (a?.type === '3ds' || a?.type === 'redirect') {
    act = `<p class="muted">${escapeHtml(a.type === '3ds' ? t.act3dsText : t.actRedirectText)}</p>
  <a class="btn" href="${escapeHtml(bankUrl(ctx, a.url))}" data-testid="action-link">${escapeHtml(a.type === '3ds' ? t.act3dsButton : t.actRedirectButton)}</a>`;
  } else if (a?.type === 'sbp_qr') {
    const apps = a.links.map((l) => `<a class="btn secondary" href="${escapeHtml(bankUrl(ctx, l.url))}" data-testid="bank-app">${escapeHtml(l.name)}</a>`).join('\n    ');
    act = `<p class="muted">${escapeHtml(t.actSbpText)}</p>
  ${qrSvg ? `<figure class="qr-box" data-testid="sbp-qr">${qrSvg}</figure>` : ''}
  <p class="sbp-due"><span class="muted">${escapeHtml(t.toPay)}:</span> <strong data-testid="sbp-due">${money(ctx.lang, out.amountRub, 'RUB')}</strong></p>
  <nav class="apps" aria-label="${escapeHtml(t.actSbpApps)}"><p class="muted small">${escapeHtml(t.actSbpApps)}</p>
    ${apps}
  </nav>`;
  }
  const body = `${testBanner(ctx, bill)}
${merchantHeader(t, bill.shopName, '')}
<section class="card status" data-testid="waiting" data-status="PROCESS" data-action="${escapeHtml(a?.type ?? '')}">
  ${ICONS.wait}
  <h1>${escapeHtml(title)}</h1>
  ${act}
  ${a ? `<p class="muted small" role="status">${escapeHtml(t.waitText)}</p>` : ''}
  <dl class="rows"><div class="row"><dt>${escapeHtml(t.paymentId)}</dt><dd class="mono">${escapeHtml(out.paymentId)}</dd></div></dl>
  <noscript><meta http-equiv="refresh" content="5"></noscript>
</section>
${footer(ctx)}`;
  return layout(ctx, title, body, { script: POLL_JS });
}
