/**
 * What one outbox claim costs for a given backlog: a bench database of its own per shape, the
 * events inserted pending, then `claim()` of 32 as the worker makes it (cap 32, lent up to 64)
 * run many times inside a transaction that is rolled back (so every run sees the same backlog),
 * and once under EXPLAIN (ANALYZE, BUFFERS). Buffers and plan nodes do not depend on the
 * machine's load; the milliseconds (median) do.
 *
 * Shapes (CLAIM_SHAPES, comma-separated, default all): `one` 10,000 due of one merchant;
 * `fifty` 50 merchants x 200 due; `retries` one merchant with 5,000 pending retries not yet due
 * and one other merchant with one due event; `idle` 1,000 merchants with one retry not yet due
 * each; `crowd` the same 1,000 and one other merchant with one due event. Every shape also has CLAIM_HISTORY delivered events (default 50,000) over its merchants
 * and months. CLAIM_RUNS runs per shape (default 200); CLAIM_MONTHS_BACK months of partitions
 * made before the current one (default 11: a year kept, as in production). CLAIM_KEEP=1 keeps
 * each shape's database (bench_outbox_claim_<CLAIM_TAG><shape>); CLAIM_REUSE=1 measures on it
 * again as it is, without seeding (paired runs of two trees on databases seeded once).
 */
import pg from 'pg';
import pino from 'pino';
import { createDb, type Db } from '../src/db/client.js';
import { loadConfig } from '../src/config.js';
import { createServices, type Services } from '../src/services.js';
import { OutboxDeliverer } from '../src/outbox/deliverer.js';
import { createBenchDatabase, dropBenchDatabase, urlFor } from './lib/pg.js';
import { summarizePlan, type PlanNode } from './lib/plan-summary.js';
import { serviceEnv } from './scenarios/service.js';

interface Shape { merchants: number; due: number; notDue: number; extra?: { merchants: number; due: number } }
const SHAPES: Record<string, Shape> = {
  one: { merchants: 1, due: 10_000, notDue: 0 },
  fifty: { merchants: 50, due: 200, notDue: 0 },
  retries: { merchants: 1, due: 0, notDue: 5_000, extra: { merchants: 1, due: 1 } },
  idle: { merchants: 1_000, due: 0, notDue: 1 },
  crowd: { merchants: 1_000, due: 0, notDue: 1, extra: { merchants: 1, due: 1 } },
};
const runs = Number(process.env.CLAIM_RUNS ?? 200);
const history = Number(process.env.CLAIM_HISTORY ?? 50_000);
const monthsBack = Number(process.env.CLAIM_MONTHS_BACK ?? 11);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const round2 = (x: number) => Math.round(x * 100) / 100;

async function seed(db: Db, services: Services, shape: Shape): Promise<void> {
  await db.pool.query(`SELECT create_month_partition('outbox_events', (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => g))::date)
                         FROM generate_series(1, $1::int) g`, [monthsBack]);
  const add = async (merchants: number, due: number, notDue: number, tag: string) => {
    for (let i = 0; i < merchants; i++) {
      const { merchant } = await services.merchants.create({ name: `Claim ${tag} ${i}`, email: `claim-${tag}-${i}-${Date.now()}@bench.test` });
      // Due a second in the past (timestamptz(3) rounds now() up); retries an hour ahead.
      await db.pool.query(
        `INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, next_attempt_at, attempts)
         SELECT $1, 'PAYMENT_POSTBACK', $2 || g, 'http://127.0.0.1:9/result', '{"fields":{}}',
                CASE WHEN g <= $3 THEN now() - interval '1 second' ELSE now() + interval '1 hour' END,
                CASE WHEN g <= $3 THEN 0 ELSE 3 END
           FROM generate_series(1, $3::int + $4::int) g`, [merchant.id, `${tag}-${i}-`, due, notDue]);
    }
  };
  await add(shape.merchants, shape.due, shape.notDue, 'a');
  if (shape.extra) await add(shape.extra.merchants, shape.extra.due, 0, 'b');
  // A year of delivered history over the same merchants, as a service that has run has: the
  // planner's statistics see mostly finished rows, as they would in production.
  await db.pool.query(
    `INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, status, attempts, next_attempt_at, created_at, delivered_at)
     SELECT m.ids[1 + g % cardinality(m.ids)], 'PAYMENT_POSTBACK', 'h-' || g, 'http://127.0.0.1:9/result', '{"fields":{}}', 'DELIVERED', 1,
            now() - make_interval(days => g % ($2::int * 30 + 1)), now() - make_interval(days => g % ($2::int * 30 + 1)), now()
       FROM (SELECT array_agg(id) AS ids FROM merchants) m, generate_series(1, $1::int) g`, [history, monthsBack]);
  await db.pool.query('VACUUM ANALYZE outbox_events');
}

