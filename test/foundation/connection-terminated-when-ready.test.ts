import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { terminatingPostgres } from '../helpers/terminating-postgres.js';

/**
 * A backend ended the moment it became ready (under a failover: a killed node's backends that
 * outlive their postmaster send "terminating connection due to unexpected postmaster exit") while
 * the process was too busy to read in between: the ReadyForQuery and the FATAL arrive in one
 * chunk. The process goes on; the query on that connection fails as "database unavailable" (a
 * 503, a retried claim) (docs/adr/0146-a-connection-listened-to-from-its-first-tick.md).
 * Run in a child process: what is under test is whether the process survives.
 */
let fake: Awaited<ReturnType<typeof terminatingPostgres>> | undefined;
afterEach(async () => { await fake?.close(); fake = undefined; });

/** test/helpers/pool-connect-entry.ts on `url`: its exit code and signal, its JSON line and stderr. */
function poolConnect(url: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; seen: unknown; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/pool-connect-entry.ts'], {
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let seen: unknown = null;
      try { seen = JSON.parse(out.trim().split('\n').pop() ?? ''); } catch { /* died before its line */ }
      resolve({ code, signal, seen, stderr: stderr.slice(-4000) });
    });
  });
}

describe('a connection terminated just as it is ready', () => {
  it('with a host list and a read-write target (pg_auto_failover\'s URL): the process lives, the query on that connection is "database unavailable"', async () => {
    // Connection 0 is the read-write probe of the host (src/db/connect.ts), 1 the pool's own.
    fake = await terminatingPostgres((i) => i === 1);
    const r = await poolConnect(`postgresql://svc@127.0.0.1:${fake.port},127.0.0.1:${fake.port}/payments?target_session_attrs=read-write`);
    expect(fake.connections()).toBe(2);
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 0, signal: null });
    expect(r.seen).toEqual({ connected: true, query: 'unavailable' });
  });

  it('with one host: the process lives, the query on that connection is "database unavailable"', async () => {
    fake = await terminatingPostgres((i) => i === 0);
    const r = await poolConnect(`postgresql://svc@127.0.0.1:${fake.port}/payments`);
    expect(fake.connections()).toBe(1);
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 0, signal: null });
    expect(r.seen).toEqual({ connected: true, query: 'unavailable' });
  });
});
