import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ensureBuilt } from '../../test/helpers/build.js';

export const ROOT = join(import.meta.dirname, '..', '..');

/** Children still running; killed if the bench itself dies or is interrupted, so none linger. */
const live = new Set<ChildProcess>();
process.on('exit', () => { for (const p of live) p.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Fields of /proc/<pid>/status in kB (VmRSS, VmHWM). */
export function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Polls VmRSS of a process; `stop()` gives the largest value seen, in MB. */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
  let max = procStatusKb(pid, 'VmRSS') ?? 0;
  const t = setInterval(() => { max = Math.max(max, procStatusKb(pid, 'VmRSS') ?? 0); }, everyMs);
  return { stop() { clearInterval(t); max = Math.max(max, procStatusKb(pid, 'VmRSS') ?? 0); return round1(max / 1024); } };
}

export const round1 = (x: number): number => Math.round(x * 10) / 10;

export interface Child {
  name: string;
  port: number;
  proc: ChildProcess;
  pid: number;
  /** Lifetime peak RSS of the process (VmHWM), MB. */
  peakRssMb(): number | null;
  stop(): Promise<void>;
  stderrTail(): string;
}

/**
 * Starts an entry point in its own Node process and waits until `readyPath` answers 200: a
 * TypeScript file through `node --import tsx` (the pid is the server's own, not a wrapper's), a
 * `.js` file (the compiled service) with plain node.
 */
export async function startChild(name: string, entry: string, env: Record<string, string>, opts: { port?: number; readyPath?: string | null; extraArgs?: string[]; readyTimeoutMs?: number } = {}): Promise<Child> {
  const port = opts.port ?? await freePort();
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const proc = spawn(process.execPath, [...(opts.extraArgs ?? []), ...loader, entry], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-4000); });
  let exited = false;
  live.add(proc);
  const exitP = new Promise<void>((r) => proc.on('exit', () => { exited = true; live.delete(proc); r(); }));
  const pid = proc.pid!;
  const child: Child = {
    name, port, proc, pid,
    peakRssMb() { const kb = procStatusKb(pid, 'VmHWM'); return kb === null ? null : round1(kb / 1024); },
    async stop() {
      if (exited) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exitP;
      clearTimeout(t);
    },
    stderrTail: () => err,
  };
  const readyPath = opts.readyPath === undefined ? '/health' : opts.readyPath;
  if (readyPath !== null) {
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 90_000);
    for (;;) {
      if (exited) throw new Error(`${name} exited during start-up:\n${err}`);
      try {
        const r = await fetch(`http://127.0.0.1:${port}${readyPath}`);
        if (r.ok) break;
      } catch { /* not listening yet */ }
      if (Date.now() > deadline) { await child.stop(); throw new Error(`${name} did not become ready:\n${err}`); }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return child;
}

/**
 * The node arguments of `npm run start:prod` (flags and entry), so the benches start the service
 * as production does. BENCH_NODE_FLAGS="<flags>" replaces its flags (BENCH_NODE_FLAGS= for none)
 * to measure a variant; BENCH_ENTRY=<file> replaces the entry.
 */
export function startProdArgs(script: 'start:prod' | 'worker:prod' = 'start:prod'): string[] {
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const [node, ...args] = scripts[script]!.split(' ');
  if (node !== 'node') throw new Error(`${script} is not a plain node command: ${scripts[script]}`);
  const entry = (script === 'start:prod' ? process.env.BENCH_ENTRY : undefined) ?? args.pop()!;
  const flags = process.env.BENCH_NODE_FLAGS !== undefined ? process.env.BENCH_NODE_FLAGS.split(' ').filter(Boolean) : args;
  return [...flags, entry];
}

/**
 * What the benches run: the compiled service as production runs it (`npm run start:prod` /
 * `worker:prod`: node with its flags on dist/, built here when missing or older than src/), or
 * with BENCH_RUNTIME=tsx the TypeScript sources through tsx (to compare the two).
 */
export const RUNTIME: 'compiled' | 'tsx' = process.env.BENCH_RUNTIME === 'tsx' ? 'tsx' : 'compiled';

/** Starts the API service (`main`) or the worker process (`worker`) the way RUNTIME says. */
export async function startService(name: string, which: 'main' | 'worker', env: Record<string, string>, opts: Parameters<typeof startChild>[3] = {}): Promise<Child> {
  if (RUNTIME === 'tsx') return startChild(name, which === 'main' ? 'src/entry/main.ts' : 'src/entry/worker-main.ts', env, opts);
  prepareService();
  const args = startProdArgs(which === 'main' ? 'start:prod' : 'worker:prod');
  const entry = args.pop()!;
  return startChild(name, entry, env, { ...opts, extraArgs: [...args, ...(opts.extraArgs ?? [])] });
}

/** Builds dist/ when the compiled runtime needs it (so a caller can time the start without the build). */
export function prepareService(): void {
  if (RUNTIME === 'compiled') ensureBuilt();
}
