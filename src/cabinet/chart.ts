import { Decimal } from 'decimal.js';
import { formatMoney } from '../lib/money-format.js';
import type { Lang } from '../lib/i18n.js';
import { escapeHtml } from '../lib/html.js';

export interface DayPoint { day: string; total: Decimal }

/**
 * The 30-day turnover as an inline SVG bar chart, rendered on the server: no script, no CDN,
 * nothing the CSP has to allow. Each bar carries a <title> (hover/long-press) and the whole
 * chart a text label for screen readers.
 */
export function turnoverSvg(points: DayPoint[], label: string, currency: string, lang: Lang): string {
  const W = 720; const H = 200; const padL = 56; const padB = 24; const padT = 10;
  const max = points.reduce((m, p) => Decimal.max(m, p.total), new Decimal(0));
  const scaleMax = max.gt(0) ? niceCeil(max) : new Decimal(1);
  const plotW = W - padL - 8; const plotH = H - padB - padT;
  const bw = plotW / points.length;
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const v = scaleMax.mul(i).div(4);
    const y = padT + plotH - (plotH * i) / 4;
    parts.push(`<line x1="${padL}" x2="${W - 8}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" class="grid"/>`);
    parts.push(`<text x="${padL - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" class="axis">${escapeHtml(short(v, lang))}</text>`);
  }
  points.forEach((p, i) => {
    const h = p.total.gt(0) ? Math.max(1, p.total.div(scaleMax).mul(plotH).toNumber()) : 0;
    const x = padL + i * bw + bw * 0.15;
    const y = padT + plotH - h;
    parts.push(`<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(bw * 0.7).toFixed(1)}" height="${h.toFixed(1)}" class="bar" rx="2"><title>${escapeHtml(p.day)}: ${escapeHtml(formatMoney(p.total, lang, currency))}</title></rect>`);
    if (i % 5 === 0 || i === points.length - 1) {
      parts.push(`<text x="${(padL + i * bw + bw / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle" class="axis">${escapeHtml(p.day.slice(5))}</text>`);
    }
  });
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeHtml(label)}">${parts.join('')}</svg>`;
}

function niceCeil(d: Decimal): Decimal {
  const exp = Math.floor(Math.log10(d.toNumber()));
  const base = new Decimal(10).pow(exp);
  for (const m of [1, 2, 2.5, 5, 10]) if (base.mul(m).gte(d)) return base.mul(m);
  return base.mul(10);
}

/** An axis label in the reader's language ("1,3 тыс.", "1.3K"): formatted from the decimal's text, never a float. */
function short(v: Decimal, lang: Lang): string {
  const compact = new Intl.NumberFormat(lang === 'ru' ? 'ru-RU' : 'en-US', { notation: 'compact', maximumFractionDigits: 1 });
  return compact.format(v.toDecimalPlaces(2).toString() as Intl.StringNumericLiteral);
}
