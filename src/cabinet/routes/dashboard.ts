import type { FastifyInstance } from 'fastify';
import { Decimal } from 'decimal.js';
import { MONEY_RECEIVED_STATUSES } from '../../domain/statuses.js';
import { formatDateTime } from '../../lib/time.js';
import { merchantIdOf, render } from '../context.js';
import { turnoverSvg, type DayPoint } from '../chart.js';


export default async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const merchantId = merchantIdOf(req);
    const tz = app.config.tz;
    const [balances, latest, turnover] = await Promise.all([
      app.db.prisma.balance.findMany({ where: { merchantId }, orderBy: { currency: 'asc' } }),
      app.db.prisma.payment.findMany({ where: { merchantId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 10 }),
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
    const chart = turnoverSvg(points, t('dash.chart_label', { total: `${total.toFixed(2)} RUB` }), 'RUB');
    return render(req, reply, 'dashboard', { nav: 'dashboard', balances, latest, chart, total });
  });
}
