import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from './service-process.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PgBouncerHandle {
  /** The admin URL rewritten to go through PgBouncer, marked `?pgbouncer=true`. */
  via(url: string): string;
  stop(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ host: '127.0.0.1', port }, () => { c.end(); resolve(true); });
    c.on('error', () => resolve(false));
  });
}

export function pgbouncerBinary(): string | null {
  for (const p of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) {
    if (spawnSync(p, ['--version']).status === 0) return p;
  }
  return null;
}

/**
 * Debian's PgBouncer (1.18) in transaction pooling mode in front of the server behind `adminUrl`,
 * on a free port of 127.0.0.1, in the foreground as a child of this process. PgBouncer refuses
 * to run as root, so as root it switches to the `postgres` user.
 */
export async function startPgBouncer(adminUrl: string): Promise<PgBouncerHandle> {
  const bin = pgbouncerBinary();
  if (!bin) {
    throw new Error('TEST_PGBOUNCER=1 needs Debian\'s pgbouncer (apt-get install -y pgbouncer; .ci/run installs it)');
  }
  const server = new URL(adminUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  chmodSync(dir, 0o755);
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(ini, [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || '5432'} user=${decodeURIComponent(server.username || 'postgres')}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = any',
    'pool_mode = transaction',
    'max_client_conn = 2000',
    'default_pool_size = 20',
    'max_db_connections = 40',
    'server_idle_timeout = 10',
    'ignore_startup_parameters = extra_float_digits,options',
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n'));
  chmodSync(ini, 0o644);
  const args = process.getuid?.() === 0 ? ['-u', 'postgres', ini] : [ini];
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d) => { err = (err + d).slice(-4000); });
  const until = Date.now() + 15_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${err}`);
    if (Date.now() > until) throw new Error(`pgbouncer did not start: ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    via(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      u.searchParams.set('pgbouncer', 'true');
      return u.toString();
    },
    async stop() {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.kill('SIGINT'); });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
