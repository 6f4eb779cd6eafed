import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestDatabase } from '../helpers/app.js';
import { ensureBuilt } from '../helpers/build.js';
import { complaints, databaseEnv, killAll, startService, type ServiceProcess } from '../helpers/service-process.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let svc: ServiceProcess;
const tmp = mkdtempSync(join(tmpdir(), 'pay-prod-'));
const modules = join(tmp, 'modules.txt');

beforeAll(async () => {
  ensureBuilt();
  db = await createTestDatabase();
  // Plain node on dist/main.js (`npm run start:prod`); the recorder lists every module it loads.
  svc = await startService(['--import', './test/helpers/record-modules.mjs', 'dist/main.js'], databaseEnv(db.url, { RECORD_MODULES_FILE: modules }));
}, 600_000);

afterAll(async () => {
  killAll();
  await db?.drop();
  rmSync(tmp, { recursive: true, force: true });
});

const admin = (path: string, body: unknown) => fetch(`${svc.url}/admin/v1${path}`, {
  method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
}).then(async (r) => ({ status: r.status, json: await r.json() as any }));

describe('the production build (npm run build, node dist/main.js)', () => {
  it('serves /ready and a bill/create from compiled JavaScript, with its pages and cabinet assets found from dist/', async () => {
    expect((await fetch(`${svc.url}/ready`)).status).toBe(200);
    const m = await admin('/merchants', { name: 'Prod build', email: 'prod-build@example.test' });
    expect(m.status).toBe(201);
    await fetch(`${svc.url}/admin/v1/merchants/${m.json.id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ verified: true }),
    });
    const shop = await admin(`/merchants/${m.json.id}/shops`, { name: 'Main' });
    expect(shop.status).toBe(201);
    const bill = await fetch(`${svc.url}/api/v1/bill/create`, {
      method: 'POST', headers: { authorization: `Bearer ${m.json.api_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '100.00', shop_id: shop.json.id }),
    });
    const b = await bill.json() as { bill_id: string; success: string };
    expect(bill.status, JSON.stringify(b)).toBe(200);
    expect((await fetch(`${svc.url}/pay/${b.bill_id}`)).status).toBe(200);
    // Non-TS files the app reads next to its modules (eta views, CSS) were copied into dist/.
    expect((await fetch(`${svc.url}/cabinet/login`)).status).toBe(200);
    const css = await fetch(`${svc.url}/cabinet/assets/app.css`);
    expect(css.status).toBe(200);
    expect(await css.text()).toBe(readFileSync('src/cabinet/assets/app.css', 'utf8'));
  });

  it('loads no TypeScript and no tsx: every module of the process is JavaScript from dist/ or node_modules', () => {
    const urls = readFileSync(modules, 'utf8').trim().split('\n');
    const ours = urls.filter((u) => u.startsWith('file://') && !u.includes('/node_modules/') && !u.includes('/test/helpers/'));
    expect(ours.length).toBeGreaterThan(50);
    expect(ours.filter((u) => !u.includes('/dist/'))).toEqual([]);
    expect(urls.filter((u) => /\.[cm]?ts$/.test(u) || u.includes('/node_modules/tsx/'))).toEqual([]);
    expect(urls.some((u) => u.endsWith('/dist/generated/prisma/client.js'))).toBe(true);
  });

  it('stops on SIGTERM with exit 0 and nothing logged at warn or above', async () => {
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toEqual({ code: 0, signal: null });
    expect(complaints(svc.lines())).toEqual([]);
  });
});
