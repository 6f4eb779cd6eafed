import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/app.js';
import { databaseEnv } from '../helpers/service-process.js';
import { choosePort, EmbeddedStartError, portFree } from '../../src/db/embedded.js';

/**
 * Issue 30 item 4: a second `npm start` (another checkout) whose ports are taken chooses a free
 * port for embedded PostgreSQL, or says in one line what to do: never a stack trace.
 */
let held: Server;
let port: number;
const dirs: string[] = [];
beforeAll(async () => {
  held = createServer();
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
  port = (held.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((r) => held.close(() => r()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `npm start`'s entry as a child process; its exit code and everything it wrote. */
function start(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/main.ts'], {
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

describe('ports already taken', () => {
  it('embedded PostgreSQL\'s usual port taken: the next free one is chosen; a port set explicitly is refused in one line', async () => {
    expect(await portFree(port)).toBe(false);
    const chosen = await choosePort(port, false);
    expect(chosen).toBeGreaterThan(port);
    expect(chosen).toBeLessThanOrEqual(port + 20);
    expect(await portFree(chosen)).toBe(true);
    await expect(choosePort(port, true)).rejects.toThrow(EmbeddedStartError);
    await expect(choosePort(port, true)).rejects.toThrow(/EMBEDDED_PG_PORT/);
    expect(await choosePort(chosen, true)).toBe(chosen);
  });
});

// Each `npm start` is a cold tsx process whose exit is the subject: it runs in a hook
// (hookTimeout), the test reads what it left.
describe('npm start with EMBEDDED_PG_PORT taken', () => {
  let r: { code: number | null; out: string };
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pay-port-'));
    chmodSync(dir, 0o755);
    dirs.push(dir);
    r = await start({ DATA_DIR: dir, EMBEDDED_PG_PORT: String(port), PORT: '1' });
  });

  it('exits 78 with one line saying what to do', () => {
    expect(r.code, r.out).toBe(78);
    const lines = r.out.trim().split('\n');
    expect(lines, r.out).toHaveLength(1);
    expect(lines[0]).toMatch(/^embedded PostgreSQL cannot start: port \d+ \(EMBEDDED_PG_PORT\) is taken .*set EMBEDDED_PG_PORT to a free port/);
  });
});

describe('npm start with its HTTP PORT taken', () => {
  let r: { code: number | null; out: string };
  beforeAll(async () => {
    const db = await createTestDatabase();
    try {
      r = await start(databaseEnv(db.url, { PORT: String(port) }));
    } finally {
      await db.drop();
    }
  });

  it('exits 78 with one line naming PORT (no stack trace)', () => {
    expect(r.code, r.out).toBe(78);
    const errors = r.out.trim().split('\n').filter((l) => !l.startsWith('{'));
    expect(errors, r.out).toEqual([expect.stringMatching(new RegExp(`^port ${port} on 127\\.0\\.0\\.1 is taken .*set PORT to a free port`))]);
    expect(r.out).not.toMatch(/\n\s+at /);
  });
});
