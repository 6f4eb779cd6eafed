import type { LoadResult } from './load.js';
import type { CeilingResults, Controls, ControlRun, PgbenchResult } from '../scenarios/ceilings.js';
import type { ServiceResults, ServiceScenario } from '../scenarios/service.js';
import type { OutboxResult } from '../scenarios/outbox.js';
import type { MachineInfo } from './machine.js';
import { processesTable, sizingTable, type CostFigures } from './report-processes.js';
import type { OpenLoopResult } from './open-loop.js';

export interface Target {
  name: string; target: string; value: number | null; met: boolean | null;
  /** The bare handler's own figure under the same measurement, where one was taken (the open loops' control). */
  bare?: number | null;
}

export interface BenchResults {
  started_at: string;
  finished_at: string;
  quick: boolean;
  duration_s: number;
  connections: number[];
  /** Merchants the requests spread over (one balance row each). */
  tenants: number;
  machine: MachineInfo;
  ceilings: CeilingResults | { unavailable: string };
  service: ServiceResults | { unavailable: string };
  /** Each service open loop's control: its bare handler at the same rate, keyed by scenario, then `p50` / `p80`. */
  controls?: Controls | { unavailable: string };
  outbox: OutboxResult | { unavailable: string };
  /** Service 2xx req/s over its ceiling's req/s, the worse of the connection counts. */
  ratios: Record<'bill_create' | 'bill_status' | 'payment' | 'payout' | 'merchant_balance' | 'bill_create_vs_pgbench', number | null>;
  /** What ran: the compiled service (dist/, as production) or the TypeScript sources through tsx. */
  runtime?: 'compiled' | 'tsx';
  ratios_by_connections: Record<string, Record<string, number | null>>;
  targets: Target[];
  /** The service scenarios by API process count (BENCH_PROCESSES), when more than one was run. */
  service_by_processes?: Record<string, ServiceResults | { unavailable: string }>;
  /** The bare handlers by process count, each run with the same WEB_CONCURRENCY as the service. */
  ceilings_by_processes?: Record<string, CeilingResults | { unavailable: string }>;
  /** The latest `npm run bench:cost` figures (bench/results/cost.json) when there are any: CPU per request. */
  cost?: CostFigures | null;
}

/** Which bare handler each service figure is compared with. */
export const CEILING_OF: Record<'bill_create' | 'bill_status' | 'payment' | 'payout' | 'merchant_balance', 'insert' | 'select' | 'tx'> = {
  bill_create: 'insert',
  bill_status: 'select',
  payment: 'tx',
  payout: 'tx',
  merchant_balance: 'select',
};

/** The rates the controls run at: each service open loop's scenario, share and rate, with its bare handler. */
export function controlRates(service: BenchResults['service']): { scenario: string; mode: 'insert' | 'select' | 'tx'; percent: number; rate: number }[] {
  if ('unavailable' in service) return [];
  return Object.entries(service.open_loop ?? {}).flatMap(([scenario, runs]) =>
    Object.values(runs ?? {}).map((x) => ({ scenario, mode: CEILING_OF[scenario as keyof typeof CEILING_OF], percent: x.percent, rate: x.rate })));
}

/** The control of one service open loop (its bare handler at the same rate), when it ran. */
export function controlOf(r: { controls?: BenchResults['controls'] }, scenario: string, key: string): ControlRun | undefined {
  return r.controls && !('unavailable' in r.controls) ? r.controls[scenario]?.[key] : undefined;
}

const isRuns = (x: unknown): x is Record<string, LoadResult> => !!x && typeof x === 'object' && !('unavailable' in x);

