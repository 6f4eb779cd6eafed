import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances, verifyLedger } from '../../src/domain/ledger/verify.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill } from '../factories/payment.js';
import { CRASH_ENTRY, exitSignal, kill, startProc, type Proc } from './harness.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A process killed (SIGKILL) between the provider's answer and our commit: the payment stays
 * PROCESS with its connector (written when it was opened); after a restart, reconciliation asks
 * the provider and applies its answer exactly once. Nothing fails it blindly. The crash and each
 * restart is a hook of its own (a cold start each, docs/adr/0139-slow-starts-wait-in-hooks.md); the
 * tests read what they left.
 */
let t: TestApp;
let m: MerchantFixture;
const procs: Proc[] = [];
const FAST = { CONNECTOR_TIMEOUT_MS: '500', RECONCILE_FIRST_CHECK_MS: '200', RECONCILE_POLL_MS: '200' };

beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t, { shop: { resultUrl: 'http://127.0.0.1:9/result', successUrl: 'http://127.0.0.1:9/ok' } });
});
afterAll(async () => {
  for (const p of procs) await kill(p);
  await t.close();
});

const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];

describe('kill -9 between the provider answer and our commit', () => {
  let billId: string;
  let crash: { answered: string | null; signal: string | null } | undefined;
  let stuck: { id: string; status: string; connector: string; transfers: number } | undefined;
  let decided: string | undefined;

  beforeAll(async () => {
    billId = await createBill(t, m, { amount: '321.00', orderId: 'crash-1' });
    const dying = await startProc('api', t.dbUrl, { ...FAST, CRASH_AT: 'provider-answered' }, undefined, CRASH_ENTRY);
    procs.push(dying);
    const answered = await fetch(`${dying.url}/pay/${billId}`, {
      method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/39', card_cvc: '123' }),
      signal: AbortSignal.timeout(8_000),
    }).then((r) => `answered ${r.status}`, () => null);
    crash = { answered, signal: await exitSignal(dying.child, 2_000) };
    const p = await one(`SELECT id, status::text, connector FROM payments WHERE bill_id = $1`, [billId]);
    if (p) stuck = { ...p, transfers: (await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [p.id])).n };
  });

  // Two restarted processes with their workers: the payment is asked and applied once.
  beforeAll(async () => {
    if (!stuck) return;
    procs.push(await startProc('api', t.dbUrl, { ...FAST, RUN_WORKERS: 'true' }));
  });
  beforeAll(async () => {
    if (!stuck || procs.length < 2) return;
    procs.push(await startProc('worker', t.dbUrl, FAST));
    decided = await waitFor(async () => { const r = await one(`SELECT status::text FROM payments WHERE id = $1`, [stuck!.id]); return r.status !== 'PROCESS' && r.status; },
      'the stuck payment to be decided', 30_000, 200);
    // Time is the subject: both keep running a while more, and nothing is applied twice.
    await new Promise((r) => setTimeout(r, 1000));
    for (const p of procs.splice(0)) await kill(p);
  });

  it('the sandbox charged 4242 and the process died before committing: the payment stays PROCESS with its connector, nothing posted', () => {
    expect(crash).toEqual({ answered: null, signal: 'SIGKILL' });
    expect(stuck).toMatchObject({ status: 'PROCESS', connector: 'sandbox', transfers: 0 });
  });

  it('the sandbox charged 4242, the process died before committing: after a restart reconciliation makes it SUCCESS, credited once', async () => {
    expect(decided, 'the restarted processes decided the payment').toBe('SUCCESS');
    const id = stuck!.id;
    expect(await one(`SELECT status::text, amount_received::text FROM payments WHERE id = $1`, [id])).toEqual({ status: 'SUCCESS', amount_received: '321.00' });
    expect(await one(`SELECT status::text FROM bills WHERE id = $1`, [billId])).toEqual({ status: 'SUCCESS' });
    expect((await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [id])).n).toBe(1);
    expect((await one(`SELECT count(*)::int AS n FROM outbox_events WHERE aggregate_id = $1`, [id])).n).toBe(1);
    expect(await one(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId])).toEqual({ available: '321.00000000' });
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });
});
