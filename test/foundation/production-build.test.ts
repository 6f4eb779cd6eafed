import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestDatabase } from '../helpers/app.js';
import { ensureBuilt } from '../helpers/build.js';
import { complaints, databaseEnv, killAll, startService, type ServiceProcess } from '../helpers/service-process.js';
import { waitFor } from '../helpers/wait.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let svc: ServiceProcess;
let worker: ChildProcess | undefined;
const tmp = mkdtempSync(join(tmpdir(), 'pay-prod-'));
const modules = join(tmp, 'modules.txt');
const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
const START_PROD = scripts['start:prod']!.split(' ');
const swaggerUiStatic = join(createRequire(import.meta.url).resolve('@fastify/swagger-ui'), '..', 'static');
const get = (path: string) => fetch(`${svc.url}${path}`).then(async (r) => ({ status: r.status, body: Buffer.from(await r.arrayBuffer()) }));

beforeAll(async () => {
  ensureBuilt();
  db = await createTestDatabase();
  // `npm run start:prod` (its node flags included) without npm; the recorder lists every module it loads.
  svc = await startService(['--import', './test/helpers/record-modules.mjs', ...START_PROD.slice(1)], databaseEnv(db.url, { RECORD_MODULES_FILE: modules }));
  // Raised: when dist/ is older than the sources the whole `npm run build` (tsc, then esbuild) runs here.
}, 600_000);

afterAll(async () => {
  killAll();
  worker?.kill('SIGKILL');
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

  it('finds every file it reads beside its code from the bundle: views, assets, favicon, the API docs (Swagger UI) and the migrations', async () => {
    // Rendered eta views (cabinet, operator console), each through its own views directory.
    const cabinet = await get('/cabinet/login');
    expect(cabinet.status).toBe(200);
    expect(cabinet.body.toString()).toMatch(/<form[^>]+action="\/cabinet\/login"/);
    const console_ = await get('/operator/login');
    expect(console_.status).toBe(200);
    expect(console_.body.toString()).toMatch(/<form[^>]+action="\/operator\/login"/);
    // Static files, byte for byte.
    expect((await get('/cabinet/assets/app.js')).body.toString()).toBe(readFileSync('src/cabinet/assets/app.js', 'utf8'));
    const consoleCss = await get('/operator/assets/app.css');
    expect(consoleCss.body.toString()).toBe(readFileSync('src/cabinet/assets/app.css', 'utf8') + readFileSync('src/operator/assets/console.css', 'utf8'));
    expect((await get('/favicon.ico')).body.equals(readFileSync('src/assets/favicon.ico'))).toBe(true);
    // The API docs: the spec, the UI page and the UI's own files from @fastify/swagger-ui's package.
    const spec = await get('/docs/json');
    expect(spec.status).toBe(200);
    expect(Object.keys(JSON.parse(spec.body.toString()).paths)).toContain('/api/v1/bill/create');
    const ui = await get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.body.toString()).toContain('swagger-ui');
    for (const f of ['swagger-ui-bundle.js', 'index.css', 'logo.svg']) {
      const r = await get(`/docs/static/${f}`);
      expect(r.status, f).toBe(200);
      expect(r.body.equals(readFileSync(join(swaggerUiStatic, f))), f).toBe(true);
    }
    // /ready compares the applied migrations with prisma/migrations, found from the code's place.
    expect((await get('/ready')).status).toBe(200);
  });

  it('runs one bundled file of ours: dist/main.js, no TypeScript, no tsx, and few modules from node_modules', () => {
    const urls = readFileSync(modules, 'utf8').trim().split('\n');
    const ours = urls.filter((u) => u.startsWith('file://') && !u.includes('/node_modules/') && !u.includes('/test/helpers/'));
    expect(ours.map((u) => u.replace(/.*\/dist\//, 'dist/'))).toEqual(['dist/main.js']);
    expect(urls.filter((u) => /\.[cm]?ts$/.test(u) || u.includes('/node_modules/tsx/'))).toEqual([]);
    // Only what the build leaves out of the bundle: the native bcrypt, Prisma's query compiler
    // (loaded at the first Prisma query, which the operator API calls above made), in its build
    // for size (prisma/schema.prisma `compilerBuild`: ~11 MB less RSS than the default "fast"),
    // its WebAssembly read from the file the build wrote beside the bundle, never from the
    // package's base64 module (docs/adr/0143-prisma-loaded-lean-in-the-bundles.md).
    const packages = new Set(urls.filter((u) => u.includes('/node_modules/')).map((u) => /\/node_modules\/((@[^/]+\/)?[^/]+)/.exec(u)![1]));
    expect([...packages].sort()).toEqual(['@prisma/client', 'bcrypt']);
    expect(urls.some((u) => /query_compiler_small_bg\.postgresql\.mjs$/.test(u))).toBe(true);
    expect(urls.filter((u) => /wasm-base64/.test(u))).toEqual([]);
    expect(existsSync('dist/query_compiler_small_bg.postgresql.wasm')).toBe(true);
  });

  it('the workers entry (dist/worker-main.js, bundled too) starts its workers and stops on SIGTERM with exit 0', async () => {
    const child = worker = spawn(process.execPath, [...scripts['worker:prod']!.split(' ').slice(1)], {
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, LOG_FORMAT: 'json', ...databaseEnv(db.url) }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    await waitFor(() => out.includes('workers started') || child.exitCode !== null, 'the worker\'s "workers started" (or its exit)', 20_000, 50);
    expect(out).toContain('workers started');
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    const lines = out.split('\n').filter((l) => l.trim() !== '');
    expect(complaints(lines)).toEqual([]);
  });

  it('stops on SIGTERM with exit 0 and nothing logged at warn or above', async () => {
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toEqual({ code: 0, signal: null });
    expect(complaints(svc.lines())).toEqual([]);
  });
});
