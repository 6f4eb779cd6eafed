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
});

afterAll(async () => {
  await t.close();
});

/**
 * Rows of outbox_events (every month's partition) this transaction read so far: tuples fetched
 * by index scans and read by sequential scans, wherever they ran (a function's statements too).
 */
async function outboxRowsRead(c: pg.PoolClient): Promise<number> {
  const r = await c.query<{ n: string }>(
    `SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::text AS n
       FROM pg_stat_xact_user_tables WHERE relname LIKE 'outbox_events%'`);
  return Number(r.rows[0]!.n);
}

describe('the outbox claim reads each merchant\'s head', () => {
  it('a claim with 5,000 of one merchant due reads a few dozen rows of outbox_events, not the backlog, and lets the other merchant in', async () => {
    const d = new OutboxDeliverer({ config: t.config, db: t.db, log: pino({ level: 'silent' }), services: t.app.services });
    const c = await t.db.pool.connect();
    try {
      await c.query('BEGIN');
      const before = await outboxRowsRead(c);
      const claimed = await d.claim(16, c, 8, new Map(), { upTo: 16 });
      const read = await outboxRowsRead(c) - before;
      await c.query('ROLLBACK');
      // The cap (8) holds while the other merchant has an event due: nothing is lent.
      expect(claimed.filter((e) => e.merchantId === small.merchantId)).toHaveLength(1);
      expect(claimed.filter((e) => e.merchantId === big.merchantId)).toHaveLength(8);
      // The heads (16 at most per merchant), the steps to each merchant, the picked rows locked
      // and updated, the targets read: well under 200. Ranking every due event reads all 5,000.
      expect(read, `rows of outbox_events read: ${read}`).toBeLessThan(200);
    } finally {
      c.release();
    }
  });
});
