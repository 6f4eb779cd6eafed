import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { ADMIN_TOKEN, TEST_KEY, setupTestApp, type TestApp } from '../helpers/app.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { balance, card, fund, payoutMerchant, regular } from '../payout/helpers.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { grantedMerchant, refundPartial } from '../refund/helpers.js';
import { waitFor } from '../helpers/wait.js';

/**
 * kill -9 between the provider and our commit (issue 14 "Done when"): a real payout worker
 * process sends a payout to the YooKassa emulator (a real HTTP server on 127.0.0.1), which
 * applies it and holds its answer; the process is killed with SIGKILL while it waits, before
 * anything of the answer is committed. A restarted worker reconciles it: the payout ends
 * SUCCESS, the merchant is debited once, the ledger verifies, exactly one payout webhook is
 * written, and the provider paid once. The same for a refund, with the sandbox applying it
 * (recorded in sandbox_operations) and never answering. The kill and the restart are each a hook
 * of their describe (a cold start each, docs/adr/0139-slow-starts-wait-in-hooks.md); the tests read
 * what they left.
 */
let t: TestApp;
let emu: YooKassaEmulator;
const children = new Set<ChildProcess>();
beforeAll(async () => {
  t = await setupTestApp();
  // A gateway that takes card numbers (its owner PCI DSS certified): the payout names the card by number.
  emu = await YooKassaEmulator.start({ payoutSettleMs: 0, payoutPciDss: true });
  // The worker process puts `yk-emu` in its registry (payout-kill.child.ts); as every connector,
  // it is a row too, which gives it its clearing accounts (the ledger's legs must name them).
  await t.db.pool.query(`INSERT INTO connectors (name, kind, mode) VALUES ('yk-emu', 'yookassa', 'test')`);
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await emu.stop();
  await t.close();
});

/**
 * Starts a worker process (test/reliability/payout-kill.child.ts; payouts unless CHILD_WORKER=refund) and waits until it is up,
 * bounded under a hook's 60 s with the wait that follows it.
 */
async function startWorker(extra: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/reliability/payout-kill.child.ts'], {
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: t.dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, PAYMENTS_PROFILE: 'sandbox',
      LOG_LEVEL: 'error', LOG_FORMAT: 'json', EMU_URL: emu.apiUrl, EMU_AGENT_ID: emu.payoutAgentId, EMU_KEY: emu.payoutSecretKey,
      // Long enough that the held answer is still awaited when the process is killed; a short
      // lease, so the restarted worker takes the payout over soon after.
      CONNECTOR_TIMEOUT_MS: '120000', WORKER_LEASE_MS: '2000', SANDBOX_PROCESSING_DELAY_MS: '0', ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  await waitFor(() => out.includes('worker up') || child.exitCode !== null, 'the worker up (or its exit)', 40_000, 50);
  if (child.exitCode !== null) throw new Error(`worker exited: ${out}`);
  return child;
}


const one = async (sql: string, v: unknown[]) => (await t.db.pool.query(sql, v)).rows[0];

/** SIGKILLs a child and returns the signal it died of ('still running' if it did not within 2 s). */
async function killHard(child: ChildProcess): Promise<string | null> {
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_c, s) => resolve(s)));
  child.kill('SIGKILL');
  return Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 2_000))]);
}

const ran = <T>(v: T | undefined, what: string): T => { if (v === undefined) throw new Error(`${what} did not run (see the hooks)`); return v; };

