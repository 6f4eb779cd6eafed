/** How long and how hard one bench run goes (BENCH_DURATION seconds, BENCH_QUICK=1 for a smoke run). */
export interface BenchPlan {
  quick: boolean;
  durationS: number;
  warmupS: number;
  connections: number[];
  outboxEvents: number;
  /** Merchants the money paths spread over (BENCH_TENANTS, default 32; 1 = one hot balance row). */
  tenants: number;
  /**
   * API process counts the service scenarios and the bare handlers run with (BENCH_PROCESSES,
   * default 1,2: WEB_CONCURRENCY of each run). The first is the run the targets come from.
   */
  processes: number[];
  log(line: string): void;
}

export function planFromEnv(env = process.env): BenchPlan {
  const quick = env.BENCH_QUICK === '1' || env.BENCH_QUICK === 'true';
  const durationS = quick ? 2 : Math.max(1, Number(env.BENCH_DURATION ?? 10));
  return {
    quick,
    durationS,
    warmupS: quick ? 2 : Math.min(5, durationS),
    connections: [16, 64],
    outboxEvents: Number(env.BENCH_OUTBOX_EVENTS ?? 10_000),
    tenants: Math.max(1, Number(env.BENCH_TENANTS ?? 32)),
    processes: processCounts(env.BENCH_PROCESSES),
    log: (line) => process.stdout.write(`${line}\n`),
  };
}

/** `1,2` -> [1, 2]: positive integers, in the order given, each once; anything else is refused. */
export function processCounts(raw: string | undefined): number[] {
  const xs = (raw ?? '1,2').split(',').map((x) => x.trim()).filter((x) => x !== '');
  if (xs.length === 0 || xs.some((x) => !/^[1-9]\d*$/.test(x))) throw new Error(`BENCH_PROCESSES must list positive integers (e.g. 1,2), not "${raw}"`);
  return [...new Set(xs.map(Number))];
}
