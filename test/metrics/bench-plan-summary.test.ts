import { describe, expect, it } from 'vitest';
import { summarizePlan, type PlanNode } from '../../bench/lib/plan-summary.js';

const scan = (rel: string, index: string, hit: number): PlanNode => ({ 'Node Type': 'Index Scan', 'Relation Name': rel, 'Index Name': index, 'Shared Hit Blocks': hit });

describe('growth bench plan summary (buffers and scans, independent of load)', () => {
  it('counts every buffer once: a parent includes its children, a data-modifying CTE run after the top node adds its own', () => {
    const plan: PlanNode = {
      'Node Type': 'Result', 'Shared Hit Blocks': 10,
      Plans: [
        { 'Node Type': 'ModifyTable', 'Relation Name': 'payments', 'Shared Hit Blocks': 8, Plans: [scan('payments_p2026_10', 'payments_p2026_10_pkey', 3)] },
        // an INSERT nobody reads: executed after the top node, so not inside its 10
        { 'Node Type': 'ModifyTable', 'Relation Name': 'outbox_events', 'Shared Hit Blocks': 5, 'Shared Read Blocks': 1 },
      ],
    };
    // 10 - (8 + 6) < 0 -> 0 at the top; 8 - 3 = 5; 3; 6
    expect(summarizePlan(plan).buffers).toBe(14);
  });

  it('folds the partitions of one table into one scan with a count, so a statement that visits every month shows it', () => {
    const plan: PlanNode = {
      'Node Type': 'Append', Plans: ['2026_09', '2026_10', '2026_11'].map((m) => scan(`payments_p${m}`, `payments_p${m}_pkey`, 2)),
    };
    const s = summarizePlan(plan);
    expect(s.nodes).toEqual(['Index Scan payments_p*_pkey x3']);
    expect(s.partitions).toEqual({ payments: 3 });
    expect(s.buffers).toBe(6);
  });

  it('does not count a partition that run-time pruning skipped (never executed) as visited', () => {
    const plan: PlanNode = {
      'Node Type': 'Append', Plans: [
        { ...scan('payments_p2026_10', 'payments_p2026_10_bill_id_created_at_idx', 0), 'Actual Loops': 0 },
        { ...scan('payments_p2026_11', 'payments_p2026_11_bill_id_created_at_idx', 3), 'Actual Loops': 1 },
      ],
    };
    expect(summarizePlan(plan)).toEqual({ buffers: 3, nodes: ['Index Scan payments_p*_bill_id_created_at_idx'], partitions: { payments: 1 } });
  });
});