for (const shapeName of (process.env.CLAIM_SHAPES ?? Object.keys(SHAPES).join(',')).split(',')) {
  const shape = SHAPES[shapeName];
  if (!shape) throw new Error(`unknown shape ${shapeName}`);
  const keep = Boolean(process.env.CLAIM_KEEP || process.env.CLAIM_REUSE);
  const name = keep ? `bench_outbox_claim_${process.env.CLAIM_TAG ?? ''}${shapeName}` : `bench_outbox_claim_${process.pid}`;
  const url = process.env.CLAIM_REUSE ? urlFor(name) : await createBenchDatabase(name);
  const config = loadConfig({ ...serviceEnv(url), PORT: '3000' });
  const db = createDb(url, { max: 2 });
  try {
    const services = createServices(config, db);
    if (!process.env.CLAIM_REUSE) await seed(db, services, shape);
    const d = new OutboxDeliverer({ config, db, log: pino({ level: 'silent' }), services });
    const c = await db.pool.connect();
    try {
      let stmt: { text: string; values: unknown[] } | null = null;
      // The claim names its statement (a config object) or passes text and values.
      const q = {
        query: (t: string | { text: string; values: unknown[] }, v?: unknown[]) => {
          stmt = typeof t === 'string' ? { text: t, values: v ?? [] } : { text: t.text, values: t.values };
          return c.query(t as string, v);
        },
      } as unknown as pg.PoolClient;
      const ms: number[] = [];
      let claimed = 0;
      for (let i = 0; i < runs; i++) {
        await c.query('BEGIN');
        const t0 = process.hrtime.bigint();
        claimed = (await d.claim(32, q, 32, new Map(), { upTo: 64 })).length;
        ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
        await c.query('ROLLBACK');
      }
      const s = stmt as { text: string; values: unknown[] } | null;
      await c.query('BEGIN');
      const r = await c.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number; 'Planning Time': number }] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${s!.text}`, s!.values);
      await c.query('ROLLBACK');
      const plan = r.rows[0]!['QUERY PLAN'][0];
      const sum = summarizePlan(plan.Plan);
      // The top node's count: every CTE the statement reads ran under it (summarizePlan's sum
      // counts a CTE both where it runs and where it is read).
      const top = (plan.Plan['Shared Hit Blocks'] ?? 0) + (plan.Plan['Shared Read Blocks'] ?? 0);
      process.stdout.write(`${JSON.stringify({
        shape: shapeName, claimed, median_ms: round2(median(ms)), min_ms: round2(Math.min(...ms)),
        planning_ms: plan['Planning Time'], execution_ms: plan['Execution Time'], buffers: top, partitions: sum.partitions, nodes: sum.nodes,
      })}\n`);
      if (process.env.CLAIM_PLAN) process.stdout.write(`${JSON.stringify(plan.Plan, null, 1)}\n`);
    } finally {
      c.release();
    }
  } finally {
    await db.close();
    if (!keep) await dropBenchDatabase(name);
  }
}