describe('a payout worker killed with SIGKILL after the provider applied the payout, before our commit', () => {
  let m: Awaited<ReturnType<typeof payoutMerchant>>;
  let id: string;
  let killed: { signal: string | null; left: Record<string, unknown>; debits: number; applied: { id: string; status: string } } | undefined;
  let reconciled = false;

  beforeAll(async () => {
    m = await payoutMerchant(t, { payoutWebhookUrl: 'http://127.0.0.1:9/hook' });
    await fund(t, m.merchantId, '1000');
    await t.db.pool.query(`UPDATE merchants SET routing = $2::jsonb WHERE id = $1`, [m.merchantId, JSON.stringify({ payout_card: ['yk-emu'] })]);
    const created = await regular(t, m, card('100'));
    if (created.statusCode !== 200) throw new Error(`payout not created: ${created.statusCode} ${created.body}`);
    id = created.json().data[0].id as string;
    await t.db.pool.query(`UPDATE payouts SET process_after = now() - interval '1 second' WHERE id = $1`, [id]);

    // The provider applies the payout and holds its answer.
    emu.misbehave({ op: 'payouts.create', timeoutAfterApply: 'hold', holdMs: 120_000 });
    const first = await startWorker();
    await waitFor(() => emu.payouts.size === 1, 'the provider to apply the payout', 15_000, 50);
    const signal = await killHard(first);
    const [applied] = [...emu.payouts.values()];
    killed = {
      signal, applied: { id: applied!.id, status: applied!.status },
      left: await one(`SELECT status::text, connector, provider_ref, sent_at FROM payouts WHERE id = $1`, [id]),
      debits: (await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYOUT_DEBIT' AND ref_id = $1`, [id])).n,
    };
  });

  beforeAll(async () => {
    if (!killed) return;
    emu.clearMisbehaviour();
    const second = await startWorker();
    await waitFor(async () => (await one(`SELECT status::text FROM payouts WHERE id = $1`, [id])).status !== 'PROCESS', 'reconciliation', 15_000, 50);
    second.kill('SIGKILL');
    reconciled = true;
  });

  it('the provider applied the payout and the worker died before our commit: PROCESS, on record as handed to yk-emu, no answer, no debit', () => {
    const k = ran(killed, 'the kill');
    expect(k.signal).toBe('SIGKILL');
    expect(k.left).toMatchObject({ status: 'PROCESS', connector: 'yk-emu', provider_ref: null });
    expect(k.left.sent_at).not.toBeNull();
    expect(k.debits).toBe(0);
    expect(k.applied.status).toBe('succeeded');
  });

  it('restarted, reconciliation ends the payout SUCCESS: debited once, ledger verified, one webhook, paid once at the provider', async () => {
    const applied = ran(killed, 'the kill').applied;
    expect(reconciled, 'the restarted worker reconciled the payout').toBe(true);
    expect(await one(`SELECT status::text, connector, provider_ref FROM payouts WHERE id = $1`, [id]))
      .toEqual({ status: 'SUCCESS', connector: 'yk-emu', provider_ref: applied.id });
    expect(await balance(t, m.merchantId)).toEqual({ available: '900.00', locked: '0.00', hold: '0.00' });
    expect((await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYOUT_DEBIT' AND ref_id = $1`, [id])).n).toBe(1);
    expect((await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYOUT_RELEASE' AND ref_id = $1`, [id])).n).toBe(0);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
    const verify = await t.app.inject({ method: 'GET', url: '/admin/v1/ledger/verify', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(verify.statusCode).toBe(200);
    expect(verify.json()).toMatchObject({ ok: true });
    expect((await one(`SELECT count(*)::int AS n FROM outbox_events WHERE kind = 'PAYOUT_WEBHOOK' AND aggregate_id = $1`, [id])).n).toBe(1);
    // The provider holds one payout: the repeat under the same Idempotence-Key paid nothing more.
    expect(emu.payouts.size).toBe(1);
  });
});

describe('a refund worker killed with SIGKILL after the sandbox applied the refund, before our commit', () => {
  let id: string;
  let killed: { signal: string | null; left: Record<string, unknown>; debits: number } | undefined;
  let reconciled = false;

  beforeAll(async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const r = await refundPartial(t, m, p.paymentId, '25.00');
    if (r.statusCode !== 200) throw new Error(`refund not created: ${r.statusCode} ${r.body}`);
    id = r.json().id as string;
    await t.db.pool.query(`UPDATE refunds SET process_after = now() - interval '1 second' WHERE id = $1`, [id]);

    const first = await startWorker({ CHILD_WORKER: 'refund', SANDBOX_HANG_AFTER_APPLY: 'true' });
    await waitFor(async () => (await one(`SELECT count(*)::int AS n FROM sandbox_operations WHERE kind = 'refund' AND our_id = $1`, [id])).n === 1,
      'the sandbox to apply the refund', 15_000, 50);
    killed = {
      signal: await killHard(first),
      left: await one(`SELECT status::text, connector, sent_at FROM refunds WHERE id = $1`, [id]),
      debits: (await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'REFUND_DEBIT' AND ref_id = $1`, [id])).n,
    };
  });

  beforeAll(async () => {
    if (!killed) return;
    const second = await startWorker({ CHILD_WORKER: 'refund' });
    await waitFor(async () => (await one(`SELECT status::text FROM refunds WHERE id = $1`, [id])).status !== 'PROCESS', 'reconciliation', 15_000, 50);
    second.kill('SIGKILL');
    reconciled = true;
  });

  it('the sandbox applied the refund and the worker died before our commit: PROCESS, sent, no debit', () => {
    const k = ran(killed, 'the kill');
    expect(k.signal).toBe('SIGKILL');
    expect(k.left).toMatchObject({ status: 'PROCESS', connector: 'sandbox' });
    expect(k.left.sent_at).not.toBeNull();
    expect(k.debits).toBe(0);
  });

  it('restarted, reconciliation asks the sandbox and ends the refund SUCCESS: debited once, one postback, applied once', async () => {
    ran(killed, 'the kill');
    expect(reconciled, 'the restarted worker reconciled the refund').toBe(true);
    expect((await one(`SELECT status::text FROM refunds WHERE id = $1`, [id])).status).toBe('SUCCESS');
    expect((await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'REFUND_DEBIT' AND ref_id = $1`, [id])).n).toBe(1);
    expect((await one(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'REFUND_RELEASE' AND ref_id = $1`, [id])).n).toBe(0);
    expect((await one(`SELECT count(*)::int AS n FROM outbox_events WHERE kind = 'REFUND_POSTBACK' AND aggregate_id = $1`, [id])).n).toBe(1);
    expect((await one(`SELECT count(*)::int AS n FROM sandbox_operations WHERE our_id = $1`, [id])).n).toBe(1);
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });
});
