import type { FastifyInstance } from 'fastify';
import { Decimal } from 'decimal.js';
import { MONEY_RECEIVED_STATUSES } from '../../domain/statuses.js';
import { formatDateTime } from '../../lib/time.js';
import { merchantIdOf, render } from '../context.js';
import { turnoverSvg, type DayPoint } from '../chart.js';
import { PAYMENT_INCLUDE } from './payments.js';
import { listFilters } from '../paging.js';
import { batches, csvFormat, exportFilename, exportPage, sendCsv } from '../export.js';
import { parseAccount } from '../../domain/ledger/accounts.js';
import { formatMoney } from '../../lib/money-format.js';


export default async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const tz = app.config.tz;
    const [balances, latest, turnover] = await Promise.all([
      app.db.prisma.balance.findMany({ where: { merchantId }, orderBy: { currency: 'asc' } }),
      app.db.prisma.payment.findMany({ where: { merchantId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 10, include: PAYMENT_INCLUDE }),
      // Money received per day (service time zone) over the last 30 days, in the payer's currency (RUB).
      app.db.pool.query<{ day: string; total: string }>(
        `SELECT to_char(COALESCE(finished_at, created_at) AT TIME ZONE $2, 'YYYY-MM-DD') AS day, SUM(amount_received)::text AS total
           FROM payments
          WHERE merchant_id = $1 AND status = ANY($3::text[]::"PaymentStatus"[])
            AND COALESCE(finished_at, created_at) >= now() - interval '30 days'
          GROUP BY 1`,
        [merchantId, tz, MONEY_RECEIVED_STATUSES],
      ),
    ]);
    const byDay = new Map(turnover.rows.map((r) => [r.day, new Decimal(r.total)]));
    const points: DayPoint[] = [];
    for (let i = 29; i >= 0; i--) {
      const day = formatDateTime(new Date(Date.now() - i * 86400000), tz).slice(0, 10);
      points.push({ day, total: byDay.get(day) ?? new Decimal(0) });
    }
    const total = points.reduce((s, p) => s.add(p.total), new Decimal(0));
    const { t } = req.cabinet;
    const chart = turnoverSvg(points, t('dash.chart_label', { total: formatMoney(total, req.cabinet.lang, 'RUB') }), 'RUB');
    return render(req, reply, 'dashboard', { nav: 'dashboard', balances, latest, chart, total, f: listFilters(req, []) });
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
    const c = csvFormat(req.cabinet.lang, app.config.tz);
    const where = { merchantId, ...(f.createdAt ? { createdAt: f.createdAt } : {}) };
    async function* rows() {
      for await (const tr of batches((after: { id: string } | undefined) => app.db.prisma.ledgerTransfer.findMany({
        where, include: { entries: { orderBy: { leg: 'asc' } } }, ...exportPage(after),
      }))) {
        for (const e of tr.entries) {
          for (const [account, sign] of [[e.creditAccount, 1], [e.debitAccount, -1]] as const) {
            const a = parseAccount(account);
            if (a.merchantId !== merchantId) continue;
            const amount = sign > 0 ? e.amount : e.amount.neg();
            yield [c.date(tr.createdAt), tr.id, t(`ledger.${tr.kind}`), tr.refType, tr.refId, t(`ledger.bucket.${a.kind}`), c.num(amount, 8), e.currency, tr.memo ?? ''];
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
