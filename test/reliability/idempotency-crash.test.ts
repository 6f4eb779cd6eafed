import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { fund } from '../payout/helpers.js';
import { CRASH_ENTRY, kill, startProc, type Proc } from './harness.js';

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
  });
  return { status: r.status, replayed: r.headers.get('idempotent-replayed'), json: await r.json() as Record<string, any> };
}

/** Sends the request to a process that dies after the commit; then retries on a fresh one. */
async function crashThenRetry(path: string, key: string, body: Record<string, unknown>) {
  proc = await startProc('api', t.dbUrl, { CRASH_AT: 'committed' }, undefined, CRASH_ENTRY);
  const dying = proc;
  const exited = new Promise<NodeJS.Signals | null>((resolve) => dying.child.once('exit', (_code, signal) => resolve(signal)));
  await expect(post(dying, path, key, body)).rejects.toThrow();
  expect(await exited).toBe('SIGKILL');
  proc = await startProc('api', t.dbUrl);
  const retry = await post(proc, path, key, body);
  await kill(proc);
  proc = null;
  return retry;
}

const count = async (sql: string, args: unknown[]) => (await t.db.pool.query<{ n: number }>(sql, args)).rows[0]!.n;

describe('Idempotency-Key answers commit with the change (kill -9 between commit and reply)', () => {
  it('refund: the retry answers the refund made before the crash; one refund, one REFUND_LOCK, the balance moved once', async () => {
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    const retry = await crashThenRetry('refund/partial/create', 'crash-refund-1', { payment_id: p.paymentId, amount: '30.00' });
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBe('true');
    const refunds = await t.db.pool.query(`SELECT id FROM refunds WHERE payment_id = $1`, [p.paymentId]);
    expect(refunds.rows.map((r) => r.id)).toEqual([retry.json.id]);
    expect(retry.json).toMatchObject({ entity_id: p.paymentId, amount: 30 });
    expect(await count(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'REFUND_LOCK' AND ref_id = $1`, [retry.json.id])).toBe(1);
    const b = await t.db.pool.query(`SELECT available::text, locked::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchantId]);
    expect(b.rows[0]).toEqual({ available: '70.00000000', locked: '30.00000000' });
  }, 90_000);

  it('payout: the retry answers the payout made before the crash; one payout, locked once', async () => {
    await fund(t, m.merchantId, '500');
    const before = await count(`SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1`, [m.merchantId]);
    const retry = await crashThenRetry('payout/regular/create', 'crash-payout-1', {
      amount: '100', currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN IVANOV',
    });
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBe('true');
    expect(await count(`SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1`, [m.merchantId])).toBe(before + 1);
    expect(await count(`SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'PAYOUT_LOCK' AND ref_id = $1`, [retry.json.data[0].id])).toBe(1);
  }, 90_000);

  it('bill/create: the retry answers the bill made before the crash; one bill', async () => {
    const before = await count(`SELECT count(*)::int AS n FROM bills WHERE merchant_id = $1`, [m.merchantId]);
    const retry = await crashThenRetry('bill/create', 'crash-bill-1', { amount: '12.34', shop_id: m.shopId });
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBe('true');
    expect(await count(`SELECT count(*)::int AS n FROM bills WHERE merchant_id = $1`, [m.merchantId])).toBe(before + 1);
    expect(await count(`SELECT count(*)::int AS n FROM bills WHERE id = $1`, [retry.json.bill_id])).toBe(1);
  }, 90_000);
});