export function computeRatios(ceilings: BenchResults['ceilings'], service: BenchResults['service'], connections: number[]) {
  const ratios = { bill_create: null, bill_status: null, payment: null, payout: null, merchant_balance: null, bill_create_vs_pgbench: null } as BenchResults['ratios'];
  const byConn: BenchResults['ratios_by_connections'] = {};
  for (const [name, ceil] of Object.entries(CEILING_OF) as Array<[keyof typeof CEILING_OF, 'insert' | 'select' | 'tx']>) {
    byConn[name] = {};
    const s = 'unavailable' in service ? undefined : service[name];
    const c = 'unavailable' in ceilings ? undefined : ceilings[ceil];
    for (const n of connections) {
      const k = `c${n}`;
      const sv = isRuns(s) ? s[k]?.rps : undefined;
      const cv = isRuns(c) ? c[k]?.rps : undefined;
      byConn[name]![k] = sv !== undefined && cv ? Math.round((sv / cv) * 100) / 100 : null;
    }
    const vals = Object.values(byConn[name]!).filter((v): v is number => v !== null);
    ratios[name] = vals.length === connections.length ? Math.min(...vals) : null;
  }
  // bill/create against PostgreSQL alone doing the same insert (pgbench, prepared statements).
  const pgb = 'unavailable' in ceilings || 'unavailable' in ceilings.pgbench_insert ? null : ceilings.pgbench_insert as Record<string, PgbenchResult>;
  const bc = 'unavailable' in service ? undefined : service.bill_create;
  byConn.bill_create_vs_pgbench = {};
  for (const n of connections) {
    const sv = isRuns(bc) ? bc[`c${n}`]?.rps : undefined;
    const pv = pgb?.[`c${n}`]?.tps;
    byConn.bill_create_vs_pgbench[`c${n}`] = sv !== undefined && pv ? Math.round((sv / pv) * 100) / 100 : null;
  }
  const pv = Object.values(byConn.bill_create_vs_pgbench).filter((v): v is number => v !== null);
  ratios.bill_create_vs_pgbench = pv.length === connections.length ? Math.min(...pv) : null;
  return { ratios, byConn };
}

/** A run is judged only on a quiet machine: a 1-minute load average below 1 when it started. */
export const QUIET_LOAD = 1;
export const isQuiet = (m: MachineInfo): boolean => m.load_avg_at_start < QUIET_LOAD;

/**
 * The targets of docs/performance.md. On a busy machine every target is
 * reported with its value and `met: null` ("not judged"): another load slows the bare handlers
 * and the service unequally, so neither a pass nor a fail would mean anything.
 */
export function computeTargets(r: Omit<BenchResults, 'targets'>): Target[] {
  const t: Target[] = [];
  const judged = isQuiet(r.machine);
  const push = (name: string, target: string, value: number | null, ok: (v: number) => boolean) =>
    t.push({ name, target, value, met: value === null || !judged ? null : ok(value) });
  const atLeast = (name: string, target: number, value: number | null) => push(name, `>= ${target}`, value, (v) => v >= target);
  const atMost = (name: string, target: number, value: number | null) => push(name, `<= ${target}`, value, (v) => v <= target);
  atLeast('bill_create / bare insert', 0.8, r.ratios.bill_create);
  atLeast('bill_status / bare select', 0.8, r.ratios.bill_status);
  atLeast('payment / bare transaction', 0.6, r.ratios.payment);
  atLeast('payout / bare transaction', 0.6, r.ratios.payout);
  atLeast('merchant_balance / bare select', 0.8, r.ratios.merchant_balance);
  if (!('unavailable' in r.service)) {
    for (const [name, limit] of [['bill_create', 20], ['bill_status', 20], ['payment', 50]] as const) {
      atMost(`${name} open-loop p99 at 50% of its own maximum (ms)`, limit, r.service.open_loop?.[name]?.p50?.p99_ms ?? null);
      t[t.length - 1]!.bare = controlOf(r, name, 'p50')?.p99_ms ?? null;
    }
  }
  atLeast('bill_create / PostgreSQL alone (pgbench insert)', 0.4, r.ratios.bill_create_vs_pgbench);
  if (!('unavailable' in r.service)) {
    // Under the closed-loop load; the open loops' 80% rates overload the service on purpose and
    // their queue's memory is reported beside it, not held against the target.
    const rss = r.service.peak_rss_closed_mb ?? r.service.peak_rss_mb;
    atMost(`service peak RSS under the closed-loop load, ${r.runtime ?? 'compiled'} (MB)`, 150, rss === null ? null : Math.round(rss));
  }
  const o = 'unavailable' in r.outbox ? null : r.outbox.deliveries_per_s;
  atLeast('outbox deliveries/s', 2000, o);
  return t;
}

