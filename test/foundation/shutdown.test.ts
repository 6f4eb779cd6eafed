import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/app.js';
import { complaints, databaseEnv, freePort, isAlive, startService } from '../helpers/service-process.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** A DATA_DIR the embedded PostgreSQL's `postgres` user can reach when the tests run as root. */
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'pay-stop-'));
  chmodSync(d, 0o755);
  dirs.push(d);
  return d;
}

describe('a clean stop (Ctrl-C, docker stop)', () => {
  it('embedded profile: Ctrl-C (SIGINT to the whole process group) stops workers, pool, then PostgreSQL; exit 0, nothing logged at warn or above', async () => {
    const dir = dataDir();
    const svc = await startService(['--import', 'tsx', 'src/main.ts'], { DATA_DIR: dir, EMBEDDED_PG_PORT: String(await freePort()) }, { timeoutMs: 90_000 });
    const pgPid = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(isAlive(pgPid)).toBe(true);
    // The workers have polled (and hold pool connections) by now.
    await new Promise((r) => setTimeout(r, 1500));
    svc.interrupt('SIGINT');
    const { code, signal } = await svc.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(complaints(svc.lines())).toEqual([]);
    expect(svc.lines().some((l) => l.includes('"shutting down"'))).toBe(true);
    expect(isAlive(pgPid)).toBe(false);
  }, 120_000);

  it('DATABASE_URL profile: SIGTERM to the process (docker stop) and SIGINT to the group both exit 0 with nothing logged at warn or above', async () => {
    const db = await createTestDatabase();
    try {
      for (const how of ['SIGTERM', 'SIGINT'] as const) {
        const svc = await startService(['--import', 'tsx', 'src/main.ts'], databaseEnv(db.url));
        await new Promise((r) => setTimeout(r, 1000));
        if (how === 'SIGTERM') svc.child.kill('SIGTERM'); else svc.interrupt('SIGINT');
        expect(await svc.exited).toEqual({ code: 0, signal: null });
        expect(complaints(svc.lines())).toEqual([]);
      }
    } finally {
      await db.drop();
    }
  }, 120_000);
});
