import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent, paymentSignature } from '../../src/outbox/events.js';
import { ADMIN_TOKEN, setupTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { startReceiver, waitFor, type Receiver } from './receiver.js';

let t: TestApp;
let m: MerchantFixture;
let rx: Receiver;
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  rx = await startReceiver();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await rx.close();
  await t.close();
});
beforeEach(async () => {
  await t.db.pool.query(`UPDATE outbox_events SET status = 'DEAD' WHERE status = 'PENDING'`);
  rx.received.length = 0;
});

/** Spawns a real worker process on this test's database; resolves once it runs. */
async function spawnWorker(id: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const c = spawn(process.execPath, ['--import', 'tsx', 'test/outbox/worker-child.ts'], {
    env: {
      ...process.env, DATABASE_URL: t.dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, PAYMENTS_PROFILE: 'sandbox',
      ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WORKER_ID: id, ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(c);
  let out = '';
  c.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  await waitFor(() => out.includes('ready') || c.exitCode !== null, 30_000);
  if (c.exitCode !== null) throw new Error(`worker ${id} exited ${c.exitCode}`);
  return c;
}

const exited = (c: ChildProcess) => new Promise<void>((resolve) => {
  if (c.exitCode !== null || c.signalCode !== null) resolve(); else c.once('exit', () => resolve());
});

async function enqueueMany(n: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  await withPgTx(t.db.pool, async (c) => {
    for (let i = 0; i < n; i++) {
      const trs = `${prefix}-${i}`;
      await enqueueEvent(c, {
        merchantId: m.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: trs, url: `${rx.url}/hook`,
        fields: { InvId: `o-${i}`, OutSum: `${i + 1}.00`, Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: trs, Status: 'SUCCESS', custom: '' },
      });
      ids.push(trs);
    }
  });
  return ids;
}

async function statusCounts(prefix: string) {
  const r = await t.db.pool.query(
    `SELECT status::text AS status, count(*)::int AS n, max(attempts)::int AS max_attempts, count(lease_owner)::int AS leased
       FROM outbox_events WHERE aggregate_id LIKE $1 GROUP BY 1`,
    [`${prefix}-%`],
  );
  return Object.fromEntries(r.rows.map((x) => [x.status, x])) as Record<string, { n: number; max_attempts: number; leased: number }>;
}

describe('outbox workers as real processes', () => {
  it('two workers, a receiver failing 30% at random: every event delivered, never by two at once, attempts bounded', async () => {
    const n = 300;
    await enqueueMany(n, 'mix');
    rx.setMode(() => (Math.random() < 0.3 ? (Math.random() < 0.5 ? 'fail500' : 'drop') : { status: 200, body: 'OK', delayMs: 5 }));
    const env = { RETRY_DELAYS_MS: '50,100,200,400,800,800,800,800,800,800', LEASE_MS: '10000', TIMEOUT_MS: '2000' };
    const [a, b] = await Promise.all([spawnWorker('proc-a', env), spawnWorker('proc-b', env)]);
    await waitFor(async () => (await statusCounts('mix')).DELIVERED?.n === n, 60_000, 200);
    a.kill('SIGTERM');
    b.kill('SIGTERM');
    await Promise.all([exited(a), exited(b)]);
    const counts = await statusCounts('mix');
    expect(counts.DELIVERED!.n).toBe(n);
    expect(counts.DELIVERED!.leased).toBe(0);
    expect(counts.DELIVERED!.max_attempts).toBeLessThanOrEqual(11);
    // Every event reached the receiver, correctly signed; none was being sent by two workers at once.
    const trs = new Set(rx.received.map((r) => r.fields.TrsId));
    expect(trs.size).toBe(n);
    for (const r of rx.received) {
      expect(r.fields.SignatureValue).toBe(paymentSignature({ OutSum: r.fields.OutSum!, InvId: r.fields.InvId! }, m.token));
    }
    expect(rx.overlaps).toBe(0);
    // Every attempt made is recorded (one delivery_attempts row per request received).
    const owners = await t.db.pool.query(
      `SELECT count(*)::int AS n FROM delivery_attempts a JOIN outbox_events e ON e.id = a.event_id WHERE e.aggregate_id LIKE 'mix-%'`,
    );
    expect(owners.rows[0].n).toBe(rx.received.length);
    const successes = rx.received.length - (await t.db.pool.query(
      `SELECT count(*)::int AS n FROM delivery_attempts a JOIN outbox_events e ON e.id = a.event_id
        WHERE e.aggregate_id LIKE 'mix-%' AND (a.http_status IS NULL OR a.http_status >= 300)`,
    )).rows[0].n;
    expect(successes).toBe(n); // each event delivered exactly once here: no duplicate after a success
  });

  it('a worker killed with SIGKILL mid-delivery: another delivers its events after the lease expires', async () => {
    const n = 5;
    await enqueueMany(n, 'kill');
    // The receiver holds every request open: the first worker is mid-delivery when it dies.
    rx.setMode(() => 'timeout');
    const victim = await spawnWorker('victim', { LEASE_MS: '10000', TIMEOUT_MS: '30000' });
    await waitFor(() => rx.received.length === n, 20_000);
    const leased = await t.db.pool.query(`SELECT lease_owner, lease_until FROM outbox_events WHERE aggregate_id LIKE 'kill-%'`);
    expect(leased.rows.every((r) => r.lease_owner === 'victim')).toBe(true);
    const leaseEnd = Math.max(...leased.rows.map((r) => (r.lease_until as Date).getTime()));
    // The rescuer runs (and polls) while the victim's leases are still valid: it must wait them out.
    rx.setMode(() => 'ok');
    const rescuer = await spawnWorker('rescuer', { LEASE_MS: '5000', TIMEOUT_MS: '1000' });
    expect(Date.now()).toBeLessThan(leaseEnd);
    expect(rx.received).toHaveLength(n);
    victim.kill('SIGKILL');
    await exited(victim);
    await waitFor(async () => (await statusCounts('kill')).DELIVERED?.n === n, 20_000, 100);
    rescuer.kill('SIGTERM');
    await exited(rescuer);
    const second = rx.received.slice(n);
    expect(new Set(second.map((r) => r.fields.TrsId)).size).toBe(n);
    // Not taken over before the victim's lease ran out.
    expect(Math.min(...second.map((r) => r.at))).toBeGreaterThanOrEqual(leaseEnd - 50);
    const counts = await statusCounts('kill');
    expect(counts.DELIVERED).toMatchObject({ n, leased: 0, max_attempts: 1 });
  });

  it('SIGTERM: a stopping worker finishes what it holds and releases its leases', async () => {
    const n = 40;
    await enqueueMany(n, 'term');
    rx.setMode(() => ({ status: 200, body: 'OK', delayMs: 300 }));
    const w = await spawnWorker('stopper', { CONCURRENCY: '8', LEASE_MS: '60000' });
    await waitFor(() => rx.received.length >= 8, 20_000);
    w.kill('SIGTERM');
    await exited(w);
    expect(w.exitCode).toBe(0);
    const counts = await statusCounts('term');
    const delivered = counts.DELIVERED?.n ?? 0;
    // Whatever it sent is recorded delivered; the rest is free for the next worker (no lease held).
    expect(delivered).toBe(rx.received.length);
    expect(counts.PENDING?.leased ?? 0).toBe(0);
    expect(delivered + (counts.PENDING?.n ?? 0)).toBe(n);
  });
});
