/**
 * Restore drill (`npm run drill:restore`, docs/operations.md "Backups and point-in-time restore"):
 * a PostgreSQL of its own with WAL archiving, the real service driven with payments, payouts and
 * refunds, a base backup taken under that load, more load, a restore point noted, more load; then
 * the data directory is destroyed, the base backup plus the archived WAL are restored up to the
 * point, the service (compiled, dist/) starts on the restored database and every operation
 * acknowledged before the point must be there exactly once (through the API and in SQL), with
 * the ledger balanced.
 * Operations sent after the point must be absent (the restore stopped where it was told);
 * those answered in between may go either way and are only counted.
 *
 * Last line: `restore drill: acked N, found N, ledger balanced, restored in S s`; exit 1 when
 * anything acknowledged is missing or doubled, the ledger does not verify, or the restore ran
 * past the point. RESTORE_DRILL_TARGET=immediate restores only to the end of the base backup,
 * which must make the drill fail (operations acknowledged after the backup are then missing).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { admin, call, freePort, kill, startProc, startReceiver, type Proc } from '../test/reliability/harness.js';
import { checkInvariants } from '../test/reliability/invariants.js';
import { ensureBuilt } from '../test/helpers/build.js';

/** The server binaries: PG_BIN, else Debian's newest installed PostgreSQL (15 here and in CI). */
const BIN = process.env.PG_BIN ?? (() => {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0] ?? '15', 'bin');
})();
const TARGET = process.env.RESTORE_DRILL_TARGET === 'immediate' ? 'immediate' : 'point';
/** Load phases (ms): before the backup, after it, after the restore point. */
const DRIVE_MS = { beforeBackup: 3_000, afterBackup: 4_000, afterPoint: 2_000 };
const CONCURRENCY = 4;
const SERVICE_ENV = { RUN_WORKERS: 'true', WORKER_LEASE_MS: '3000', LOG_LEVEL: 'error' };
/** The compiled service, as production runs it (it starts in about half tsx's CPU time). */
const SERVICE_ENTRY = 'dist/main.js';
const startService = (dbUrl: string) => startProc('api', dbUrl, SERVICE_ENV, undefined, SERVICE_ENTRY);

type Kind = 'bill' | 'payment' | 'payout' | 'refund';
/** `status`: a payment's final status as the pay form answered it (the restore must keep it). */
interface Ack { kind: Kind; id: string; merchant: number; sentAt: number; ackedAt: number; status?: string }
interface Merchant { id: string; token: string; shopId: string }

const log = (s: string) => console.log(`restore drill: ${s}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => (ms / 1000).toFixed(1);

// PostgreSQL refuses to run as root: as root, the drill's cluster belongs to the postgres user
// (as test/helpers/auto-failover.ts and test/helpers/pgbouncer.ts run theirs).
const asRoot = process.getuid?.() === 0;
function pgCmd(cmd: string, args: string[]): void {
  const [c, a] = asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  const r = spawnSync(c, a, { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}`);
}
function giveToPostgres(path: string): void {
  if (!asRoot) return;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  chownSync(path, id('-u'), id('-g'));
}

async function query<T extends pg.QueryResultRow = any>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  c.on('error', () => {});
  await c.connect();
  try { return (await c.query<T>(sql, params)).rows; } finally { await c.end().catch(() => {}); }
}

