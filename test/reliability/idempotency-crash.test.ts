import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { fund } from '../payout/helpers.js';
import { CRASH_ENTRY, exitSignal, kill, startProc, type Proc } from './harness.js';

/**
 * A keyed request whose process is killed (SIGKILL) after its transaction committed and before
 * its answer left: the retry with the same key, on a restarted process, answers what the first
 * request did and moves no money again. The first process is the API built with an observer that
 * kills it at exactly that point (test/helpers/crash-entry.ts, CRASH_AT=committed).
 */
let t: TestApp;
let m: MerchantFixture;
let proc: Proc | null = null;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t, { merchant: { verified: true, grantRefunds: true, grantRegularPayouts: true } });
});
afterAll(async () => {
  if (proc) await kill(proc);
  await t.close();
});

async function post(p: Proc, path: string, key: string, body: Record<string, unknown>) {
  const r = await fetch(`${p.url}/api/v1/${path}`, {
    method: 'POST', headers: { ...m.auth, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body),
    // Bounded so the hook stays under its 60 s with the start (40 s): a process that does not die
    // answers, or is reported still running below.
    signal: AbortSignal.timeout(8_000),
  });
  return { status: r.status, replayed: r.headers.get('idempotent-replayed'), json: await r.json() as Record<string, any> };
}

type Answer = Awaited<ReturnType<typeof post>>;

/**
 * One case in two hooks of its describe, a cold start each (docs/adr/0139-slow-starts-wait-in-hooks.md):
 * the request sent to a process that dies after the commit, then the same request with the same
 * key to a fresh process. The tests read what the hooks left.
 */
function crashThenRetry(path: string, key: string, prepare: () => Promise<Record<string, unknown>>) {
  const left: { body?: Record<string, unknown>; crash?: { answered: string | null; signal: string | null }; retry?: Answer } = {};
  beforeAll(async () => {
    left.body = await prepare();
    proc = await startProc('api', t.dbUrl, { CRASH_AT: 'committed' }, undefined, CRASH_ENTRY);
    const dying = proc;
    const answered = await post(dying, path, key, left.body).then((r) => `answered ${r.status}`, () => null);
    left.crash = { answered, signal: await exitSignal(dying.child, 2_000) };
    proc = null;
  });
  beforeAll(async () => {
    if (!left.crash) return;
    proc = await startProc('api', t.dbUrl);
    left.retry = await post(proc, path, key, left.body!);
    await kill(proc);
    proc = null;
  });
  return {
    crash: () => left.crash ?? fail('the crashing request did not run (see the first hook)'),
    retry: () => left.retry ?? fail('the retry did not run (see the hooks)'),
  };
}

const fail = (why: string): never => { throw new Error(why); };

const count = async (sql: string, args: unknown[]) => (await t.db.pool.query<{ n: number }>(sql, args)).rows[0]!.n;

const diedAfterCommit = (run: ReturnType<typeof crashThenRetry>) => () => {
  expect(run.crash()).toEqual({ answered: null, signal: 'SIGKILL' });
};

describe('Idempotency-Key answers commit with the change (kill -9 between commit and reply)', () => {
  describe('refund', () => {
    let paymentId: string;
    const run = crashThenRetry('refund/partial/create', 'crash-refund-1', async () => {
      paymentId = (await createPaidPayment(t, m, { amount: '100.00' })).paymentId;
      return { payment_id: paymentId, amount: '30.00' };
    });
    it('the first process is killed after its commit, before it answers', diedAfterCommit(run));
    it('refund: the retry answers the refund made before the crash; one refund, one REFUND_LOCK, the balance moved once', async () => {
      const retry = run.retry();
      expect(retry.status).toBe(200);
      expect(retry.replayed).toBe('true');
      const refunds = await t.db.pool.query(`SELECT id FROM refunds WHERE payment_id = $1`, [paymentId]);
      expect(refunds.rows.map((r) => r.id)).toEqual([retry.json.id]);
      expect(retry.json).toMatchObject({ entity_id: paymentId, amount: 30 });
      expect(await count(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'REFUND_LOCK' AND ref_id = $1`, [retry.json.id])).toBe(1);
      const b = await t.db.pool.query(`SELECT available::text, locked::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId]);
      expect(b.rows[0]).toEqual({ available: '70.00000000', locked: '30.00000000' });
    });
  });

  describe('payout', () => {
    let before: number;
    const run = crashThenRetry('payout/regular/create', 'crash-payout-1', async () => {
      await fund(t, m.merchantId, '500');
      before = await count(`SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1`, [m.merchantId]);
      return { amount: '100', currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN IVANOV' };
    });
    it('the first process is killed after its commit, before it answers', diedAfterCommit(run));
    it('payout: the retry answers the payout made before the crash; one payout, locked once', async () => {
      const retry = run.retry();
      expect(retry.status).toBe(200);
      expect(retry.replayed).toBe('true');
      expect(await count(`SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1`, [m.merchantId])).toBe(before + 1);
      expect(await count(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYOUT_LOCK' AND ref_id = $1`, [retry.json.data[0].id])).toBe(1);
    });
  });

  describe('bill/create', () => {
    let before: number;
    const run = crashThenRetry('bill/create', 'crash-bill-1', async () => {
      before = await count(`SELECT count(*)::int AS n FROM bills WHERE merchant_id = $1`, [m.merchantId]);
      return { amount: '12.34', shop_id: m.shopId };
    });
    it('the first process is killed after its commit, before it answers', diedAfterCommit(run));
    it('bill/create: the retry answers the bill made before the crash; one bill', async () => {
      const retry = run.retry();
      expect(retry.status).toBe(200);
      expect(retry.replayed).toBe('true');
      expect(await count(`SELECT count(*)::int AS n FROM bills WHERE merchant_id = $1`, [m.merchantId])).toBe(before + 1);
      expect(await count(`SELECT count(*)::int AS n FROM bills WHERE id = $1`, [retry.json.bill_id])).toBe(1);
    });
  });
});
