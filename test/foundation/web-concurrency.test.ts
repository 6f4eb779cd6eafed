import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestDatabase } from '../helpers/app.js';
import { complaints, databaseEnv, isAlive, killAll, startService, type ServiceProcess } from '../helpers/service-process.js';
import { waitFor } from '../helpers/wait.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => { db = await createTestDatabase(); });
afterAll(async () => { killAll(); await db.drop(); });

/** GET on a connection of its own (the cluster hands out connections, not requests). */
const getFresh = (url: string) => new Promise<number>((resolve, reject) => {
  get(url, { agent: false }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode!)); }).on('error', reject);
});

const pidsOf = (lines: string[], msg: string) => new Set(lines.flatMap((l) => {
  try { const o = JSON.parse(l); return o.msg === msg ? [o.pid as number] : []; } catch { return []; }
}));

describe('WEB_CONCURRENCY (node:cluster)', () => {
  it('defaults to one process; anything but an integer >= 1 stops start-up naming the setting', () => {
    const base = { ADMIN_API_TOKEN: 'x'.repeat(32), TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };
    expect(loadConfig(base).webConcurrency).toBe(1);
    expect(loadConfig({ ...base, WEB_CONCURRENCY: '4' }).webConcurrency).toBe(4);
    for (const bad of ['0', '-1', 'two', '1.5']) expect(() => loadConfig({ ...base, WEB_CONCURRENCY: bad })).toThrow(/WEB_CONCURRENCY must be an integer >= 1/);
  });
});

for (const how of ['SIGTERM to the primary (docker stop)', 'SIGINT to the process group (Ctrl-C)'] as const) {
  describe(`WEB_CONCURRENCY=2, then ${how}`, () => {
    // The cold starts under tsx (the primary, then its two API processes) are the hook's wait
    // (hookTimeout); the test checks who serves and times the stop.
    let svc: ServiceProcess;
    beforeAll(async () => {
      svc = await startService(['--import', 'tsx', 'src/entry/main.ts'], databaseEnv(db.url, { WEB_CONCURRENCY: '2' }), { timeoutMs: 40_000 });
      // /ready answers once the first API process listens; the primary logs when all do.
      await waitFor(() => svc.lines().some((l) => l.includes('API processes listening')), 'the primary\'s "API processes listening"', 15_000, 100);
    });

    it(`two API processes serve, the workers run once in the primary; ${how} stops all with exit 0 and nothing logged at warn or above`, async () => {
      const primary = svc.child.pid!;
      for (let i = 0; i < 30; i++) expect(await getFresh(`${svc.url}/health`)).toBe(200);
      const lines = svc.lines();
      const servers = pidsOf(lines, 'request completed');
      expect(servers.size).toBe(2);
      expect(servers.has(primary)).toBe(false);
      // The primary runs the background workers; the API processes start none.
      const started = lines.map((l) => { try { return JSON.parse(l); } catch { return null; } })
        .filter((o) => o?.msg?.includes('API processes listening'));
      expect(started).toHaveLength(1);
      expect(started[0]).toMatchObject({ pid: primary, processes: 2, workers: expect.arrayContaining(['outbox']) });

      if (how.startsWith('SIGTERM')) svc.child.kill('SIGTERM'); else svc.interrupt('SIGINT');
      expect(await svc.exited).toEqual({ code: 0, signal: null });
      for (const pid of servers) expect(isAlive(pid), `API process ${pid}`).toBe(false);
      expect(complaints(svc.lines())).toEqual([]);
      expect(pidsOf(svc.lines(), 'shutting down')).toEqual(new Set([primary, ...servers]));
    });
  });
}
