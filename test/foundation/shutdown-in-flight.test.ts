import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent } from '../../src/outbox/events.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { complaints, databaseEnv, killAll, startService, type ServiceProcess } from '../helpers/service-process.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { startReceiver } from '../outbox/receiver.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A clean stop with work in flight (issue 13 item 6): the service is stopped while its outbox
 * worker waits on slow receivers. The workers stop claiming, let the deliveries finish and
 * record them, release their leases, then the pool closes: exit 0, nothing at warn or above
 * (no "cannot release leases", no unhandled rejection).
 */
let t: TestApp;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const arrived: number[] = [];
let m: MerchantFixture;
let svc: ServiceProcess;
// The service's cold start under tsx is a hook's wait (hookTimeout), not the test's: three
// postbacks are queued before it starts, so its outbox worker claims them at its first pass.
beforeAll(async () => {
  t = await setupTestApp();
  receiver = await startReceiver(() => { arrived.push(Date.now()); return { status: 200, body: 'OK', delayMs: 3000 }; });
  m = await createMerchant(t);
  await withPgTx(t.db.pool, async (c) => {
    for (let i = 0; i < 3; i++) {
      const trs = `stop-${i}`;
      await enqueueEvent(c, { merchantId: m.merchantId, kind: 'TEST_POSTBACK', aggregateId: trs, url: receiver.url, fields: { InvId: trs, OutSum: '1.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: trs, Status: 'SUCCESS', custom: '' } });
    }
  });
  svc = await startService(['--import', 'tsx', 'src/entry/main.ts'], databaseEnv(t.dbUrl), { timeoutMs: 50_000 });
});
afterAll(async () => {
  killAll();
  await receiver.close();
  await t.close();
});

describe('a clean stop while deliveries are in flight', () => {
  it('SIGTERM while three postbacks wait on a receiver answering in 3 s: exit 0, nothing logged at warn or above, each recorded DELIVERED once, no lease left', async () => {
    await waitFor(() => arrived.length >= 3, 'the three postbacks arrived (held open at the receiver)', 10_000, 50);
    expect(arrived.length).toBe(3);
    const signalled = Date.now();
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toEqual({ code: 0, signal: null });
    // It waited for the answers (sent ~3 s after they arrived) rather than dropping them.
    expect(Date.now()).toBeGreaterThanOrEqual(Math.max(...arrived) + 2900);
    expect(Date.now() - signalled).toBeLessThan(15_000);
    expect(complaints(svc.lines())).toEqual([]);
    const rows = await t.db.pool.query<{ status: string; lease_owner: string | null; attempts: number; n: number }>(
      `SELECT e.status::text, e.lease_owner, e.attempts, (SELECT count(*)::int FROM delivery_attempts a WHERE a.event_id = e.id AND a.http_status = 200) AS n
         FROM outbox_events e WHERE e.merchant_id = $1`, [m.merchantId]);
    expect(rows.rows).toEqual(Array(3).fill({ status: 'DELIVERED', lease_owner: null, attempts: 1, n: 1 }));
  });
});
