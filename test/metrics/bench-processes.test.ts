import { describe, expect, it } from 'vitest';
import { planFromEnv, processCounts } from '../../bench/lib/plan.js';
import { processesTable } from '../../bench/lib/report-processes.js';
import type { LoadResult } from '../../bench/lib/load.js';

const run = (rps: number, p99: number, non2xx = 0): LoadResult => ({
  connections: 64, duration_s: 2, rps, rps_all: rps, p50_ms: 1, p99_ms: p99, max_ms: p99, requests: rps * 2, non_2xx: non2xx, errors: 0, timeouts: 0,
});

describe('bench with 1 and 2 API processes (BENCH_PROCESSES, issue 18 item 4)', () => {
  it('BENCH_PROCESSES=1,2 runs the service with each count in the order given; unset runs one and two processes', () => {
    expect(planFromEnv({ BENCH_PROCESSES: '1' }).processes).toEqual([1]);
    expect(planFromEnv({ BENCH_PROCESSES: ' 2 , 1 ,2' }).processes).toEqual([2, 1]);
    expect(planFromEnv({}).processes).toEqual([1, 2]);
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

  it('puts each process count beside its bare handler of the same process count', () => {
    const bare = (rps: number) => ({ c64: run(rps, 5) });
    const lines = processesTable({
      1: { bill_create: { c64: run(4000, 30) }, bill_status: { c64: run(9000, 12) }, payment: { c64: run(1000, 40) },
        payout: { c64: run(1500, 80) }, merchant_balance: { c64: run(8000, 15) }, peak_rss_mb: 200 },
      2: { bill_create: { c64: run(6000, 20) }, bill_status: { c64: run(12000, 9) }, payment: { c64: run(1600, 30) },
        payout: { c64: run(2000, 60) }, merchant_balance: { c64: run(11000, 10) }, peak_rss_mb: 200 },
    }, [64], {
      1: { hello: bare(20000), insert: bare(5000), select: bare(10000), tx: bare(2000), pgbench_insert: { unavailable: 'x' }, peak_rss_mb: {} },
      2: { hello: bare(30000), insert: bare(8000), select: bare(16000), tx: bare(3200), pgbench_insert: { unavailable: 'x' }, peak_rss_mb: {} },
    });
    expect(lines).toContain('| POST bill/create | 64 | 4000 (30) 80% | 6000 (20) 75% |');
    expect(lines).toContain('| GET merchant/balance | 64 | 8000 (15) 80% | 11000 (10) 69% |');
    expect(lines).toContain('| card payment POST /pay/{id} | 64 | 1000 (40) 50% | 1600 (30) 50% |');
  });
});
