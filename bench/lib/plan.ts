/** How long and how hard one bench run goes (BENCH_DURATION seconds, BENCH_QUICK=1 for a smoke run). */
export interface BenchPlan {
  quick: boolean;
  durationS: number;
  warmupS: number;
  connections: number[];
  outboxEvents: number;
  /** Merchants the money paths spread over (BENCH_TENANTS, default 32; 1 = one hot balance row). */
  tenants: number;
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
    log: (line) => process.stdout.write(`${line}\n`),
  };
}
