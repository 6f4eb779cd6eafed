import { describe, expect, it } from 'vitest';
import { planFromEnv, processCounts } from '../../bench/lib/plan.js';
import { processesTable } from '../../bench/lib/report-processes.js';
import type { LoadResult } from '../../bench/lib/load.js';

const run = (rps: number, p99: number, non2xx = 0): LoadResult => ({
  connections: 64, duration_s: 2, rps, rps_all: rps, p50_ms: 1, p99_ms: p99, max_ms: p99, requests: rps * 2, non_2xx: non2xx, errors: 0, timeouts: 0,
});

describe('bench with 1 and 2 API processes (BENCH_PROCESSES, issue 18 item 4)', () => {
  it('BENCH_PROCESSES=1,2 runs the service with each count in the order given; unset runs one process', () => {
    expect(planFromEnv({ BENCH_PROCESSES: '1,2' }).processes).toEqual([1, 2]);
    expect(planFromEnv({ BENCH_PROCESSES: ' 2 , 1 ,2' }).processes).toEqual([2, 1]);
    expect(planFromEnv({}).processes).toEqual([1]);
  });

  it('refuses a process count that is not a positive integer instead of running something else', () => {
    for (const bad of ['0', '1,-2', 'two', '1.5', ',']) expect(() => processCounts(bad)).toThrow(/BENCH_PROCESSES/);
  });

  it('reports throughput per scenario with one column per process count, failures and unavailable runs marked', () => {
    const lines = processesTable({
      1: { bill_create: { c64: run(4000, 30) }, bill_status: { c64: run(9000, 12) }, payment: { unavailable: 'probe answered 500' },
        payout: { c64: run(1500, 80, 3) }, merchant_balance: { c64: run(8000, 15) }, peak_rss_mb: 200 },
      2: { unavailable: 'service did not become ready' },
    }, [64]);
    expect(lines).toContain('| what | conns | 1 process | 2 processes |');
    expect(lines).toContain('| POST bill/create | 64 | 4000 (30) | unavailable: service did not become ready |');
    expect(lines).toContain('| card payment POST /pay/{id} | 64 | unavailable | unavailable: service did not become ready |');
    expect(lines).toContain('| POST payout/personal/create | 64 | 1500 (80) 3 failed | unavailable: service did not become ready |');
  });
});
