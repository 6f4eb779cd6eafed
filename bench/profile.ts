/**
 * npm run bench:profile -- <scenario> [seconds]: one service scenario under load with
 * `node --cpu-prof`, then the hottest functions and packages by self time.
 * Scenarios: bill_create, bill_status, payment, payout, merchant_balance. PROFILE_OPEN_RATE=<req/s>
 * drives an open loop at that rate instead of PROFILE_CONNECTIONS (default 16). The .cpuprofile is
 * kept in bench/profiles/ (open it in Chrome DevTools or speedscope).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { createBenchDatabase, dropBenchDatabase, seededBillId, withClient } from './lib/pg.js';
import { load, type LoadSpec } from './lib/load.js';
import { openLoop } from './lib/open-loop.js';
import { prepareService, ROOT, startService } from './lib/proc.js';
import { serviceEnv, setupTenant, type Tenant } from './scenarios/service.js';

const scenario = process.argv[2] ?? 'bill_create';
/** PROFILE_OPEN_RATE=<req/s>: an open loop at that rate instead of the closed loop. */
const openRate = Number(process.env.PROFILE_OPEN_RATE ?? 0);
/** User + system CPU of a process so far, ms (clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const seconds = Number(process.argv[3] ?? 5);
const dir = join(ROOT, 'bench', 'profiles');
mkdirSync(dir, { recursive: true });
const before = new Set(readdirSync(dir));
const dbName = `bench_profile_${Date.now()}`;
const url = await createBenchDatabase(dbName);
const env = serviceEnv(url);
prepareService();
const spawnedAt = Date.now();
const child = await startService('service', 'main', env, { extraArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
let loadFrom = 0;
let loadTo = 0;
const base = `http://127.0.0.1:${child.port}`;
try {
  // PROFILE_TENANTS merchants (default 8), requests round-robin over them as in the bench: with
  // one merchant the payments and payouts queue on its balance and merchant rows, and the
  // profile would show the lock's wait instead of the work.
  const tenants: Tenant[] = [];
  for (let k = 0; k < Number(process.env.PROFILE_TENANTS ?? 8); k++) tenants.push(await setupTenant(base, env.ADMIN_API_TOKEN!, 'http://127.0.0.1:9'));
  const count = tenants.length;
  await withClient(url, (c) => c.query(
    `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in)
     SELECT ${seededBillId('P', 'n')}, ($1::text[])[1 + n % $3], ($2::text[])[1 + n % $3], 100.00, 'RUB' FROM generate_series(1, 50000) n`,
    [tenants.map((x) => x.merchantId), tenants.map((x) => x.shopId), count]));
  let i = 1;
  let n = 0;
  let k = 0;
  const next = () => tenants[k++ % count]!;
  const auth = (t: Tenant) => ({ authorization: `Bearer ${t.token}` });
  const json = (t: Tenant) => ({ ...auth(t), 'content-type': 'application/json', accept: 'application/json' });
  /** The next seeded bill and its merchant (bill n belongs to tenant n % count). */
  const bill = () => { const id = i++; return { id: `P${id.toString(16).padStart(9, '0')}`, t: tenants[id % count]! }; };
  const t0 = tenants[0]!;
  const specs: Record<string, LoadSpec> = {
    bill_create: {
      url: `${base}/api/v1/bill/create`, method: 'POST', headers: json(t0),
      setup: () => { const t = next(); return { path: '/api/v1/bill/create', headers: json(t), body: JSON.stringify({ amount: '100.00', shop_id: t.shopId }) }; },
    },
    bill_status: { url: `${base}/api/v1/bill/status?id=x`, headers: auth(t0), setup: () => { const b = bill(); return { path: `/api/v1/bill/status?id=${b.id}`, headers: auth(b.t) }; } },
    payment: {
      url: `${base}/pay/x`, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/30', card_cvc: '123' }),
      setup: () => ({ path: `/pay/${bill().id}` }),
    },
    payout: {
      url: `${base}/api/v1/payout/personal/create`, method: 'POST', headers: json(t0),
      setup: () => { const t = next(); return { path: '/api/v1/payout/personal/create', headers: json(t), body: JSON.stringify({ amount: '1.00', payout_account_id: t.payoutAccountId, order_id: `p-${n++}` }) }; },
    },
    merchant_balance: { url: `${base}/api/v1/merchant/balance`, headers: auth(t0), setup: () => ({ path: '/api/v1/merchant/balance', headers: auth(next()) }) },
  };
  const spec = specs[scenario];
  if (!spec) throw new Error(`unknown scenario ${scenario}`);
  await load(spec, 64, 2);
  loadFrom = Date.now() - spawnedAt;
  const cpu0 = cpuMs(child.pid);
  if (openRate > 0) {
    const r = await openLoop(spec, openRate, seconds);
    loadTo = Date.now() - spawnedAt;
    process.stdout.write(`${scenario}: open loop at ${openRate} req/s: ${r.ok} of ${r.sent} 2xx, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, max ${r.max_ms} ms, ${r.sockets} sockets; generator CPU ${r.generator_cpu_pct}%, send lag p99 ${r.send_lag_p99_ms} ms\nslowest answer per 100 ms of due time: ${r.worst_by_100ms.join(' ')}\n`);
  } else {
    const r = await load(spec, Number(process.env.PROFILE_CONNECTIONS ?? 16), seconds);
    loadTo = Date.now() - spawnedAt;
    process.stdout.write(`${scenario}: ${r.rps} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, ${r.non_2xx} non-2xx\n`);
  }
  process.stdout.write(`service CPU ${Math.round((100 * (cpuMs(child.pid) - cpu0)) / (loadTo - loadFrom))}% of one core over the window, peak RSS ${child.peakRssMb()} MB\n`);
} finally {
  await child.stop();
  await dropBenchDatabase(dbName);
}

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; hitCount: number }

