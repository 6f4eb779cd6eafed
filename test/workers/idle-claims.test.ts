import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';

/**
 * An idle worker's poll is one cheap indexed statement: with many finished rows and rows in
 * PROCESS waiting for a later check, the refund, payout and reconciliation claims read a partial
 * index of the rows that can be due and touch a few pages, not every waiting row.
 */
let t: TestApp;
const FINISHED = 20_000;
const WAITING = 200;

beforeAll(async () => {
  t = await setupTestApp();
  // Bulk rows without their merchants, payments and triggers: only the claims' plans matter here.
  const c = await t.db.pool.connect();
  try {
    await c.query(`SET session_replication_role = replica`);
    await c.query(`INSERT INTO refunds (id, merchant_id, payment_id, status, amount, currency, process_after, created_at, updated_at, next_check_at, sent_at)
      SELECT 'r'||g, 'm', 'p'||g, CASE WHEN g <= $2 THEN 'PROCESS' ELSE 'SUCCESS' END::"RefundStatus", 1, 'RUB', now() - interval '1 day', now(), now(),
             CASE WHEN g <= $2 THEN now() + interval '1 hour' END, now() FROM generate_series(1, $1::int) g`, [FINISHED, WAITING]);
    await c.query(`INSERT INTO payouts (id, merchant_id, request_id, kind, status, account_type, account_masked, amount, currency, process_after, created_at, updated_at, next_check_at, sent_at)
      SELECT 'po'||g, 'm', 'rq'||g, (enum_range(NULL::"PayoutKind"))[1], CASE WHEN g <= $2 THEN 'PROCESS' ELSE 'SUCCESS' END::"PayoutStatus", 'CARD', '4111',
             1, 'RUB', now() - interval '1 day', now(), now(), CASE WHEN g <= $2 THEN now() + interval '1 hour' END, now() FROM generate_series(1, $1::int) g`, [FINISHED, WAITING]);
    await c.query(`INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, bill_currency, account_currency, created_at, updated_at, next_check_at)
      SELECT 'p'||g, 'b'||g, 'm', 's', CASE WHEN g <= $2 THEN 'PROCESS' ELSE 'SUCCESS' END::"PaymentStatus", 'SBP', 1, 'RUB', 'RUB', now(), now(),
             CASE WHEN g <= $2 THEN now() + interval '1 hour' END FROM generate_series(1, $1::int) g`, [FINISHED, WAITING]);
    await c.query(`SET session_replication_role = DEFAULT`);
    await c.query('ANALYZE refunds; ANALYZE payouts; ANALYZE payments');
  } finally {
    c.release();
  }
});
afterAll(async () => { await t.close(); });

interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number; Plans?: PlanNode[] }
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** Runs the worker's claim once (nothing is due), capturing its statement, then EXPLAINs it. */
async function claimPlan(claim: () => Promise<unknown[]>): Promise<{ top: PlanNode; all: PlanNode[] }> {
  const pool = t.db.pool;
  const seen: { text: string; values: unknown[] }[] = [];
  const original = pool.query.bind(pool);
  (pool as { query: unknown }).query = (text: string, values: unknown[]) => { seen.push({ text, values }); return original(text, values); };
  try {
    expect(await claim()).toEqual([]);
  } finally {
    (pool as { query: unknown }).query = original;
  }
  expect(seen.length).toBe(1);
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const r = await c.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${seen[0]!.text}`, seen[0]!.values);
    await c.query('ROLLBACK');
    const top = r.rows[0]!['QUERY PLAN'][0].Plan;
    return { top, all: nodes(top) };
  } finally {
    c.release();
  }
}

const buffers = (n: PlanNode) => (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0);
const scansOf = (all: PlanNode[], rel: RegExp) => all.filter((n) => n['Node Type'].includes('Scan') && n['Relation Name'] && rel.test(n['Relation Name']));
/** How each scan of a table reads it: the due rows through the partial index; the claimed ones by primary key. */
const how = (all: PlanNode[], rel: RegExp) => [...new Set(scansOf(all, rel).map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim()))].sort();

describe('an idle poll is one cheap indexed claim', () => {
  it('refunds: the claim reads refunds_due_idx (a partial index of NEW and PROCESS), a few pages, no row of the 200 waiting', async () => {
    const { top, all } = await claimPlan(() => t.app.services.operations.refund.claim(8));
    expect(how(all, /^refunds$/)).toEqual(['Index Scan refunds_due_idx', 'Index Scan refunds_pkey']);
    expect(buffers(top)).toBeLessThanOrEqual(5);
  });

  it('payouts: the claim reads payouts_due_idx (a partial index of PROCESS), a few pages', async () => {
    const { top, all } = await claimPlan(() => t.app.services.operations.payout.claim(8));
    expect(how(all, /^payouts$/)).toEqual(['Index Scan payouts_due_idx', 'Index Scan payouts_pkey']);
    expect(buffers(top)).toBeLessThanOrEqual(5);
  });

  it('payments: the reconciliation claim reads the partial index of PROCESS payments by next check, never a scan of a month of payments', async () => {
    const { top, all } = await claimPlan(() => t.app.services.operations.payment.claim(8));
    const withRows = (await t.db.pool.query<{ rel: string }>(`SELECT tableoid::regclass::text AS rel FROM payments GROUP BY 1`)).rows.map((r) => r.rel);
    expect(withRows.length).toBe(1);
    const month = withRows[0]!;
    // The due rows through the partial index (payments_reconcile_idx on each month); the claimed ones by primary key.
    expect(how(all, new RegExp(`^${month}$`))).toEqual([`Index Scan ${month}_next_check_at_idx`, `Index Scan ${month}_pkey`]);
    expect(buffers(top)).toBeLessThanOrEqual(10);
  });
});