async function waitFor(what: string, ok: () => Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

// --- the cluster -------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'restore-drill-'));
chmodSync(dir, 0o755);
giveToPostgres(dir);
const data = join(dir, 'data');
const archive = join(dir, 'archive');
const base = join(dir, 'base');
let port = 0;
let pgUp = false;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
let service: Proc | undefined;

const serverUrl = (db: string) => `postgresql://postgres@127.0.0.1:${port}/${db}`;
const pgStart = () => { pgUp = true; pgCmd(join(BIN, 'pg_ctl'), ['-D', data, '-l', join(dir, 'postgres.log'), '-w', '-t', '120', 'start']); };
const pgStopImmediate = () => { if (pgUp) pgCmd(join(BIN, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']); pgUp = false; };

async function cleanup(): Promise<void> {
  await kill(service);
  await receiver?.close().catch(() => {});
  try { pgStopImmediate(); } catch { /* already down */ }
  rmSync(dir, { recursive: true, force: true });
}
// Ctrl-C reaches this process twice (from the terminal and relayed by tsx): the second must not
// kill it half-way through its cleanup.
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = true;
    void cleanup().finally(() => process.exit(130));
  });
}

async function createCluster(): Promise<void> {
  port = await freePort();
  pgCmd(join(BIN, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  pgCmd('mkdir', [archive]);
  // The archiving of docs/operations.md; `test ! -f` never overwrites a segment already archived.
  appendFileSync(join(data, 'postgresql.conf'), [
    `listen_addresses = '127.0.0.1'`, `port = ${port}`, `unix_socket_directories = '${dir}'`,
    `wal_level = replica`, `archive_mode = on`,
    `archive_command = 'test ! -f ${archive}/%f && cp %p ${archive}/%f'`, '',
  ].join('\n'));
  pgStart();
  await query(serverUrl('postgres'), 'CREATE DATABASE payments');
}

// --- the load ----------------------------------------------------------------------------------
const merchants: Merchant[] = [];
const acks: Ack[] = [];
const paid: Array<{ m: number; paymentId: string }> = [];
const failures: Array<{ what: string; status: number; body: unknown }> = [];
const as = (i: number) => ({ authorization: `Bearer ${merchants[i]!.token}` });

function ok(what: string, r: { status: number; json: any }): boolean {
  if (r.status >= 200 && r.status < 300) return true;
  failures.push({ what, status: r.status, body: r.json });
  return false;
}

async function payBill(url: string, m: number): Promise<void> {
  const sent = Date.now();
  const bill = await call(url, 'POST', '/api/v1/bill/create', { amount: `${randomInt(100, 900)}.00`, shop_id: merchants[m]!.shopId }, as(m));
  if (!ok('bill/create', bill)) return;
  acks.push({ kind: 'bill', id: bill.json.bill_id, merchant: m, sentAt: sent, ackedAt: Date.now() });
  const sent2 = Date.now();
  const r = await call(url, 'POST', `/pay/${bill.json.bill_id}`, { method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/39', card_cvc: '123' });
  if (!ok('pay', r)) return;
  const final = FINAL_PAYMENT.includes(r.json.status) ? r.json.status as string : undefined;
  acks.push({ kind: 'payment', id: r.json.payment_id, merchant: m, sentAt: sent2, ackedAt: Date.now(), status: final });
  if (r.json.status === 'SUCCESS') paid.push({ m, paymentId: r.json.payment_id });
}

async function payout(url: string, m: number): Promise<void> {
  const sent = Date.now();
  const r = await call(url, 'POST', '/api/v1/payout/regular/create', {
    amount: '10.00', currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN IVANOV',
    order_id: `drill-${randomBytes(6).toString('hex')}`,
  }, as(m));
  if (!ok('payout/regular/create', r)) return;
  for (const p of r.json.data) acks.push({ kind: 'payout', id: p.id, merchant: m, sentAt: sent, ackedAt: Date.now() });
}

async function refund(url: string, m: number): Promise<void> {
  const i = paid.findIndex((p) => p.m === m);
  if (i < 0) return payBill(url, m);
  const p = paid.splice(i, 1)[0]!;
  const sent = Date.now();
  const r = await call(url, 'POST', '/api/v1/refund/partial/create', { payment_id: p.paymentId, amount: '5.00' }, as(m));
  if (ok('refund/partial/create', r)) acks.push({ kind: 'refund', id: r.json.id, merchant: m, sentAt: sent, ackedAt: Date.now() });
}

/** Concurrent clients paying bills, paying out and refunding until `stop()` says so. */
function drive(url: string): { stop(): Promise<void> } {
  let stopping = false;
  const client = async () => {
    while (!stopping) {
      const m = randomInt(merchants.length);
      const roll = randomInt(10);
      await (roll < 5 ? payBill(url, m) : roll < 8 ? payout(url, m) : refund(url, m));
    }
  };
  const running = Promise.all(Array.from({ length: CONCURRENCY }, client));
  return { stop: async () => { stopping = true; await running; } };
}

async function setupMerchant(url: string, i: number): Promise<Merchant> {
  const created = await admin(url, 'POST', '/merchants', { name: `Drill ${i}`, email: `drill${i}@example.test` });
  if (!ok('merchants', created)) throw new Error(`operator API: ${JSON.stringify(created)}`);
  const id = created.json.id as string;
  const steps = [
    await admin(url, 'PATCH', `/merchants/${id}`, { verified: true, grants: { refunds: true, regular_payouts: true } }),
    await admin(url, 'PUT', `/merchants/${id}/payout-webhook`, { url: receiver!.url }),
    await admin(url, 'POST', `/merchants/${id}/balance-adjustments`, { currency: 'RUB', amount: '100000', reason: 'restore drill funding' }),
  ];
  const shop = await admin(url, 'POST', `/merchants/${id}/shops`, { name: `Drill shop ${i}`, result_url: receiver!.url });
  for (const s of [...steps, shop]) if (!ok('merchant setup', s)) throw new Error(`operator API: ${JSON.stringify(s)}`);
  return { id, token: created.json.api_token, shopId: shop.json.id };
}

// --- the checks after the restore ---------------------------------------------------------------
const FINAL_PAYMENT = ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'];
const TABLE: Record<Kind, string> = { bill: 'bills', payment: 'payments', payout: 'payouts', refund: 'refunds' };
const STATUS_PATH: Record<Kind, string> = {
  bill: '/api/v1/bill/status?id=', payment: '/api/v1/payment/status?id=', payout: '/api/v1/payout/status?id=', refund: '/api/v1/refund/status?id=',
};

/** How many rows each id has in its table. */
async function rowsPerId(dbUrl: string, list: Ack[]): Promise<Map<string, number>> {
  const n = new Map<string, number>();
  for (const kind of Object.keys(TABLE) as Kind[]) {
    const ids = list.filter((a) => a.kind === kind).map((a) => a.id);
    const rows = await query<{ id: string; n: number }>(dbUrl, `SELECT id, count(*)::int AS n FROM ${TABLE[kind]} WHERE id = ANY($1) GROUP BY id`, [ids]);
    for (const r of rows) n.set(r.id, r.n);
  }
  return n;
}

/**
 * What is wrong with the service's answer for the object, asked by its id as the merchant that
 * made it: null when it answers it (with the final status it acknowledged, for a payment).
 */
async function apiProblem(url: string, a: Ack): Promise<string | null> {
  const r = await call(url, 'GET', `${STATUS_PATH[a.kind]}${encodeURIComponent(a.id)}`, undefined, as(a.merchant));
  if (r.status !== 200 || r.json?.id !== a.id) return `the API answers ${r.status}`;
  if (a.status && r.json.status !== a.status) return `acknowledged ${a.status}, the API answers ${r.json.status}`;
  return null;
}

async function main(): Promise<number> {
  const buildAt = Date.now();
  ensureBuilt();
  if (Date.now() - buildAt > 1000) log(`dist/ was older than the sources: built in ${seconds(Date.now() - buildAt)} s (not counted below)`);
  const started = Date.now();
  await createCluster();
  log(`PostgreSQL with WAL archiving on 127.0.0.1:${port} in ${dir}`);
  receiver = await startReceiver(0);
  service = await startService(serverUrl('payments'));
  for (let i = 0; i < 2; i++) merchants.push(await setupMerchant(service.url, i));

  const load = drive(service.url);
  await sleep(DRIVE_MS.beforeBackup);
  const backupAt = Date.now();
  // Online, under load: the backup's own WAL streams along (-X stream), a manifest is written.
  pgCmd(join(BIN, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-D', base, '-X', 'stream', '-c', 'fast']);
  log(`base backup taken in ${seconds(Date.now() - backupAt)} s under load`);
  await sleep(DRIVE_MS.afterBackup);

  // The point: everything answered before this request was sent committed before the restore
  // point's WAL record, so recovery to it must replay it.
  const pointSentAt = Date.now();
  const [point] = await query<{ lsn: string }>(serverUrl('payments'), `SELECT pg_create_restore_point('drill')::text AS lsn`);
  const pointAt = Date.now();
  log(`restore point 'drill' at ${point!.lsn} (${new Date(pointSentAt).toISOString()})`);
  await sleep(DRIVE_MS.afterPoint);
  await load.stop();

  // The segment holding the point must be in the archive before the disaster: what is not
  // archived yet is what a real loss loses (archive_timeout bounds it, docs/operations.md).
  await query(serverUrl('payments'), 'SELECT pg_switch_wal()');
  await waitFor('the restore point archived', async () => {
    const [r] = await query<{ done: boolean }>(serverUrl('payments'),
      `SELECT last_archived_wal IS NOT NULL AND last_archived_wal >= pg_walfile_name($1::pg_lsn) AS done FROM pg_stat_archiver`, [point!.lsn]);
    return r!.done;
  }, 60_000);

  // The disaster: the service and PostgreSQL die, the data directory is gone.
  await kill(service);
  service = undefined;
  pgStopImmediate();
  const lostAt = Date.now();
  rmSync(data, { recursive: true, force: true });
  log(`data directory destroyed after ${acks.length} acknowledged operations (${failures.length} requests refused)`);

  // The restore: check the backup against its manifest, copy it, replay the archive to the point.
  pgCmd(join(BIN, 'pg_verifybackup'), [base]);
  pgCmd('cp', ['-a', base, data]);
  appendFileSync(join(data, 'postgresql.conf'), [
    `restore_command = 'cp ${archive}/%f %p'`,
    TARGET === 'immediate' ? `recovery_target = 'immediate'` : `recovery_target_name = 'drill'`,
    `recovery_target_action = 'promote'`, '',
  ].join('\n'));
  writeFileSync(join(data, 'recovery.signal'), '');
  giveToPostgres(join(data, 'recovery.signal'));
  pgStart();
  await waitFor('recovery to end', async () => (await query<{ r: boolean }>(serverUrl('postgres'), 'SELECT pg_is_in_recovery() AS r'))[0]!.r === false, 120_000);
  const stopLine = readFileSync(join(dir, 'postgres.log'), 'utf8').split('\n').find((l) => /recovery stopping/.test(l));
  log(`PostgreSQL restored ${seconds(Date.now() - lostAt)} s after the loss: ${stopLine?.replace(/^.*LOG:\s*/, '') ?? 'no recovery stop logged'}`);
  service = await startService(serverUrl('payments'));
  const restoredS = (Date.now() - lostAt) / 1000;
  log(`the service answers on the restored database ${seconds(Date.now() - lostAt)} s after the loss`);

  // Before the point: required, once. Sent after it: must be absent. Answered in between: either.
  const before = acks.filter((a) => a.ackedAt < pointSentAt);
  const after = acks.filter((a) => a.sentAt > pointAt);
  const between = acks.filter((a) => a.ackedAt >= pointSentAt && a.sentAt <= pointAt);
  const dbUrl = serverUrl('payments');
  const rows = await rowsPerId(dbUrl, acks);
  const problems: string[] = [];
  let found = 0;
  for (const a of before) {
    const n = rows.get(a.id) ?? 0;
    const wrong = await apiProblem(service.url, a);
    if (n === 1 && !wrong) found++;
    else problems.push(`${a.kind} ${a.id} acknowledged ${new Date(a.ackedAt).toISOString()}: ${n} rows, ${wrong ?? 'the API answers it'}`);
  }
  const afterPresent = after.filter((a) => rows.has(a.id));
  for (const a of afterPresent) problems.push(`${a.kind} ${a.id} sent after the point is in the restored database`);
  const betweenPresent = between.filter((a) => rows.has(a.id)).length;

  const verify = await admin(service.url, 'GET', '/ledger/verify');
  const balanced = verify.status === 200 && verify.json?.ok === true;
  if (!balanced) problems.push(`ledger verify: ${verify.status} ${JSON.stringify(verify.json).slice(0, 500)}`);
  const invariants = await checkInvariants(dbUrl, { requireDelivered: false });
  problems.push(...invariants);

  const byKind = (list: Ack[]) => Object.fromEntries((Object.keys(TABLE) as Kind[]).map((k) => [k, list.filter((a) => a.kind === k).length]));
  log(`acknowledged before the point: ${JSON.stringify(byKind(before))}; after it (absent as they must be): ${after.length - afterPresent.length} of ${after.length}; answered while the point was noted: ${betweenPresent} of ${between.length} present`);
  mkdirSync('test/artifacts', { recursive: true });
  writeFileSync('test/artifacts/restore-drill.json', `${JSON.stringify({
    at: new Date().toISOString(), target: TARGET, point: { name: 'drill', lsn: point!.lsn, sentAt: new Date(pointSentAt).toISOString(), answeredAt: new Date(pointAt).toISOString() },
    restoredS, totalS: (Date.now() - started) / 1000, failures, problems,
    acks: acks.map((a) => ({ ...a, sentAt: new Date(a.sentAt).toISOString(), ackedAt: new Date(a.ackedAt).toISOString(),
      relative: a.ackedAt < pointSentAt ? 'before' : a.sentAt > pointAt ? 'after' : 'between', present: rows.has(a.id) })),
  }, null, 2)}\n`);
  for (const p of problems.slice(0, 20)) log(`PROBLEM ${p}`);
  if (problems.length > 20) log(`... ${problems.length - 20} more problems (test/artifacts/restore-drill.json)`);
  log(`whole drill ${seconds(Date.now() - started)} s`);
  const passed = problems.length === 0 && before.length > 0 && found === before.length;
  console.log(passed
    ? `restore drill: acked ${before.length}, found ${found}, ledger balanced, restored in ${restoredS.toFixed(1)} s`
    : `restore drill: FAILED: acked ${before.length}, found ${found}, ledger ${balanced ? 'balanced' : 'NOT balanced'}, ${problems.length} problems`);
  return passed ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (e) {
  console.error(e);
  console.log(`restore drill: FAILED: ${(e as Error).message.split('\n')[0]}`);
} finally {
  await cleanup();
}
process.exit(code);
