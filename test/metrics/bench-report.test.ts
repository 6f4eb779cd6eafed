import { describe, expect, it } from 'vitest';
import { computeRatios, computeTargets, controlRates, toMarkdown, type BenchResults } from '../../bench/lib/report.js';
import type { LoadResult } from '../../bench/lib/load.js';

const run = (rps: number, p99 = 10): LoadResult => ({
  connections: 0, duration_s: 10, rps, rps_all: rps, p50_ms: 1, p99_ms: p99, max_ms: p99, requests: rps * 10, non_2xx: 0, errors: 0, timeouts: 0,
});
const both = (a: number, b: number, p99 = 10) => ({ c16: run(a, p99), c64: run(b, p99) });

const ceilings = {
  hello: both(30000, 30000), insert: both(8000, 8000), select: both(10000, 12000), tx: both(3000, 4000),
  pgbench_insert: { c16: { tps: 10000 }, c64: { tps: 12000 } }, peak_rss_mb: {},
};
const service = {
  bill_create: both(6000, 4000), bill_status: both(7000, 9000, 30), payment: { unavailable: 'probe answered 500' },
  payout: both(1500, 2400), merchant_balance: both(9000, 9000), peak_rss_mb: 140,
  open_loop: {
    bill_create: { p50: { rate: 3000, p50_ms: 3, p99_ms: 12, percent: 50, max_rps: 6000 }, p80: { rate: 4800, p50_ms: 9, p99_ms: 40, percent: 80, max_rps: 6000 } },
    bill_status: { p50: { rate: 4500, p50_ms: 2, p99_ms: 25, percent: 50, max_rps: 9000 } },
  },
};
// Each service open loop's control: its bare handler at the same rate.
const controls = {
  bill_create: { p50: { mode: 'insert', rate: 3000, percent: 50, p50_ms: 1, p99_ms: 4 }, p80: { mode: 'insert', rate: 4800, percent: 80, p50_ms: 2, p99_ms: 7 } },
  bill_status: { p50: { mode: 'select', rate: 4500, percent: 50, p50_ms: 1, p99_ms: 3 } },
};

function results(load = 0.1, extra: Partial<BenchResults> = {}): BenchResults {
  const { ratios, byConn } = computeRatios(ceilings as never, service as never, [16, 64]);
  const partial = {
    started_at: 't', finished_at: 't', quick: false, duration_s: 10, connections: [16, 64], tenants: 32,
    machine: { cpu_model: 'x', cores: 2, memory_gb: 1, kernel: 'k', node: 'v20', postgres: '15', pgbench: null, load_avg_at_start: load },
    ceilings: ceilings as never, service: service as never, controls: controls as never, outbox: { unavailable: 'no worker' }, ratios, ratios_by_connections: byConn,
    ...extra,
  };
  return { ...partial, targets: computeTargets(partial) };
}

