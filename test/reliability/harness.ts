import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { ADMIN_TOKEN, TEST_KEY } from '../helpers/app.js';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

export interface Proc { kind: 'api' | 'worker'; port: number; child: ChildProcess; url: string; /** Its latest log lines (stdout), at most 5000. */ log: string[] }

/** The API built with observers that SIGKILL it at the phase named by CRASH_AT (test/helpers/crash-entry.ts). */
export const CRASH_ENTRY = 'test/helpers/crash-entry.ts';

// Whatever a test leaves running (a failed test skips its cleanup) dies with the test process.
const spawned = new Set<ChildProcess>();
process.on('exit', () => { for (const c of spawned) c.kill('SIGKILL'); });

function baseEnv(dbUrl: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, PAYMENTS_PROFILE: 'sandbox',
    LOG_LEVEL: 'error', ALLOW_PRIVATE_WEBHOOK_URLS: 'true', SANDBOX_PROCESSING_DELAY_MS: '50',
    RATE_LIMIT_PER_TOKEN: '0', RATE_LIMIT_PER_IP: '0', PAY_ATTEMPTS_PER_BILL: '1000000', PAY_ATTEMPTS_PER_IP: '1000000', ...extra,
  };
}

/**
 * Starts `npm start` (API only) or `npm run worker` as a real child process; `entry` another
 * entry point of the API (test/helpers/crash-entry.ts).
 */
export async function startProc(kind: 'api' | 'worker', dbUrl: string, extra: Record<string, string> = {}, port?: number, entry?: string): Promise<Proc> {
  const p = port ?? await freePort();
  entry ??= kind === 'api' ? 'src/entry/main.ts' : 'src/entry/worker-main.ts';
  const env = baseEnv(dbUrl, { PORT: String(p), HOST: '127.0.0.1', RUN_WORKERS: 'false', PUBLIC_BASE_URL: `http://127.0.0.1:${p}`, ...extra });
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  let partial = '';
  child.stdout?.on('data', (d) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop()!;
    log.push(...parts);
    if (log.length > 5000) log.splice(0, log.length - 5000);
  });
  spawned.add(child);
  child.once('exit', () => spawned.delete(child));
  let err = '';
  child.stderr?.on('data', (d) => { err = (err + d).slice(-4000); });
  const proc: Proc = { kind, port: p, child, url: `http://127.0.0.1:${p}`, log };
  if (kind === 'api') {
    // A cold tsx start on a loaded 2-core machine has taken over 30 s; bounded under a hook's 60 s,
    // where a start belongs (docs/adr/0139-slow-starts-wait-in-hooks.md), so a hang fails by name.
    const until = Date.now() + Number(process.env.TEST_PROC_START_MS ?? 40_000);
    for (;;) {
      if (child.exitCode !== null) throw new Error(`api exited: ${err}`);
      try { if ((await fetch(`${proc.url}/health`)).ok) break; } catch { /* not up yet */ }
      if (Date.now() > until) throw new Error(`api did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } else {
    // Not an outcome: a worker says nothing at LOG_LEVEL=error once it is up, so this is the
    // window in which a worker that cannot start (config, database) exits and is reported here.
    await new Promise((r) => setTimeout(r, 1500));
    if (child.exitCode !== null) throw new Error(`worker exited: ${err}`);
  }
  return proc;
}

/** The signal that ended `child`, or 'still running' after `ms`: a process that should die and does not fails by name. */
export function exitSignal(child: ChildProcess, ms = 15_000): Promise<NodeJS.Signals | null | 'still running'> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('still running'), ms);
    child.once('exit', (_code, signal) => { clearTimeout(timer); resolve(signal); });
  });
}

export function kill(p: Proc | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  return new Promise((resolve) => {
    // A beforeAll that failed half-way leaves some processes unset.
    if (!p) return resolve();
    if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
    p.child.once('exit', () => resolve());
    p.child.kill(signal);
  });
}

/** An HTTP receiver on 127.0.0.1 recording every POST; fails `failRate` of them with 500. */
export async function startReceiver(failRate = 0): Promise<{ url: string; bodies: string[]; close(): Promise<void>; server: Server }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let b = '';
    req.on('data', (d) => { b += d; });
    req.on('end', () => {
      if (Math.random() < failRate) { res.statusCode = 500; res.end('no'); return; }
      bodies.push(b);
      res.end('OK');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/hook`, bodies, server, close: () => new Promise((r) => server.close(() => r())) };
}

/** JSON call helper that never throws on HTTP errors (returns status 0 on network errors). */
export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  try {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await r.text();
    let json: unknown = null;
    try { json = JSON.parse(text); } catch { json = { raw: text.slice(0, 200) }; }
    return { status: r.status, json };
  } catch {
    return { status: 0, json: null };
  }
}

export const admin = (base: string, method: string, path: string, body?: unknown) =>
  call(base, method, `/admin/v1${path}`, body, { authorization: `Bearer ${ADMIN_TOKEN}` });
