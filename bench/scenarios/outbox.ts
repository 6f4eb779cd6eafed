import { createDb, withPgTx } from '../../src/db/client.js';
import { loadConfig } from '../../src/config.js';
import { createServices } from '../../src/services.js';
import { enqueueEvent, type PaymentPostbackFields } from '../../src/outbox/events.js';
import { withClient } from '../lib/pg.js';
import { sampleRss, startService } from '../lib/proc.js';
import type { BenchPlan } from '../lib/plan.js';
import { serviceEnv } from './service.js';

export interface OutboxResult {
  events: number;
  delivered: number;
  dead: number;
  /** Steady drain rate: deliveries between the first and the last delivered_at. */
  deliveries_per_s: number;
  /** From starting the worker process (boot included) to the last delivery. */
  wall_s: number;
  attempts: number;
  worker_peak_rss_mb: number | null;
}

/**
 * 10,000 PENDING payment postbacks enqueued with the service's own enqueueEvent, pointing at a
 * loopback receiver; then the worker process (`npm run worker`: src/entry/worker-main.ts) is started
 * and timed until every event is DELIVERED.
 */
export async function runOutbox(plan: BenchPlan, url: string, receiverUrl: string): Promise<OutboxResult | { unavailable: string }> {
  const env = serviceEnv(url);
  const config = loadConfig({ ...env, PORT: '3000' });
  const db = createDb(url, { max: 2 });
  try {
    const { merchant } = await createServices(config, db).merchants.create({ name: 'Outbox bench', email: `outbox-${Date.now()}@bench.test` });
    const n = plan.outboxEvents;
    await withPgTx(db.pool, async (c) => {
      for (let i = 0; i < n; i++) {
        const fields: PaymentPostbackFields = {
          InvId: `order-${i}`, OutSum: '100.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB',
          TrsId: `bench-pay-${i}`, Status: 'SUCCESS', custom: '',
        };
        await enqueueEvent(c, { merchantId: merchant.id, kind: 'PAYMENT_POSTBACK', aggregateId: fields.TrsId, url: `${receiverUrl}/result`, fields });
      }
    });
  } finally {
    await db.close();
  }

  const started = Date.now();
  const worker = await startService('worker', 'worker', env, { readyPath: null });
  const rss = sampleRss(worker.pid);
  const deadline = started + (plan.quick ? 60_000 : 180_000);
  let last = { d: 0, dead: 0, span: 0, attempts: 0 };
  let peak: number | null = null;
  try {
    for (;;) {
      last = await withClient(url, async (c) => {
        const r = await c.query<{ d: number; dead: number; span: number | null; attempts: number }>(
          `SELECT count(*) FILTER (WHERE status = 'DELIVERED')::int AS d,
                  count(*) FILTER (WHERE status = 'DEAD')::int AS dead,
                  EXTRACT(EPOCH FROM max(delivered_at) - min(delivered_at))::float8 AS span,
                  COALESCE(sum(attempts), 0)::int AS attempts
             FROM outbox_events`,
        );
        const row = r.rows[0]!;
        return { d: row.d, dead: row.dead, span: row.span ?? 0, attempts: row.attempts };
      });
      if (last.d + last.dead >= plan.outboxEvents) break;
      if (Date.now() > deadline) break;
      if (last.d === 0 && Date.now() - started > 30_000) {
        return { unavailable: `the worker delivered nothing in 30 s (is the outbox worker started by startWorkers?) ${worker.stderrTail().slice(-300)}` };
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    const polled = rss.stop();
    peak = worker.peakRssMb() ?? polled;
    await worker.stop();
  }
  const wall = (Date.now() - started) / 1000;
  return {
    events: plan.outboxEvents,
    delivered: last.d,
    dead: last.dead,
    deliveries_per_s: last.span > 0 ? Math.round((last.d - 1) / last.span) : 0,
    wall_s: Math.round(wall * 10) / 10,
    attempts: last.attempts,
    worker_peak_rss_mb: peak,
  };
}
