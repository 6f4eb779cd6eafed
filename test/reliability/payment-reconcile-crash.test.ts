import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances, verifyLedger } from '../../src/domain/ledger/verify.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill } from '../factories/payment.js';
import { CRASH_ENTRY, kill, startProc, type Proc } from './harness.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A process killed (SIGKILL) between the provider's answer and our commit: the payment stays
 * PROCESS with its connector (written when it was opened); after a restart, reconciliation asks
 * the provider and applies its answer exactly once (brief P item 5). Nothing fails it blindly.
 */
let t: TestApp;
let m: MerchantFixture;
let proc: Proc | null = null;
const FAST = { CONNECTOR_TIMEOUT_MS: '500', RECONCILE_FIRST_CHECK_MS: '200', RECONCILE_POLL_MS: '200' };

beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t, { shop: { resultUrl: 'http://127.0.0.1:9/result', successUrl: 'http://127.0.0.1:9/ok' } });
});
afterAll(async () => {
  if (proc) await kill(proc);
  await t.close();
});

const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];

describe('kill -9 between the provider answer and our commit', () => {
  it('the sandbox charged 4242, the process died before committing: after a restart reconciliation makes it SUCCESS, credited once', async () => {
    const billId = await createBill(t, m, { amount: '321.00', orderId: 'crash-1' });
    proc = await startProc('api', t.dbUrl, { ...FAST, CRASH_AT: 'provider-answered' }, undefined, CRASH_ENTRY);
    const dying = proc;
    const exited = new Promise<NodeJS.Signals | null>((resolve) => dying.child.once('exit', (_c, signal) => resolve(signal)));
    await expect(fetch(`${dying.url}/pay/${billId}`, {
      method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/39', card_cvc: '123' }),
    })).rejects.toThrow();
    expect(await exited).toBe('SIGKILL');
    proc = null;
    const stuck = await one(`SELECT id, status::text, connector FROM payments WHERE bill_id = $1`, [billId]);
    expect(stuck).toMatchObject({ status: 'PROCESS', connector: 'sandbox' });
    expect((await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [stuck.id])).n).toBe(0);

    // Two restarted processes with their workers: the payment is asked and applied once.
    const a = await startProc('api', t.dbUrl, { ...FAST, RUN_WORKERS: 'true' });
    const b = await startProc('worker', t.dbUrl, FAST);
    try {
      await waitFor(async () => (await one(`SELECT status::text FROM payments WHERE id = $1`, [stuck.id])).status !== 'PROCESS', 'the stuck payment to be decided', 30_000, 200);
      // Time is the subject: both keep running a while more, and nothing is applied twice.
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await kill(a);
      await kill(b);
    }
    expect(await one(`SELECT status::text, amount_received::text FROM payments WHERE id = $1`, [stuck.id])).toEqual({ status: 'SUCCESS', amount_received: '321.00' });
    expect(await one(`SELECT status::text FROM bills WHERE id = $1`, [billId])).toEqual({ status: 'SUCCESS' });
    expect((await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1`, [stuck.id])).n).toBe(1);
    expect((await one(`SELECT count(*)::int AS n FROM outbox_events WHERE aggregate_id = $1`, [stuck.id])).n).toBe(1);
    expect(await one(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId])).toEqual({ available: '321.00000000' });
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  }, 240_000);
});
