import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/app.js';
import pg from 'pg';
import { complaints, databaseEnv, freePort, isAlive, killAll, startService, type ServiceProcess } from '../helpers/service-process.js';
import { waitFor } from '../helpers/wait.js';

const dirs: string[] = [];
const postmasters: number[] = [];
afterAll(async () => {
  killAll();
  // A failed test may leave its PostgreSQL running (it has a process group of its own).
  for (const pid of postmasters) if (isAlive(pid)) process.kill(pid, 'SIGINT');
  await waitFor(() => !postmasters.some(isAlive), 'every PostgreSQL of these tests gone', 5000, 100).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A DATA_DIR the embedded PostgreSQL's `postgres` user can reach when the tests run as root. */
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'pay-stop-'));
  chmodSync(d, 0o755);
  dirs.push(d);
  return d;
}

// Each service's cold start under tsx is a hook's wait (hookTimeout); the tests time the stop.
describe('a clean stop (Ctrl-C, docker stop): embedded profile', () => {
  let svc: ServiceProcess;
  let pgPid: number;
  beforeAll(async () => {
    const dir = dataDir();
    svc = await startService(['--import', 'tsx', 'src/entry/main.ts'], { DATA_DIR: dir, EMBEDDED_PG_PORT: String(await freePort()) }, { timeoutMs: 50_000 });
    pgPid = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    postmasters.push(pgPid);
  });

  it('the banner\'s curl creates a bill; Ctrl-C (SIGINT to the whole process group) stops workers, pool, then PostgreSQL; exit 0, nothing logged at warn or above', async () => {
    // The start banner says what to do next, and its curl works as printed.
    await waitFor(() => svc.lines().some((l) => l.includes('Stop with Ctrl-C')), 'the start banner', 10_000, 100);
    const banner = svc.lines().join('\n');
    const curl = /curl -H "Authorization: Bearer (\S+)" \\\n\s+-d amount=100 -d shop_id=(\S+) (\S+\/api\/v1\/bill\/create)/.exec(banner);
    expect(curl, banner).not.toBeNull();
    expect(banner).toContain('4242 4242 4242 4242');
    expect(banner).toContain(`${svc.url}/cabinet`);
    expect(banner).toMatch(/sign in as demo@example\.com \/ demo-password/);
    const bill = await fetch(curl![3]!, {
      method: 'POST', headers: { authorization: `Bearer ${curl![1]}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `amount=100&shop_id=${curl![2]}`,
    });
    expect(bill.status).toBe(200);
    expect(((await bill.json()) as { link_page_url: string }).link_page_url).toMatch(/\/pay\/\w+$/);
    expect(isAlive(pgPid)).toBe(true);
    // Time, not an outcome: the workers' first polls, so the stop finds pool connections held. The
    // embedded PostgreSQL's credentials are the service's own, so no query here can see them.
    await new Promise((r) => setTimeout(r, 1500));
    svc.interrupt('SIGINT');
    const { code, signal } = await svc.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(complaints(svc.lines())).toEqual([]);
    expect(svc.lines().some((l) => l.includes('"shutting down"'))).toBe(true);
    expect(isAlive(pgPid)).toBe(false);
  });
});

for (const how of ['SIGTERM', 'SIGINT'] as const) {
  describe(`a clean stop (Ctrl-C, docker stop): DATABASE_URL profile, ${how}`, () => {
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let watch: pg.Client;
    let svc: ServiceProcess;
    beforeAll(async () => {
      db = await createTestDatabase();
      watch = new pg.Client({ connectionString: db.url });
      await watch.connect();
      svc = await startService(['--import', 'tsx', 'src/entry/main.ts'], databaseEnv(db.url), { timeoutMs: 50_000 });
    });
    afterAll(async () => {
      await watch?.end();
      await db?.drop();
    });

    it(`${how === 'SIGTERM' ? 'SIGTERM to the process (docker stop)' : 'SIGINT to the group (Ctrl-C)'} exits 0 with nothing logged at warn or above`, async () => {
      // A worker's claim (FOR UPDATE SKIP LOCKED) on a connection of the service: the workers have
      // polled and hold pool connections, which the stop must give back.
      const claimed = async () => (await watch.query(`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE '%SKIP LOCKED%'`)).rows[0].n > 0;
      await waitFor(claimed, 'a worker\'s claim on a connection of the service', 10_000, 50);
      if (how === 'SIGTERM') svc.child.kill('SIGTERM'); else svc.interrupt('SIGINT');
      expect(await svc.exited).toEqual({ code: 0, signal: null });
      expect(complaints(svc.lines())).toEqual([]);
    });
  });
}
