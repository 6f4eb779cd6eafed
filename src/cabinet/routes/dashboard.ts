import type { FastifyInstance } from 'fastify';
import { Decimal } from 'decimal.js';
import { formatDateTime } from '../../lib/time.js';
import { merchantIdOf, render, cabinetTz } from '../context.js';
import { turnoverSvg, type DayPoint } from '../chart.js';
import { listFilters } from '../paging.js';
import { csvFormat, exportFilename, sendCsv } from '../export.js';
import { parseAccount } from '../../domain/ledger/accounts.js';
import { formatMoney } from '../../lib/money-format.js';


export default async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const tz = cabinetTz(req);
    const [balances, held, latest, byDay] = await Promise.all([
      app.services.merchants.balances(merchantId),
      // Held by two-stage payments: shown beside the balances, never counted in them.
      app.services.merchants.held(merchantId),
      app.services.merchantLists.latestPayments(merchantId, 10),
      // Money received per day (service time zone) over the last 30 days, in the payer's currency (RUB).
      app.services.paymentReads.turnoverByDay(merchantId, tz, 30),
    ]);
    const points: DayPoint[] = [];
    for (let i = 29; i >= 0; i--) {
      const day = formatDateTime(new Date(Date.now() - i * 86400000), tz).slice(0, 10);
      points.push({ day, total: byDay.get(day) ?? new Decimal(0) });
    }
    const total = points.reduce((s, p) => s.add(p.total), new Decimal(0));
    const { t } = req.cabinet;
    const chart = turnoverSvg(points, t('dash.chart_label', { total: formatMoney(total, req.cabinet.lang, 'RUB') }), 'RUB', req.cabinet.lang);
    return render(req, reply, 'dashboard', { nav: 'dashboard', balances, held: new Map(held.map((x) => [x.currency, x.amount])), latest, chart, total, f: listFilters(req, []) });
  });

  /**
   * The balance statement: every ledger movement of the merchant's accounts in the date range,
   * one line per leg that touches a merchant bucket (available, locked, hold), signed from the
   * merchant's side (+ credited, − debited), oldest first.
   */
  app.get('/statement.csv', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const f = listFilters(req, []);
    const { t } = req.cabinet;
    const c = csvFormat(req.cabinet.lang, cabinetTz(req));
    async function* rows() {
      for await (const tr of app.services.merchantLists.transfersForExport(merchantId, f.createdAt)) {
        for (const e of tr.entries) {
          for (const [account, sign] of [[e.creditAccount, 1], [e.debitAccount, -1]] as const) {
            const a = parseAccount(account);
            if (a.merchantId !== merchantId) continue;
            const amount = sign > 0 ? e.amount : e.amount.neg();
            yield [c.date(tr.createdAt), tr.id, t(`ledger.${tr.kind}`), tr.refType, tr.refId, t(`ledger.bucket.${a.kind}`), c.num(amount), e.currency, tr.memo ?? ''];
          }
        }
      }
    }
    return sendCsv(req, reply, exportFilename('statement', f), [
      t('common.date'), t('ledger.transfer'), t('ledger.kind'), t('ledger.ref_type'), t('ledger.ref_id'), t('ledger.bucket'),
      t('common.amount'), t('common.currency'), t('ledger.memo'),
    ], rows());
  });
}
