import { spawn } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { createTestDatabase } from '../helpers/app.js';

// An empty database (not cloned from the template) to migrate from scratch.
let empty: { url: string; drop(): Promise<void> };
beforeAll(async () => {
  const tmp = await createTestDatabase();
  const u = new URL(tmp.url);
  const name = `${u.pathname.slice(1)}_empty`;
  const admin = new pg.Client({ connectionString: (u.pathname = '/postgres', u.toString()) });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  await tmp.drop();
  const url = new URL(tmp.url);
  url.pathname = `/${name}`;
  empty = {
    url: url.toString(),
    async drop() {
      const a = new pg.Client({ connectionString: (url.pathname = '/postgres', url.toString()) });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.end();
    },
  };
});
afterAll(async () => { await empty.drop(); });

function runMigrateProcess(url: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '-e', `import('./src/db/migrate.ts').then(m => m.migrate(process.env.U)).then(a => console.log(JSON.stringify(a)))`], {
      env: { ...process.env, U: url }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => p.kill('SIGKILL'), 50_000);
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

describe('migrations', () => {
  // Two cold tsx processes migrating at once (their race is the subject): they run in the hook's
  // time (hookTimeout), the test reads what they did.
  let a: { code: number | null; out: string };
  let b: { code: number | null; out: string };
  beforeAll(async () => {
    [a, b] = await Promise.all([runMigrateProcess(empty.url), runMigrateProcess(empty.url)]);
  });

  it('two processes migrating one empty database at once apply each migration exactly once', async () => {
    expect(a.code, a.out).toBe(0);
    expect(b.code, b.out).toBe(0);
    const applied = [...JSON.parse(a.out.trim().split('\n').pop()!), ...JSON.parse(b.out.trim().split('\n').pop()!)];
    expect(applied.sort()).toEqual(listMigrations().map((m) => m.name).sort());
    const c = new pg.Client({ connectionString: empty.url });
    await c.connect();
    const rows = await c.query('SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name');
    await c.end();
    expect(rows.rows.map((r) => r.migration_name)).toEqual(listMigrations().map((m) => m.name));
    for (const r of rows.rows) expect(r.finished_at).not.toBeNull();
  });

  it('a second run applies nothing', async () => {
    expect(await migrate(empty.url)).toEqual([]);
  });

  it('refuses to start when an applied migration file was changed', async () => {
    const c = new pg.Client({ connectionString: empty.url });
    await c.connect();
    const first = listMigrations()[0]!.name;
    await c.query(`UPDATE "_prisma_migrations" SET checksum = 'x' WHERE migration_name = $1`, [first]);
    await expect(migrate(empty.url)).rejects.toThrow(/changed after it was applied/);
    await c.query(`UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2`, [listMigrations()[0]!.checksum, first]);
    await c.end();
  });
});