describe('bench report', () => {
  it('compares each service figure with its own ceiling: create/insert, status/select, payout/transaction', () => {
    const r = results();
    expect(r.ratios_by_connections.bill_create).toEqual({ c16: 0.75, c64: 0.5 });
    expect(r.ratios_by_connections.bill_status).toEqual({ c16: 0.7, c64: 0.75 });
    expect(r.ratios_by_connections.payout).toEqual({ c16: 0.5, c64: 0.6 });
  });

  it('reports the worse connection count as the ratio, so a target cannot be met by one good figure', () => {
    const r = results();
    expect(r.ratios.bill_create).toBe(0.5);
    expect(r.targets.find((t) => t.name.startsWith('bill_create /'))!.met).toBe(false);
    expect(r.targets.find((t) => t.name.startsWith('bill_status /'))!.met).toBe(false);
    expect(r.targets.find((t) => t.name.startsWith('merchant_balance /'))).toMatchObject({ value: 0.75, met: false });
  });

  it('holds bill/create against PostgreSQL alone doing the same insert (>= 40% of pgbench)', () => {
    const r = results();
    expect(r.ratios_by_connections.bill_create_vs_pgbench).toEqual({ c16: 0.6, c64: 0.33 });
    expect(r.targets.find((t) => t.name.startsWith('bill_create / PostgreSQL alone'))).toMatchObject({ value: 0.33, met: false });
  });

  it('marks what was not measured as not measured, never as met', () => {
    const r = results();
    expect(r.ratios.payment).toBeNull();
    expect(r.targets.find((t) => t.name.startsWith('payment /'))!.met).toBeNull();
    expect(r.targets.find((t) => t.name === 'outbox deliveries/s')!.met).toBeNull();
    expect(toMarkdown(r)).toContain('not measured');
  });

  it('checks the open-loop p99 at 50% of each scenario\'s own maximum and the peak RSS against their targets', () => {
    const r = results();
    expect(r.targets.find((t) => t.name.startsWith('bill_status open-loop'))).toMatchObject({ value: 25, met: false });
    expect(r.targets.find((t) => t.name.startsWith('bill_create open-loop'))).toMatchObject({ value: 12, met: true });
    expect(r.targets.find((t) => t.name.startsWith('payment open-loop'))!.met).toBeNull();
    expect(r.targets.find((t) => t.name.startsWith('service peak RSS'))).toMatchObject({ value: 140, met: true });
  });

  it('judges no target on a busy machine (load average 1 or more at the start) and says so', () => {
    const r = results(1.4);
    expect(r.targets.find((t) => t.name.startsWith('bill_create open-loop'))).toMatchObject({ value: 12, met: null });
    expect(r.targets.every((t) => t.met === null)).toBe(true);
    const md = toMarkdown(r);
    expect(md).toContain('busy: other work shared the machine; the targets are not judged');
    expect(md).toContain('not judged (busy machine)');
    expect(toMarkdown(results(0.5))).toContain('quiet: the targets are judged');
  });

  it('sizes each scenario by its own maximum with one and two processes, its latency at 50% and 80% of it beside the bare handler, and the CPU bench:cost measured', () => {
    const two = { ...service, bill_create: both(7000, 6500), open_loop: { bill_create: { p50: { p50_ms: 4, p99_ms: 15, percent: 50, max_rps: 7000 } } } };
    const md = toMarkdown(results(0.1, {
      service_by_processes: { 1: service as never, 2: two as never },
      cost: { at: '2026-11-28T21:00:00Z', scenarios: { bill_create: { service_cpu_ms: 0.8, db_backends_cpu_ms: 0.6, statements: 2 } } },
    }));
    const row = md.split('\n').find((l) => l.startsWith('| POST bill/create | 6000 |'));
    expect(row).toBe('| POST bill/create | 6000 | 7000 | 3.0 / 12 (4.0) | 9.0 / 40 (7.0) | 15 | 0.80 + 0.60 |');
    expect(md).toContain('| card payment POST /pay/{id} | – | – | – | – | – | – |');
    expect(md).toContain('run at 2026-11-28T21:00:00Z');
    expect(toMarkdown(results())).toContain('run `npm run bench:cost` first');
  });

  it('runs each control at the rate its scenario was driven at, and shows it under that scenario', () => {
    expect(controlRates(service as never)).toEqual([
      { scenario: 'bill_create', mode: 'insert', percent: 50, rate: 3000 },
      { scenario: 'bill_create', mode: 'insert', percent: 80, rate: 4800 },
      { scenario: 'bill_status', mode: 'select', percent: 50, rate: 4500 },
    ]);
    const lines = toMarkdown(results()).split('\n');
    const at = lines.findIndex((l) => l.startsWith('| service: POST bill/create | 4800 |'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^\| control: bare insert \| 4800 \| 80% of 6000 \|/);
    const t = computeTargets({ ...results(), controls: controls as never }).find((x) => x.name.startsWith('bill_status open-loop p99'));
    expect(t).toMatchObject({ value: 25, bare: 3 });
  });
});
