import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Mode = 'ok' | 'fail500' | 'timeout' | 'drop' | 'hold' | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number };

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  fields: Record<string, string>;
  at: number;
}

/**
 * A real HTTP receiver on 127.0.0.1 that answers 200, 500, times out or drops the connection
 * on demand (per request, by `mode`), records every request, and counts overlaps: a TrsId
 * being received while another request with the same TrsId is still open. 'hold' keeps a
 * request open until `releaseHeld()` answers it 200: `held` and `maxHeld` count them at once.
 */
export async function startReceiver(mode: (r: Received, n: number) => Mode = () => 'ok') {
  const received: Received[] = [];
  const open = new Map<string, number>();
  let overlaps = 0;
  const hanging = new Set<http.ServerResponse>();
  let held: http.ServerResponse[] = [];
  let maxHeld = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const fields = Object.fromEntries(new URLSearchParams(body));
      const r: Received = { path: req.url ?? '/', headers: req.headers, body, fields, at: Date.now() };
      received.push(r);
      const key = fields.TrsId ?? '';
      if ((open.get(key) ?? 0) > 0) overlaps += 1;
      open.set(key, (open.get(key) ?? 0) + 1);
      let closed = false;
      const done = () => { if (!closed) { closed = true; open.set(key, open.get(key)! - 1); } };
      res.on('close', done);
      const m = mode(r, received.length);
      if (m === 'ok') return void res.end('OK');
      if (m === 'fail500') { res.statusCode = 500; return void res.end('Internal Server Error'); }
      if (m === 'timeout') { hanging.add(res); return; }
      if (m === 'hold') { held.push(res); maxHeld = Math.max(maxHeld, held.length); return; }
      if (m === 'drop') { req.socket.destroy(); return; }
      const answer = () => {
        res.writeHead(m.status, m.headers ?? {});
        res.end(m.body ?? '');
      };
      if (m.delayMs) setTimeout(answer, m.delayMs); else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    get overlaps() { return overlaps; },
    setMode(m: (r: Received, n: number) => Mode) { mode = m; },
    /** Requests held open now, and the most held at once since the last `resetMaxHeld()`. */
    get held() { return held.length; },
    get maxHeld() { return maxHeld; },
    resetMaxHeld() { maxHeld = held.length; },
    /** Answers every held request 200 OK. */
    releaseHeld() {
      const all = held;
      held = [];
      for (const res of all) res.end('OK');
    },
    async close() {
      for (const h of hanging) h.destroy();
      for (const h of held) h.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Polls until `fn` is true (real waits, for tests with real processes). */
export async function waitFor(fn: () => boolean | Promise<boolean>, timeoutMs = 20_000, stepMs = 50): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error('waitFor: timed out');
}
