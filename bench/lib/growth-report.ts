/** The growth bench's report: buffers and plans first (the verdict), latency after (noisy). */
import type { LoadResult } from './load.js';
import type { ShapeCost } from './growth-shapes.js';
import type { RequestCost } from './statement-probe.js';

export type Endpoint = 'bill_status' | 'bill_search' | 'payment' | 'payout_create';

export interface SizeResult {
  rows: number; ledger_entries: number; ledger_partitions: number; seed_s: number; db_gb: number;
  cost: Record<Endpoint, RequestCost>;
  latency: Record<Endpoint, LoadResult & { load_avg: number }>;
  shapes: ShapeCost[];
}

export interface GrowthRun {
  started_at: string; sizes: number[]; merchants: number; connections: number; duration_s: number; probes: number;
  skipped: string[]; results: SizeResult[];
}

const LABEL: Record<Endpoint, string> = {
  bill_status: 'bill/status', bill_search: 'bill/search', payment: 'payment (POST /pay)', payout_create: 'payout create',
};

const fmt = (n: number) => n.toLocaleString('en');
const plan = (nodes: string[], parts: Record<string, number>) =>
  `${nodes.join(', ') || '(no table scan)'}${Object.keys(parts).length ? ` (partitions visited: ${Object.entries(parts).map(([t, k]) => `${t} ${k}`).join(', ')})` : ''}`;

export function growthMarkdown(r: GrowthRun): string {
  const R = r.results;
  const cols = R.map((x) => `${fmt(x.rows)}`).join(' | ');
  const line = '|---|' + R.map(() => '---:|').join('');
  const L: string[] = [`### Growth ${r.started_at}`, ''];
  L.push(`Existing rows at each size N: N bills, N payments (each with its ledger transfer and entry: N ledger entries), N payouts and ` +
    `N payout requests, over ${r.merchants} merchants and the last 365 days (the ledger entries and payments in ${R.at(-1)?.ledger_partitions ?? '?'} monthly partitions); ` +
    `the measured merchant owns 1/${r.merchants} of them.`, '');
  for (const s of r.skipped) L.push(`**Not run**: ${s}.`, '');
  L.push('| size (rows) | ledger entries | database | seeded in |', '|---:|---:|---:|---:|');
  for (const x of R) L.push(`| ${fmt(x.rows)} | ${fmt(x.ledger_entries)} | ${x.db_gb} GB | ${x.seed_s} s |`);
  L.push('', `**Shared buffers per request** (hit + read, every statement the service ran for one request, from auto_explain; ` +
    `median of ${r.probes} sequential requests). Independent of the machine's load: this is the verdict.`, '');
  L.push(`| endpoint | ${cols} |`, line);
  for (const e of Object.keys(LABEL) as Endpoint[]) L.push(`| ${LABEL[e]} | ${R.map((x) => x.cost[e].buffers_per_request).join(' | ')} |`);
  for (const e of Object.keys(LABEL) as Endpoint[]) {
    L.push('', `${LABEL[e]}: buffers per execution of each statement, and its plan at the largest size`, '');
    L.push(`| statement | runs per request | ${cols} | plan at ${fmt(R.at(-1)?.rows ?? 0)} |`, `|---|---:|${R.map(() => '---:|').join('')}---|`);
    for (const s of R.at(-1)?.cost[e].statements ?? []) {
      const at = R.map((x) => x.cost[e].statements.find((y) => y.statement === s.statement)?.buffers ?? '-');
      L.push(`| \`${s.statement.replace(/\|/g, '\\|')}...\` | ${s.executions_per_request} | ${at.join(' | ')} | ${plan(s.nodes, s.partitions)} |`);
    }
  }
  L.push('', 'Fixed query shapes, EXPLAIN (ANALYZE, BUFFERS): buffers (ms)', '');
  L.push(`| query shape | ${cols} | plan at ${fmt(R.at(-1)?.rows ?? 0)} |`, `${line}---|`);
  for (let i = 0; i < (R[0]?.shapes.length ?? 0); i++) {
    const last = R.at(-1)!.shapes[i]!;
    L.push(`| ${last.query} | ${R.map((x) => `${x.shapes[i]!.buffers} (${x.shapes[i]!.execution_ms})`).join(' | ')} | ${plan(last.nodes, last.partitions)} |`);
  }
  L.push('', `Latency, **noisy** (autocannon, ${r.connections} connections, ${r.duration_s} s per figure; the 1-minute load average ` +
    `of the machine at the start of each figure beside it): req/s, p50 / p99 ms, load average`, '');
  L.push(`| endpoint | ${cols} |`, line);
  for (const e of Object.keys(LABEL) as Endpoint[]) {
    L.push(`| ${LABEL[e]} | ${R.map((x) => { const l = x.latency[e]; return `${l.rps}, ${l.p50_ms} / ${l.p99_ms}, la ${l.load_avg}${l.non_2xx ? ` (${l.non_2xx} non-2xx)` : ''}`; }).join(' | ')} |`);
  }
  L.push('');
  return L.join('\n');
}
