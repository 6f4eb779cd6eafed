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
    const r = await openLoop({ url: `${base}/x` }, 200, 1);
    expect(r.sent).toBe(200);
    expect(seen).toBe(200);
    expect(r.ok).toBe(200);
    // Every answer takes at least the server's 150 ms, measured from its due time.
    expect(r.p50_ms!).toBeGreaterThanOrEqual(150);
    expect(r.p99_ms!).toBeGreaterThanOrEqual(r.p50_ms!);
    expect(r.p999_ms!).toBeGreaterThanOrEqual(r.p99_ms!);
  });
});
