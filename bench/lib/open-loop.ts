import { Pool } from 'undici';
import type { LoadSpec } from './load.js';

export interface OpenLoopResult {
  /** Requests scheduled per second. */
  rate: number;
  duration_s: number;
  sent: number;
  ok: number;
  failed: number;
  /** Latency from the moment each request was due (not when it was sent), ms. */
  p50_ms: number | null;
  p99_ms: number | null;
  p999_ms: number | null;
  max_ms: number | null;
  /** Requests still unanswered when the run ended (counted as failed). */
  unfinished: number;
  /** Sockets the generator opened (one request in flight on each). */
  sockets: number;
  /** CPU the generator itself used over the run, % of one core: it shares the machine with the server. */
  generator_cpu_pct: number;
  /** How late the generator sent requests past their due time, ms (its own lag, not the server's). */
  send_lag_p99_ms: number | null;
  /** The slowest answer among the requests due in each 100 ms of the run, ms: when a queue formed and how it drained. */
  worst_by_100ms: number[];
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[i]! * 100) / 100;
}

/**
 * An open-loop load: request i is due at start + i / rate whatever happened to the others, and
 * its latency counts from that moment. A closed loop (autocannon's N connections each waiting for
 * its answer) sends less when the server slows down, so its p99 at 64 connections mostly measures
 * the queue it built itself; here a slow answer cannot hold the next request back (no coordinated
 * omission). The keep-alive sockets (undici's Pool, one request in flight on each) are opened
 * before the first request is due: opening hundreds on demand once answers slow down made the
 * server accept connections in the middle of the load, and the first second's requests waited
 * seconds (docs/performance.md, "The open loop"). A request finding every socket busy waits in
 * the generator, its latency still counted from when it was due. On a 2-core machine the
 * generator's CPU is taken from the server it measures, so it reports it, and how late it sent.
 */
export interface OpenLoopOptions {
  /** Sockets at most, one request in flight on each (OPEN_LOOP_SOCKETS, default 64: the closed loop's highest count). */
  maxSockets?: number;
  /** Sockets opened before the first request is due, by GETs of `warmPath` (OPEN_LOOP_PREOPEN, default all of them). */
  preopen?: number;
  warmPath?: string;
}

export async function openLoop(spec: LoadSpec, rate: number, durationS: number, opts: OpenLoopOptions = {}): Promise<OpenLoopResult> {
  const maxSockets = opts.maxSockets ?? Number(process.env.OPEN_LOOP_SOCKETS ?? 64);
  const preopen = Math.min(maxSockets, opts.preopen ?? Number(process.env.OPEN_LOOP_PREOPEN ?? maxSockets));
  const u = new URL(spec.url);
  let sockets = 0;
  const pool = new Pool(u.origin, { connections: maxSockets, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  pool.on('connect', () => { sockets++; });
  if (preopen > 0) {
    await Promise.all(Array.from({ length: preopen }, () => pool.request({ path: opts.warmPath ?? '/health', method: 'GET' }).then((r) => r.body.dump())));
  }
  const total = Math.max(1, Math.round(rate * durationS));
  const latencies: number[] = [];
  const lags: number[] = [];
  const worst: number[] = [];
  let ok = 0;
  let failed = 0;
  let inFlight = 0;
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const start = wall0 + 50;
  const fire = (due: number) => {
    const r = spec.setup?.() ?? { path: `${u.pathname}${u.search}` };
    const body = r.body ?? spec.body;
    inFlight++;
    lags.push(performance.now() - due);
    pool.request({ path: r.path, method: spec.method ?? 'GET', headers: r.headers ?? spec.headers ?? {}, body })
      .then(async (res) => {
        await res.body.dump();
        const took = performance.now() - due;
        latencies.push(took);
        const k = Math.floor((due - start) / 100);
        worst[k] = Math.max(worst[k] ?? 0, Math.round(took));
        if (res.statusCode >= 200 && res.statusCode < 300) ok++; else failed++;
      }, () => { failed++; latencies.push(performance.now() - due); })
      .finally(() => { inFlight--; });
  };
  let i = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      // Everything due by now goes out now; a late timer never drops a request.
      while (i < total && start + (i * 1000) / rate <= now) fire(start + (i++ * 1000) / rate);
      if (i >= total) return resolve();
      const next = start + (i * 1000) / rate;
      setTimeout(tick, Math.max(0, next - performance.now() - 1));
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
  });
  const deadline = performance.now() + 30_000;
  while (inFlight > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const unfinished = inFlight;
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - wall0;
  await pool.destroy();
  latencies.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  return {
    rate, duration_s: durationS, sent: total, ok, failed: failed + unfinished,
    p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), p999_ms: percentile(latencies, 99.9),
    max_ms: latencies.length ? Math.round(latencies[latencies.length - 1]! * 100) / 100 : null, unfinished,
    sockets, generator_cpu_pct: Math.round(((cpu.user + cpu.system) / 1000 / wall) * 100), send_lag_p99_ms: percentile(lags, 99),
    worst_by_100ms: Array.from(worst, (x) => x ?? 0),
  };
}

/**
 * The percents of each scenario's own maximum at which its open-loop latency is measured: what a
 * deployment sized to run at half or four fifths of what a process can do would see. A rate
 * taken from another program's ceiling can put a slower scenario past its own maximum, where p99
 * measures only the queue it built.
 */
export const OPEN_LOOP_PERCENTS = [50, 80];