/**
 * The compiled service is one bundle (dist/main.js): each frame is mapped back through the
 * bundle's source map to its file under src/ or node_modules/, so the tables name our modules
 * and packages as the TypeScript run did.
 */
const maps = new Map<string, SourceMap | null>();
function original(frame: Node['callFrame']): { url: string; line: number } {
  const path = frame.url.replace(/^file:\/\//, '');
  if (!path.endsWith('.js') || !path.startsWith(ROOT)) return { url: path, line: frame.lineNumber };
  if (!maps.has(path)) {
    try { maps.set(path, new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')))); } catch { maps.set(path, null); }
  }
  const e = maps.get(path)?.findEntry(frame.lineNumber, frame.columnNumber);
  if (!e || !('originalSource' in e)) return { url: path, line: frame.lineNumber };
  return { url: resolve(dirname(path), e.originalSource.replace(/^file:\/\//, '')), line: e.originalLine };
}
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }
const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
const prof = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
// Only the samples taken while the measured load ran: start-up (module loading, tsx compiling)
// and the warm-up are left out. Times are relative to the process start (close enough to spawn).
const hits = new Map<number, number>();
let at = 0;
for (let k = 0; k < prof.samples.length; k++) {
  at += prof.timeDeltas[k]! / 1000;
  if (at >= loadFrom && at <= loadTo) hits.set(prof.samples[k]!, (hits.get(prof.samples[k]!) ?? 0) + 1);
}
for (const x of prof.nodes) x.hitCount = hits.get(x.id) ?? 0;
const total = prof.nodes.reduce((s, x) => s + x.hitCount, 0);
const busy = total - prof.nodes.filter((x) => x.callFrame.functionName === '(idle)').reduce((s, x) => s + x.hitCount, 0);
const byFn = new Map<string, number>();
const byPkg = new Map<string, number>();
for (const x of prof.nodes) {
  const o = original(x.callFrame);
  const u = o.url.replace(ROOT, '');
  const fn = `${x.callFrame.functionName || '(anonymous)'} ${u ? `${u}:${o.line + 1}` : ''}`.trim();
  byFn.set(fn, (byFn.get(fn) ?? 0) + x.hitCount);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1] ?? (u.startsWith('/src/') ? u.split('/').slice(0, 3).join('/') : u.startsWith('node:') ? 'node:internal' : (x.callFrame.functionName.startsWith('(') ? x.callFrame.functionName : 'other'));
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + x.hitCount);
}
const top = (m: Map<string, number>, k: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, h]) => `  ${(100 * h / total).toFixed(1).padStart(5)}%  ${n}`).join('\n');
// The measured window's stacks in the collapsed format ("root;caller;callee count" per line) that
// speedscope, flamegraph.pl and inferno read: a flame graph's file small enough to keep beside the
// report (docs/profiles/). Frames are named as the tables below name them.
const parentOf = new Map<number, number>();
for (const x of prof.nodes as Array<Node & { children?: number[] }>) for (const c of x.children ?? []) parentOf.set(c, x.id);
const byId = new Map(prof.nodes.map((x) => [x.id, x]));
const label = (x: Node) => {
  const o = original(x.callFrame);
  const u = o.url.replace(ROOT, '').replace(/^.*\/node_modules\//, '');
  return `${x.callFrame.functionName || '(anonymous)'}${u ? ` ${u}:${o.line + 1}` : ''}`.replace(/;/g, ',');
};
const folded = new Map<string, number>();
for (const [id, n] of hits) {
  const chain: string[] = [];
  for (let cur: number | undefined = id; cur !== undefined; cur = parentOf.get(cur)) chain.push(label(byId.get(cur)!));
  const key = chain.reverse().join(';');
  folded.set(key, (folded.get(key) ?? 0) + n);
}
const foldedFile = join(dir, `${scenario}${openRate > 0 ? `-open-${openRate}` : ''}.folded`);
writeFileSync(foldedFile, [...folded].map(([k, n]) => `${k} ${n}`).join('\n') + '\n');
process.stdout.write(`profile bench/profiles/${file} (${total} samples in the measured window, ${(100 * busy / Math.max(1, total)).toFixed(0)}% busy), collapsed stacks ${foldedFile.replace(`${ROOT}/`, '')}\nself time by package:\n${top(byPkg, 15)}\nhottest functions:\n${top(byFn, 25)}\n`);
