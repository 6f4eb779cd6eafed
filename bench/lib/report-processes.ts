/** The bench report's table of service throughput by API process count (BENCH_PROCESSES). */
import type { LoadResult } from './load.js';
import type { CeilingResults, Controls } from '../scenarios/ceilings.js';
import type { ServiceResults, ServiceScenario } from '../scenarios/service.js';
import { CEILING_OF } from './report.js';

const SCENARIOS: Record<ServiceScenario, string> = {
  bill_create: 'POST bill/create', bill_status: 'GET bill/status', payment: 'card payment POST /pay/{id}',
  payout: 'POST payout/personal/create', merchant_balance: 'GET merchant/balance',
};

const runsOf = (x: unknown): Record<string, LoadResult> | null =>
  x && typeof x === 'object' && !('unavailable' in x) ? x as Record<string, LoadResult> : null;

/**
 * Markdown lines: one row per scenario and connection count, one column per process count; with
 * the bare handlers of the same process count, each cell adds the service's share of its ceiling.
 */
export function processesTable(
  byProcesses: Record<string, ServiceResults | { unavailable: string }>, connections: number[],
  ceilingsByProcesses: Record<string, CeilingResults | { unavailable: string }> = {},
): string[] {
  const counts = Object.keys(byProcesses);
  const L = [
    `Throughput by API processes (WEB_CONCURRENCY; node's cluster shares the port; 2xx req/s, p99 ms in brackets, then the share of the bare handler run with the same process count; each count on a fresh database):`,
    '',
    `| what | conns | ${counts.map((n) => `${n} process${n === '1' ? '' : 'es'}`).join(' | ')} |`,
    `|---|---:|${counts.map(() => '---:|').join('')}`,
  ];
  for (const [name, label] of Object.entries(SCENARIOS) as Array<[ServiceScenario, string]>) {
    for (const c of connections) {
      const cells = counts.map((n) => {
        const svc = byProcesses[n]!;
        if ('unavailable' in svc && typeof svc.unavailable === 'string') return `unavailable: ${svc.unavailable.slice(0, 60).replace(/\|/g, '/')}`;
        const x = runsOf((svc as ServiceResults)[name])?.[`c${c}`];
        const ceil = ceilingsByProcesses[n];
        const bare = ceil && !('unavailable' in ceil) ? runsOf(ceil[CEILING_OF[name]])?.[`c${c}`]?.rps : undefined;
        const share = x && bare ? ` ${Math.round((x.rps / bare) * 100)}%` : '';
        return x ? `${x.rps} (${x.p99_ms})${share}${x.non_2xx + x.errors > 0 ? ` ${x.non_2xx + x.errors} failed` : ''}` : 'unavailable';
      });
      L.push(`| ${label} | ${c} | ${cells.join(' | ')} |`);
    }
  }
  L.push('', 'With more than one process the RSS figures above are the first run\'s; `npm run bench:prod` gives the RSS of every process.', '');
  return L;
}

/** CPU per request as `npm run bench:cost` measured it (bench/results/cost.json), by scenario. */
export interface CostFigures { at: string; scenarios: Partial<Record<ServiceScenario, { service_cpu_ms: number; db_backends_cpu_ms: number; statements: number }>> }

type SizingInput = {
  service: ServiceResults | { unavailable: string };
  service_by_processes?: Record<string, ServiceResults | { unavailable: string }>;
  ceilings: CeilingResults | { unavailable: string };
  controls?: Controls | { unavailable: string };
  cost?: CostFigures | null;
};

const best = (x: unknown): number | null => {
  const runs = runsOf(x);
  return runs ? Math.max(...Object.values(runs).map((r) => r.rps)) : null;
};
const ms = (x: number | null | undefined) => (x === null || x === undefined ? '–' : x < 10 ? x.toFixed(1) : x.toFixed(0));

/**
 * Markdown lines: the figures a deployer sizes with, one row per scenario: its own maximum with
 * one and with two API processes, its latency at 50% and 80% of that maximum (open loop) beside
 * the bare handler's at the same rate, and the CPU one request costs the service and
 * PostgreSQL (bench:cost).
 */
export function sizingTable(r: SizingInput): string[] {
  if ('unavailable' in r.service) return [];
  const svc = r.service;
  const two = r.service_by_processes?.['2'];
  const L = [
    'Sizing: what one scenario can do and what it costs (maximum = best 2xx req/s of the closed loops; latency at a share of that maximum, open loop, p50 / p99 ms; the bare handler it is compared with, at the same rate, in brackets; CPU ms per request: service + PostgreSQL backends, from `npm run bench:cost`):',
    '',
    '| scenario | max, 1 process | max, 2 processes | at 50%: p50 / p99 (bare p99) | at 80%: p50 / p99 (bare p99) | 2 processes at 50%: p99 | CPU ms / request |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [name, label] of Object.entries(SCENARIOS) as Array<[ServiceScenario, string]>) {
    const at = (p: string) => svc.open_loop?.[name]?.[p];
    const bare = (p: string) => (r.controls && !('unavailable' in r.controls) ? r.controls[name]?.[p]?.p99_ms : undefined);
    const cell = (p: string) => { const x = at(p); return x ? `${ms(x.p50_ms)} / ${ms(x.p99_ms)} (${ms(bare(p))})` : '–'; };
    const twoAt = two && !('unavailable' in two) ? (two as ServiceResults).open_loop?.[name]?.p50 : undefined;
    const c = r.cost?.scenarios[name];
    L.push(`| ${label} | ${best(svc[name]) ?? '–'} | ${two && !('unavailable' in two) ? best((two as ServiceResults)[name]) ?? '–' : '–'} | ${cell('p50')} | ${cell('p80')} | ${ms(twoAt?.p99_ms)} | ${c ? `${c.service_cpu_ms.toFixed(2)} + ${c.db_backends_cpu_ms.toFixed(2)}` : '–'} |`);
  }
  L.push('', r.cost ? `CPU per request from \`npm run bench:cost\` run at ${r.cost.at}.` : 'CPU per request: run `npm run bench:cost` first (bench/results/cost.json).', '');
  return L;
}
