import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import pino from 'pino';
import { OutboxDeliverer } from '../../src/outbox/deliverer.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

/**
 * Issue 12 (the outbox drain): a claim ranks each merchant's oldest due events, not every due
 * event. One merchant's backlog of 5,000 made every claim read and sort all 5,000 before the
 * claim stepped from merchant to merchant through the pending index.
 */
let t: TestApp;
let big: MerchantFixture;
let small: MerchantFixture;
const BACKLOG = 5_000;

beforeAll(async () => {
  t = await setupTestApp();
  big = await createMerchant(t);
  small = await createMerchant(t);
  const add = (merchantId: string, n: number, tag: string) => t.db.pool.query(
    `INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, next_attempt_at)
     SELECT $1, 'PAYMENT_POSTBACK', $2 || g, 'http://127.0.0.1:9/result', '{"fields":{}}', now() - interval '1 minute' + g * interval '1 millisecond'
       FROM generate_series(1, $3::int) g`, [merchantId, tag, n]);
  await add(big.merchantId, BACKLOG, 'big-');
  // The other merchant's event is the newest due: only the cap lets it in ahead of the backlog.
  await t.db.pool.query(`SELECT pg_sleep(0.01)`);
  await add(small.merchantId, 1, 'small-');
  // Statistics as a running service has them (autovacuum analyzes a table this size).
  await t.db.pool.query('VACUUM ANALYZE outbox_events');
}, 60_000);

afterAll(async () => {
  await t.close();
});

interface PlanNode { 'Relation Name'?: string; 'Actual Rows'?: number; 'Actual Loops'?: number; 'Rows Removed by Filter'?: number; 'Rows Removed by Index Recheck'?: number; Plans?: PlanNode[] }

/** Rows the plan's scans of outbox_events produced or filtered out, over every loop. */
function outboxRowsRead(n: PlanNode): number {
  const own = n['Relation Name']?.startsWith('outbox_events')
    ? ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) * (n['Actual Loops'] ?? 1)
    : 0;
  return own + (n.Plans ?? []).reduce((s, c) => s + outboxRowsRead(c), 0);
}

describe('the outbox claim reads each merchant\'s head', () => {
  it('a claim with 5,000 of one merchant due reads a few dozen rows of outbox_events, not the backlog, and lets the other merchant in', async () => {
    const d = new OutboxDeliverer({ config: t.config, db: t.db, log: pino({ level: 'silent' }), services: t.app.services });
    const c = await t.db.pool.connect();
    try {
      let stmt: { text: string; values: unknown[] } | null = null;
      const q = { query: (text: string, values: unknown[]) => { stmt = { text, values }; return c.query(text, values); } } as unknown as pg.PoolClient;
      await c.query('BEGIN');
      const claimed = await d.claim(16, q, 8, new Map(), { upTo: 16 });
      await c.query('ROLLBACK');
      // The cap (8) holds while the other merchant has an event due: nothing is lent.
      expect(claimed.filter((e) => e.merchantId === small.merchantId)).toHaveLength(1);
      expect(claimed.filter((e) => e.merchantId === big.merchantId)).toHaveLength(8);

      const s = stmt as { text: string; values: unknown[] } | null;
      await c.query('BEGIN');
      const r = await c.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${s!.text}`, s!.values);
      await c.query('ROLLBACK');
      const read = outboxRowsRead(r.rows[0]!['QUERY PLAN'][0].Plan);
      // The heads (16 at most per merchant), the step to each merchant, the picked rows locked
      // and updated: well under 200. Ranking every due event reads all 5,000.
      expect(read, `rows of outbox_events read: ${read}`).toBeLessThan(200);
    } finally {
      c.release();
    }
  });
});
