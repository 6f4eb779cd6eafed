import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLoop } from '../../bench/lib/open-loop.js';

let server: Server;
let base: string;
let seen = 0;

beforeAll(async () => {
  // Answers every request 150 ms late: a closed loop with few connections would slow down with it.
  server = createServer((req, res) => {
    seen++;
    req.resume();
    setTimeout(() => res.end('ok'), 150);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('bench open loop', () => {
  it('sends at the fixed rate whatever the answers take, and counts latency from when each request was due', async () => {
    const r = await openLoop({ url: `${base}/x` }, 200, 1, { preopen: 0 });
    expect(r.sent).toBe(200);
    expect(seen).toBe(200);
    expect(r.ok).toBe(200);
    // Every answer takes at least the server's 150 ms, measured from its due time.
    expect(r.p50_ms!).toBeGreaterThanOrEqual(150);
    expect(r.p99_ms!).toBeGreaterThanOrEqual(r.p50_ms!);
    expect(r.p999_ms!).toBeGreaterThanOrEqual(r.p99_ms!);
    // 200 req/s with 150 ms answers keeps about 30 in flight: the sockets were opened for them.
    expect(r.sockets).toBeGreaterThanOrEqual(25);
    expect(r.sockets).toBeLessThanOrEqual(64);
  });

  it('opens its sockets before the first request is due, and never more than its cap', async () => {
    const before = seen;
    const r = await openLoop({ url: `${base}/x` }, 100, 1, { maxSockets: 8, preopen: 8, warmPath: '/warm' });
    // 8 warming requests, then the 100 of the run.
    expect(seen - before).toBe(108);
    expect(r.sockets).toBe(8);
    // 8 sockets hold 8 answers of 150 ms at a time (53/s): the rest waited for a socket, counted from when they were due.
    expect(r.ok).toBe(100);
    expect(r.max_ms!).toBeGreaterThan(1000);
  });
});
