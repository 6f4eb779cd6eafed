import type { PayOutcome } from '../domain/payment/payment.service.js';
import { formatDateTime } from '../lib/time.js';
import type { Lang } from '../lib/i18n.js';
import { pageView, type PageCtx } from './render.js';

/**
 * The customer's last page after money was received, when the shop has no
 * Success URL to send the payer to: what was paid for (the order's name, its number), the amount
 * and date, the shop, a way back to the shop (the bill's return_url, else the shop's site: the
 * origin of its Result URL), and a printable receipt (print CSS; a Print button). In the page's
 * language. Money as people read it, from the Decimal (lib/money-format.ts).
 */
const TEXT = {
  en: {
    title: 'Payment received', receipt: 'Receipt', shop: 'Shop', order: 'Order', orderNo: 'Order number',
    amount: 'Amount paid', date: 'Date', payment: 'Payment', print: 'Print receipt', back: 'Back to the shop',
    underpaid: 'Part of the amount is received; the shop will tell you what to do next.',
    overpaid: 'More than the amount was received; the shop will settle the difference.',
    keep: 'Keep this receipt: the payment number identifies your payment to the shop.',
  },
  ru: {
    title: 'Оплата получена', receipt: 'Квитанция', shop: 'Магазин', order: 'Заказ', orderNo: 'Номер заказа',
    amount: 'Оплачено', date: 'Дата', payment: 'Платёж', print: 'Распечатать квитанцию', back: 'Вернуться в магазин',
    underpaid: 'Получена часть суммы; магазин сообщит, что делать дальше.',
    overpaid: 'Получено больше суммы счёта; магазин вернёт разницу.',
    keep: 'Сохраните квитанцию: по номеру платежа магазин найдёт вашу оплату.',
  },
} satisfies Record<Lang, Record<string, string>>;

const RECEIPT_CSS = `
.receipt dl{display:grid;grid-template-columns:max-content 1fr;gap:6px 16px;margin:16px 0}
.receipt dt{color:#5f6b7a}.receipt dd{margin:0;text-align:right;word-break:break-word}
.receipt .total{font-size:22px;font-weight:700}
.receipt .actions{display:flex;gap:10px;flex-wrap:wrap;margin-top:16px}
@media print{
  body{background:#fff}
  .no-print{display:none!important}
  .card{box-shadow:none;border:1px solid #999}
}`;

/** The shop's way back: the bill's return_url, else the origin of the shop's Result URL. */
export function backToShopUrl(bill: { returnUrl: string | null; resultUrl: string | null }): string | null {
  if (bill.returnUrl) return bill.returnUrl;
  if (!bill.resultUrl) return null;
  try {
    const u = new URL(bill.resultUrl);
    return u.protocol === 'https:' || u.protocol === 'http:' ? `${u.origin}/` : null;
  } catch { return null; }
}

export function receiptPage(ctx: PageCtx, out: PayOutcome, o: { tz: string; at: Date }): string {
  const t = TEXT[ctx.lang];
  const bill = out.bill;
  return pageView('receipt', ctx, {
    r: t, bill, out, receiptCss: RECEIPT_CSS,
    what: bill.name || bill.description || t.order,
    back: backToShopUrl(bill),
    note: out.status === 'UNDERPAID' ? t.underpaid : out.status === 'OVERPAID' ? t.overpaid : '',
    date: formatDateTime(o.at, o.tz),
  });
}
