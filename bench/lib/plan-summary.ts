/**
 * What an executed plan (EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) or auto_explain's JSON) says
 * about a statement's cost in terms that do not depend on the machine's load: the shared buffers
 * it touched (hit + read) and the scans it made, with how many partitions of each table it
 * visited.
 */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Subplans Removed'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

export interface PlanSummary {
  /** Shared buffers touched by the execution (hit + read), all nodes and data-modifying CTEs. */
  buffers: number;
  /** Scans, partitions of one table folded together: "Index Scan payments_p*_pkey x18". */
  nodes: string[];
  /** Most partitions of each partitioned table one scan of it visited, e.g. { payments: 18 }. */
  partitions: Record<string, number>;
}

const PARTITION = /_(p\d{4}_\d{2}|default)(?=$|_)/;

/** `payments_p2026_11` -> `payments` (a partition's parent by the service's naming). */
export const parentOf = (rel: string): string => rel.replace(PARTITION, '');

const hits = (n: PlanNode) => (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0);

export function summarizePlan(root: PlanNode): PlanSummary {
  let buffers = 0;
  const counts = new Map<string, number>();
  const partitions: Record<string, number> = {};
  const perScan = new Map<string, Set<string>>();
  const walk = (n: PlanNode) => {
    // A node's counts include its children's; a data-modifying CTE nobody reads runs after the
    // top node and is counted nowhere above it. So sum what each node adds over its children.
    buffers += Math.max(0, hits(n) - (n.Plans ?? []).reduce((a, k) => a + hits(k), 0));
    const rel = n['Relation Name'];
    const target = n['Index Name'] ?? rel;
    // A scan run-time pruning skipped ("never executed", 0 loops) visited nothing.
    if (target && rel && n['Actual Loops'] !== 0 && /Scan|Insert|Update|Delete|ModifyTable/.test(n['Node Type'])) {
      const key = `${n['Node Type']} ${target.replace(PARTITION, '_p*')}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (PARTITION.test(rel) && /Scan/.test(n['Node Type'])) {
        const seen = (perScan.get(key) ?? new Set<string>()).add(rel);
        perScan.set(key, seen);
        partitions[parentOf(rel)] = Math.max(partitions[parentOf(rel)] ?? 0, seen.size);
      }
    }
    for (const k of n.Plans ?? []) walk(k);
  };
  walk(root);
  return { buffers, nodes: [...counts].map(([k, v]) => (v > 1 ? `${k} x${v}` : k)), partitions };
}