const f = (x: number | null | undefined, d = 0): string => (x === null || x === undefined ? '–' : x.toFixed(d));
const yes = (m: boolean | null, judged = true): string => (m === null ? (judged ? 'not measured' : 'not judged (busy machine)') : m ? 'yes' : '**no**');

export function toMarkdown(r: BenchResults): string {
  const L: string[] = [];
  const m = r.machine;
  L.push(`### Benchmark ${r.started_at}${r.quick ? ' (quick smoke run: 2 s per figure, not a measurement to quote)' : ''}`);
  L.push('');
  L.push(`Machine: ${m.cpu_model}, ${m.cores} cores, ${m.memory_gb} GB RAM, Linux ${m.kernel}; Node ${m.node}; PostgreSQL ${m.postgres}; load average ${m.load_avg_at_start} at the start` +
    `${isQuiet(m) ? ' (quiet: the targets are judged)' : ' (**busy: other work shared the machine; the targets are not judged, figures are low and noisy**)'}. ` +
    `Service runtime: ${r.runtime === 'tsx' ? 'TypeScript sources through tsx' : 'the compiled service (dist/, as `npm run start:prod`)'}. ` +
    `Load generator autocannon in the same machine, ${r.duration_s} s per figure, after a warm-up; every server in its own process; ` +
    `requests spread round-robin over ${r.tenants} merchants (the bare transaction over as many balance rows).`);
  L.push('');
  L.push('| what | conns | req/s (2xx) | p50 ms | p99 ms | RSS MB | ceiling req/s | ratio |');
  L.push('|---|---:|---:|---:|---:|---:|---:|---:|');
  const ceil = 'unavailable' in r.ceilings ? null : r.ceilings;
  const ceilRow = (label: string, runs: Record<string, LoadResult> | undefined) => {
    for (const n of r.connections) {
      const x = runs?.[`c${n}`];
      L.push(`| ${label} | ${n} | ${f(x?.rps)} | ${f(x?.p50_ms, 1)} | ${f(x?.p99_ms, 1)} | ${f(x?.rss_mb, 0)} | | |`);
    }
  };
  if (ceil) {
    ceilRow('ceiling: Fastify hello world', ceil.hello);
    ceilRow('ceiling: bare insert (bill row)', ceil.insert);
    ceilRow('ceiling: bare primary-key select', ceil.select);
    ceilRow('ceiling: bare BEGIN/insert/update/COMMIT', ceil.tx);
    if ('unavailable' in ceil.pgbench_insert) L.push(`| ceiling: pgbench bill insert | | ${ceil.pgbench_insert.unavailable} | | | | | |`);
    else {
      for (const n of r.connections) {
        const x = (ceil.pgbench_insert as Record<string, PgbenchResult>)[`c${n}`];
        L.push(`| ceiling: PostgreSQL alone (pgbench insert) | ${n} | ${f(x?.tps)} | ${f(x?.p50_ms, 1)} | ${f(x?.p99_ms, 1)} | | | |`);
      }
    }
  } else {
    L.push(`| ceilings | | ${r.ceilings && 'unavailable' in r.ceilings ? r.ceilings.unavailable : ''} | | | | | |`);
  }
  const labels: Record<ServiceScenario, string> = {
    bill_create: 'service: POST bill/create',
    bill_status: 'service: GET bill/status',
    payment: 'service: card payment POST /pay/{id}',
    payout: 'service: POST payout/personal/create',
    merchant_balance: 'service: GET merchant/balance',
  };
  if ('unavailable' in r.service) L.push(`| service | | ${r.service.unavailable} | | | | | |`);
  else {
    for (const name of Object.keys(labels) as ServiceScenario[]) {
      const s = r.service[name];
      if (!isRuns(s)) { L.push(`| ${labels[name]} | | unavailable: ${(s as { unavailable: string }).unavailable.replace(/\|/g, '/').replace(/\n/g, ' ')} | | | | | |`); continue; }
      for (const n of r.connections) {
        const x = s[`c${n}`];
        const cname = CEILING_OF[name as keyof typeof CEILING_OF];
        const c = cname && ceil && isRuns(ceil[cname]) ? (ceil[cname] as Record<string, LoadResult>)[`c${n}`]?.rps : undefined;
        const ratio = name in CEILING_OF ? r.ratios_by_connections[name]?.[`c${n}`] : null;
        const bad = x && x.non_2xx + x.errors > 0 ? ` (${x.non_2xx} non-2xx, ${x.errors} errors)` : '';
        L.push(`| ${labels[name]}${bad} | ${n} | ${f(x?.rps)} | ${f(x?.p50_ms, 1)} | ${f(x?.p99_ms, 1)} | ${f(x?.rss_mb, 0)} | ${f(c)} | ${ratio === null || ratio === undefined ? '' : `${Math.round(ratio * 100)}%`} |`);
      }
    }
  }
  L.push('');
  if (!('unavailable' in r.service) && r.service.open_loop) {
    L.push('Open loop (requests due at a fixed rate whatever the answers; latency counted from when each was due), each scenario at a share of its own maximum, each followed by its control: the bare handler it is compared with, at the same rate:');
    L.push('');
    L.push('| what | rate req/s | share of its own max | 2xx / sent | p50 ms | p99 ms | p99.9 ms | max ms | generator CPU % | send lag p99 ms |');
    L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    const row = (label: string, x: OpenLoopResult & { percent: number; max_rps?: number }) =>
      L.push(`| ${label} | ${x.rate} | ${x.percent}% of ${x.max_rps ?? '?'} | ${x.ok} / ${x.sent} | ${f(x.p50_ms, 1)} | ${f(x.p99_ms, 1)} | ${f(x.p999_ms, 1)} | ${f(x.max_ms, 1)} | ${f(x.generator_cpu_pct)} | ${f(x.send_lag_p99_ms, 1)} |`);
    const ceilLabels = { insert: 'bare insert', select: 'bare primary-key select', tx: 'bare transaction' } as const;
    for (const [name, runs] of Object.entries(r.service.open_loop)) {
      for (const [key, x] of Object.entries(runs ?? {})) {
        row(labels[name as ServiceScenario], x);
        const c = controlOf(r, name, key);
        if (c) row(`control: ${ceilLabels[c.mode]}`, { ...c, max_rps: x.max_rps });
      }
    }
    const down = r.controls && 'unavailable' in r.controls ? String(r.controls.unavailable) : null;
    if (down) L.push('', `Controls: unavailable (${down.replace(/\n/g, ' ')}).`);
    L.push('');
  }
  L.push(...sizingTable(r));
  if (r.service_by_processes) L.push(...processesTable(r.service_by_processes, r.connections, r.ceilings_by_processes));
  if ('unavailable' in r.outbox) L.push(`Outbox drain: unavailable (${r.outbox.unavailable.replace(/\n/g, ' ')}).`);
  else {
    const o = r.outbox;
    L.push(`Outbox drain: ${o.delivered} of ${o.events} events delivered to a loopback receiver at ${f(o.deliveries_per_s)} deliveries/s ` +
      `(first to last delivery; ${o.wall_s} s including worker start-up), ${o.dead} dead, ${o.attempts} attempts, worker peak RSS ${f(o.worker_peak_rss_mb)} MB.`);
  }
  if (!('unavailable' in r.service)) {
    L.push(`Service peak RSS (VmHWM): ${f(r.service.peak_rss_closed_mb)} MB after the closed-loop scenarios; ${f(r.service.peak_rss_mb)} MB over the whole run, open loops included (an overloaded open loop queues its requests in memory).`);
  }
  L.push('');
  L.push('| target | wanted | measured | bare handler, same measurement | met |');
  L.push('|---|---|---:|---:|---|');
  for (const t of r.targets) L.push(`| ${t.name} | ${t.target} | ${t.value === null ? '–' : t.value} | ${t.bare === undefined || t.bare === null ? '' : t.bare} | ${yes(t.met, isQuiet(m))} |`);
  L.push('');
  return L.join('\n');
}
