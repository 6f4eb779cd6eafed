/**
 * The growth bench's fixed query shapes, EXPLAINed (ANALYZE, BUFFERS) at each size beside the
 * statements the service really ran (statement-probe.ts): they name what each path relies on
 * (a key lookup, a keyset page, a partition's index) even when the service's statements change.
 */
import { withClient } from './pg.js';
import { summarizePlan, type PlanNode } from './plan-summary.js';

export interface ShapeCost { query: string; execution_ms: number; buffers: number; nodes: string[]; partitions: Record<string, number> }

const billId = (n: number) => `G${n.toString(16).padStart(9, '0')}`;

/** `merchantId` owns the seeded rows n with n % merchants === 0 (growth-seed.ts). */
export async function explainShapes(url: string, merchantId: string, merchants: number): Promise<ShapeCost[]> {
  const own = merchants * 7;
  const createdAt = await withClient(url, async (c) =>
    (await c.query<{ t: Date }>(`SELECT created_at AS t FROM payment_keys WHERE id = $1`, [`GY${own}`])).rows[0]?.t ?? new Date());
  const shapes: Array<[string, string, unknown[]]> = [
    ['bill by id and merchant (bill/status)', `SELECT * FROM bills WHERE id = $1 AND merchant_id = $2`, [billId(own), merchantId]],
    ['bills of a merchant in a window, one page (bill/search)',
      `SELECT * FROM bills WHERE merchant_id = $1 AND created_at >= now() - interval '30 days' AND created_at < now() ORDER BY created_at DESC, id DESC LIMIT 16`, [merchantId]],
    ['payout order_id replay lookup (payout create)', `SELECT id, request_hash FROM payout_requests WHERE merchant_id = $1 AND order_id = $2`, [merchantId, `seed-${own}`]],
    ['payout limits: the running totals (payout create)',
      `SELECT period, amount FROM payout_usage WHERE merchant_id = $1 AND ((period = 'D' AND period_start = current_date) OR (period = 'M' AND period_start = date_trunc('month', current_date)::date))`, [merchantId]],
    ['the latest payment of a bill (payment)',
      `SELECT id, status FROM payments WHERE bill_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, [billId(own)]],
    ['a payment by id and merchant (payment/status)', `SELECT * FROM payments WHERE id = $1 AND merchant_id = $2`, [`GY${own}`, merchantId]],
    // The two parts of the payment's finishing statement, with the partition key the service
    // knows (its own creation time): what they cost once pruned (docs/performance.md "Growth").
    ['a payment by id and creation time (pruned to its month)', `SELECT * FROM payments WHERE id = $1 AND created_at = $2`, [`GY${own}`, createdAt]],
    ['newer payments of its bill, bounded below (run-time pruning)',
      `SELECT p.id FROM payments p WHERE p.id = $1 AND p.created_at = $2
          AND NOT EXISTS (SELECT 1 FROM payments q WHERE q.bill_id = p.bill_id AND q.created_at >= p.created_at AND (q.created_at, q.id) > (p.created_at, p.id))`,
      [`GY${own}`, createdAt]],
    ['a transfer applied once (ledger post)', `SELECT 1 FROM ledger_transfers WHERE id = $1`, [`PAYMENT_CREDIT:GY${own}`]],
    ['the entries of a transfer (ledger)', `SELECT * FROM ledger_entries WHERE transfer_id = $1`, [`PAYMENT_CREDIT:GY${own}`]],
  ];
  return withClient(url, async (c) => {
    const out: ShapeCost[] = [];
    for (const [query, sql, params] of shapes) {
      const r = await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
      const plan = r.rows[0]!['QUERY PLAN'][0]!;
      out.push({ query, execution_ms: Math.round(plan['Execution Time'] * 1000) / 1000, ...summarizePlan(plan.Plan) });
    }
    return out;
  });
}
