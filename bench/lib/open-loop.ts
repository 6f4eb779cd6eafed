import { Agent, request } from 'node:http';
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
 * omission). Keep-alive sockets are opened as needed, up to `maxSockets`.
 */
export async function openLoop(spec: LoadSpec, rate: number, durationS: number, maxSockets = 512): Promise<OpenLoopResult> {
  const u = new URL(spec.url);
  const agent = new Agent({ keepAlive: true, maxSockets });
  const total = Math.max(1, Math.round(rate * durationS));
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let inFlight = 0;
  const start = performance.now() + 50;
  const fire = (due: number) => {
    const r = spec.setup?.() ?? { path: `${u.pathname}${u.search}` };
    const body = r.body ?? spec.body;
    const headers = { ...(r.headers ?? spec.headers ?? {}), ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) };
    inFlight++;
    const req = request({ host: u.hostname, port: u.port, path: r.path, method: spec.method ?? 'GET', headers, agent, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => {
        inFlight--;
        latencies.push(performance.now() - due);
        if (res.statusCode! >= 200 && res.statusCode! < 300) ok++; else failed++;
      });
    });
    req.on('error', () => { inFlight--; failed++; latencies.push(performance.now() - due); });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    if (body) req.write(body);
    req.end();
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
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    rate, duration_s: durationS, sent: total, ok, failed: failed + unfinished,
    p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), p999_ms: percentile(latencies, 99.9),
    max_ms: latencies.length ? Math.round(latencies[latencies.length - 1]! * 100) / 100 : null, unfinished,
  };
}
