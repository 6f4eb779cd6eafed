/** The bench report's table of service throughput by API process count (BENCH_PROCESSES, issue 18 item 4). */
import type { LoadResult } from './load.js';
import type { CeilingResults } from '../scenarios/ceilings.js';
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
