import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { ADMIN_TOKEN, TEST_KEY } from './app.js';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** Everything written to stdout and stderr so far, line by line. */
  lines(): string[];
  /** Resolves with the exit code (or the signal) once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The signal a terminal's Ctrl-C sends: to the whole process group. */
  interrupt(signal?: NodeJS.Signals): void;
}

const running = new Set<ChildProcess>();

/**
 * Kills (SIGKILL, whole process group) every service a test file started and did not stop:
 * call it in afterAll, since a failed assertion skips the test's own stop, and vitest's
 * workers do not always run 'exit' handlers.
 */
export function killAll(): void {
  for (const c of running) try { process.kill(-c.pid!, 'SIGKILL'); } catch { /* gone */ }
  running.clear();
}
process.on('exit', killAll);

/**
 * Starts the real service (`node <args>`) in a process group of its own, as a shell starts a
 * command, and waits until GET /ready answers 200. `env` is the whole environment (plus PATH
 * and HOME): nothing leaks in from the test runner's.
 */
export async function startService(args: string[], env: Record<string, string>, opts: { timeoutMs?: number } = {}): Promise<ServiceProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, HOST: '127.0.0.1', PORT: String(port), LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => { running.delete(child); resolve({ code, signal }); });
  });
  const proc: ServiceProcess = {
    child, url, exited,
    lines: () => out.split('\n').filter((l) => l.trim() !== ''),
    interrupt: (signal = 'SIGINT') => process.kill(-child.pid!, signal),
  };
  const until = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`service exited at start:\n${out}`);
    try { if ((await fetch(`${url}/ready`)).status === 200) break; } catch { /* not up yet */ }
    if (Date.now() > until) {
      proc.interrupt('SIGKILL');
      throw new Error(`service not ready in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return proc;
}

/** The environment of the DATABASE_URL profile on a test database. */
export function databaseEnv(dbUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, ALLOW_PRIVATE_WEBHOOK_URLS: 'true', PAYMENTS_PROFILE: 'sandbox', ...extra };
}

/** Log lines at warn or above (JSON lines) and any line that mentions an error. */
export function complaints(lines: string[]): string[] {
  return lines.filter((l) => {
    if (/error/i.test(l)) return true;
    try { return (JSON.parse(l) as { level?: number }).level! >= 40; } catch { return false; }
  });
}

export function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}
